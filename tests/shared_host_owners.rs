//! Shared hosts, real Docker engine: objects carry their owner; `cleanup`, `down` and the sweep
//! remove only those of a dead owner on this host; every lab command waits for the host lock.
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perflab::docker::{self, Docker, LABEL_RUN};
use perflab::owner::Owner;

fn perflab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// Labels of a run owned by `owner` (as perflab writes them).
fn labels(run: &str, owner: &Owner) -> BTreeMap<String, String> {
    let mut l = docker::labels(run, "demo", "network");
    l.extend(owner.labels());
    l
}

/// A process of this host that is alive until dropped, as an owner.
struct LiveOwner(std::process::Child);

impl LiveOwner {
    fn start() -> LiveOwner {
        LiveOwner(Command::new("sleep").arg("300").spawn().unwrap())
    }

    fn owner(&self) -> Owner {
        let pid = self.0.id();
        Owner {
            pid,
            start: perflab::owner::proc_state(pid).unwrap().start,
            ..Owner::me().clone()
        }
    }
}

impl Drop for LiveOwner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An owner on this host whose process is gone (started, killed and reaped).
fn dead_owner() -> Owner {
    let live = LiveOwner::start();
    let o = live.owner();
    drop(live);
    o
}

/// A network and a volume of run `run` owned by `owner`.
async fn make_run(d: &Docker, run: &str, owner: &Owner) {
    let l = labels(run, owner);
    d.create_network(&format!("perflab-{run}-net"), &l)
        .await
        .unwrap();
    d.create_volume(&format!("perflab-{run}-vol"), &l)
        .await
        .unwrap();
}

async fn objects_of(d: &Docker, run: &str) -> usize {
    d.list_labelled(&[format!("{LABEL_RUN}={run}")])
        .await
        .unwrap()
        .len()
}

fn cleanup(run: &str) -> (bool, String) {
    let out = perflab()
        .args(["cleanup", "--run", run])
        .env("PERFLAB_LOCK", lock_file())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A private lock file: these tests must not wait for other agents' runs.
fn lock_file() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("perflab-shared-host-{}.lock", std::process::id()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cleanup_and_the_sweep_leave_live_and_other_hosts_runs() {
    let d = Docker::connect().await.unwrap();
    let tag = perflab::docker::random_token(6);
    let live = LiveOwner::start();
    let other = Owner {
        host: "another-workshop-box".into(),
        ..dead_owner()
    };
    let (run_live, run_dead, run_other) = (
        format!("run-shtest-live-{tag}"),
        format!("run-shtest-dead-{tag}"),
        format!("run-shtest-other-{tag}"),
    );
    make_run(&d, &run_live, &live.owner()).await;
    make_run(&d, &run_dead, &dead_owner()).await;
    make_run(&d, &run_other, &other).await;

    // The user's cleanup: the dead owner's objects go, the live one's and the other host's stay.
    let (ok, err) = cleanup(&run_live);
    assert!(ok, "{err}");
    assert_eq!(objects_of(&d, &run_live).await, 2, "{err}");
    assert!(err.contains("is still running"), "{err}");
    let (ok, err) = cleanup(&run_other);
    assert!(ok, "{err}");
    assert_eq!(objects_of(&d, &run_other).await, 2, "{err}");
    assert!(
        err.contains("another host")
            && err.contains(&format!("docker volume rm perflab-{run_other}-vol")),
        "{err}"
    );
    let (ok, err) = cleanup(&run_dead);
    assert!(ok, "{err}");
    assert_eq!(objects_of(&d, &run_dead).await, 0, "{err}");

    // The sweep before a run (here on the engine as a load generator's): same rule. It runs
    // under the host lock, as in `perflab run`: without it an older perflab's live run (no
    // owner labels) on this engine would count as a leftover.
    make_run(&d, &run_dead, &dead_owner()).await;
    let lock = tokio::task::spawn_blocking(|| {
        let path = perflab::lock::lock_path();
        perflab::lock::acquire(
            &path,
            "shared_host_owners",
            perflab::lock::Wait::Block,
            |_| {},
        )
    })
    .await
    .unwrap()
    .unwrap();
    let swept = perflab::session::sweep::sweep_engine(&d, &Default::default())
        .await
        .unwrap();
    drop(lock);
    assert!(swept.removed_runs.contains(&run_dead), "{swept:?}");
    assert!(!swept.removed_runs.contains(&run_live), "{swept:?}");
    assert!(!swept.removed_runs.contains(&run_other), "{swept:?}");
    assert!(
        swept.left.iter().any(|l| l.contains(&run_other)),
        "the other host's run is listed: {swept:?}"
    );
    assert_eq!(objects_of(&d, &run_live).await, 2);
    assert_eq!(objects_of(&d, &run_other).await, 2);

    // Once its owner is gone, the live run is a leftover too.
    let live_owner = live.owner();
    drop(live);
    assert!(matches!(
        live_owner.liveness(),
        perflab::owner::Liveness::Dead(_)
    ));
    let (ok, err) = cleanup(&run_live);
    assert!(ok, "{err}");
    assert_eq!(objects_of(&d, &run_live).await, 0, "{err}");
    for r in [&run_other] {
        perflab::session::sweep::remove_run(&d, r).await.unwrap();
    }
}

#[test]
fn cleanup_and_down_wait_for_the_host_lock() {
    let lock = lock_file().with_extension("held");
    let held = perflab::lock::acquire(&lock, "a measurement", perflab::lock::Wait::NoWait, |_| {})
        .unwrap();
    // `down` of a stack that does not exist says so before it would wait (the first real
    // problem); `cleanup` waits.
    let mut down = perflab()
        .args(["down", "up-shtest-none"])
        .env("PERFLAB_LOCK", &lock)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    if down.try_wait().unwrap().is_none() {
        unsafe { libc::kill(down.id() as i32, libc::SIGINT) };
        panic!(
            "`perflab down up-shtest-none` waited for the lock instead of naming the unknown stack"
        );
    }
    let out = down.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("up-shtest-none") && !err.contains("waiting for"),
        "{err}"
    );
    for args in [&["cleanup", "--run", "run-shtest-none"][..]] {
        let mut child = perflab()
            .args(args)
            .env("PERFLAB_LOCK", &lock)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            child.try_wait().unwrap().is_none(),
            "`perflab {}` did not wait for the lock",
            args.join(" ")
        );
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let t0 = Instant::now();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert!(err.contains("waiting for a measurement"), "{err}");
        assert!(!out.status.success(), "{err}");
    }
    drop(held);
    let _ = std::fs::remove_file(&lock);
}
