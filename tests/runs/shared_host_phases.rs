//! Shared hosts, end to end on the real engine: a default run publishes no host port (checked
//! on the engine while it measures), and Ctrl-C at every phase (image build, stack up, warm-up,
//! generators, alignment wait, measuring, collect) stops it within seconds, leaves no container,
//! network or volume, and records `aborted` with the phase named, partial data kept.
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

fn perflab() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn docker_lines(args: &[&str]) -> Vec<String> {
    let out = Command::new("docker").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Containers, networks and volumes carrying `perflab.run=<run_id>`.
fn leftovers(run_id: &str) -> Vec<String> {
    let filter = format!("label=perflab.run={run_id}");
    let mut v = docker_lines(&["ps", "-aq", "--filter", &filter]);
    v.extend(docker_lines(&["network", "ls", "-q", "--filter", &filter]));
    v.extend(docker_lines(&["volume", "ls", "-q", "--filter", &filter]));
    v
}

/// Every container of `run_id` as `name ports` (`docker ps` shows a published port as `->`).
fn ports_of(run_id: &str) -> Vec<String> {
    let filter = format!("label=perflab.run={run_id}");
    docker_lines(&[
        "ps",
        "--filter",
        &filter,
        "--format",
        "{{.Names}} {{.Ports}}",
    ])
}

fn json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap()
}

/// A child's stderr, line by line, on a channel (and kept whole).
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for l in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

/// Wait for a stderr line containing `needle` (the lines so far are appended to `seen`).
fn wait_line(rx: &mpsc::Receiver<String>, needle: &str, seen: &mut String, limit: Duration) {
    let t0 = Instant::now();
    loop {
        let left = limit.saturating_sub(t0.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) => {
                seen.push_str(&l);
                seen.push('\n');
                if l.contains(needle) {
                    return;
                }
            }
            Err(_) => panic!("no `{needle}` on stderr within {limit:?}:\n{seen}"),
        }
    }
}

/// SIGINT to `child`; returns its exit code and how long it took to exit.
fn interrupt(child: &mut std::process::Child) -> (Option<i32>, Duration) {
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t0 = Instant::now();
    let st = child.wait().unwrap();
    (st.code(), t0.elapsed())
}

/// `perflab run demo-open --quick` (two 5 s steps), stopped by SIGINT once it enters `phase`.
/// Checks what every interrupted run must show; returns the run directory's manifest.
fn interrupted_run(phase: &str, align: bool, during: impl FnOnce(&Path)) -> Value {
    let out = tempfile::tempdir().unwrap();
    let mut cmd = perflab();
    cmd.args([
        "run",
        "demo-open",
        "--quick",
        "--set",
        "steps=100,200",
        "--out",
    ])
    .arg(out.path())
    .env("PERFLAB_LOG", "perflab=debug")
    .stderr(Stdio::piped())
    .stdout(Stdio::null());
    if !align {
        cmd.arg("--no-align");
    }
    let mut child = cmd.spawn().unwrap();
    let rx = lines_of(&mut child);
    let mut seen = String::new();
    // Other runs on this host hold the lock for minutes at most.
    wait_line(
        &rx,
        &format!("phase {phase} "),
        &mut seen,
        Duration::from_secs(1200),
    );
    let dir = out.path().join("demo-open/latest");
    let looked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| during(&dir)));
    let (code, took) = interrupt(&mut child);
    if let Err(p) = looked {
        std::panic::resume_unwind(p);
    }
    while let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
        seen.push_str(&l);
        seen.push('\n');
    }
    assert_eq!(code, Some(130), "interrupted in {phase}:\n{seen}");
    assert!(
        took < Duration::from_secs(30),
        "{phase}: {took:?} to stop\n{seen}"
    );
    let status = json(&dir.join("status.json"));
    assert_eq!(status["state"], "aborted", "{phase}: {status}\n{seen}");
    assert_eq!(status["phase"], phase, "{status}\n{seen}");
    assert!(
        status["reason"]
            .as_str()
            .unwrap()
            .contains(&format!("interrupted by SIGINT during {phase}")),
        "{status}"
    );
    let manifest = json(&dir.join("manifest.json"));
    let run_id = manifest["measurements"]["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        leftovers(&run_id).is_empty(),
        "{phase}: left {:?}",
        leftovers(&run_id)
    );
    // The phases it went through are recorded (partial data kept).
    let phases: Vec<&str> = manifest["measurements"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert!(phases.contains(&phase), "{phase}: {phases:?}");
    eprintln!("{phase}: SIGINT -> exit 130 in {took:?}");
    manifest
}

/// A copy of the recipes whose nginx image ends with a long step (a new tag: rebuilt, the
/// steps before it cached).
fn slow_recipes(token: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for d in ["images", "labs", "experiments"] {
        let st = Command::new("cp")
            .arg("-a")
            .arg(here.join(d))
            .arg(root.path())
            .status()
            .unwrap();
        assert!(st.success());
    }
    let df = root.path().join("images/nginx/Dockerfile");
    let mut text = std::fs::read_to_string(&df).unwrap();
    text.push_str(&format!("RUN echo {token} && sleep 120\n"));
    std::fs::write(&df, text).unwrap();
    root
}

/// Containers (any state) whose command holds `token`.
fn containers_running(token: &str) -> Vec<String> {
    docker_lines(&["ps", "-a", "--no-trunc", "--format", "{{.ID}} {{.Command}}"])
        .into_iter()
        .filter(|l| l.contains(token))
        .collect()
}

#[test]
fn ctrl_c_stops_an_image_build_within_2_s_and_removes_its_container() {
    let _serial = crate::serial();
    let token = format!("shtest-{}", perflab::docker::random_token(8));
    let root = slow_recipes(&token);
    let out = tempfile::tempdir().unwrap();
    for cmd in [
        vec!["build".to_string()],
        vec![
            "run".into(),
            "demo-open".into(),
            "--quick".into(),
            "--out".into(),
            out.path().display().to_string(),
        ],
    ] {
        let mut child = perflab()
            .args(&cmd)
            .current_dir(root.path())
            .env("PERFLAB_ROOT", root.path())
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let rx = lines_of(&mut child);
        let mut seen = String::new();
        wait_line(
            &rx,
            &format!("RUN echo {token}"),
            &mut seen,
            Duration::from_secs(600),
        );
        // The step's container is running `sleep`.
        let t0 = Instant::now();
        while containers_running(&token).is_empty() {
            assert!(
                t0.elapsed() < Duration::from_secs(20),
                "no build container:\n{seen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let (code, took) = interrupt(&mut child);
        while let Ok(l) = rx.recv_timeout(Duration::from_millis(200)) {
            seen.push_str(&l);
            seen.push('\n');
        }
        assert_eq!(code, Some(130), "perflab {cmd:?}:\n{seen}");
        assert!(
            took < Duration::from_secs(2),
            "{cmd:?}: {took:?} to stop\n{seen}"
        );
        assert!(
            containers_running(&token).is_empty(),
            "{cmd:?}: the build's container is left: {:?}",
            containers_running(&token)
        );
        eprintln!(
            "perflab {}: SIGINT during the build -> exit 130 in {took:?}",
            cmd[0]
        );
    }
    // Nothing was started by the run: no run directory.
    assert!(!out.path().join("demo-open").exists());
}

/// Docker runs whose figures nothing here judges (lifecycle, interrupts, bookkeeping):
/// `scripts/test.sh` runs them beside the offline tests (docs/ci-time.md).
mod bookkeeping {
    use super::*;

    #[test]
    fn interrupts_at_every_phase_of_a_run_leave_nothing() {
        let _serial = crate::serial();
        for phase in ["stack-up", "warm-up", "generators-ready"] {
            interrupted_run(phase, false, |_| {});
        }
        // The aligned start waits for the next minute: interrupted in that wait.
        interrupted_run("aligned-start", true, |_| {
            std::thread::sleep(Duration::from_millis(500))
        });
        let m = interrupted_run("collect", false, |_| {});
        assert!(
            m["measurements"]["k6_command"].is_string(),
            "the load's record is kept"
        );
    }

    #[test]
    fn a_default_run_publishes_no_port_and_stops_cleanly_while_measuring() {
        let _serial = crate::serial();
        let mut checked = Vec::new();
        let m = interrupted_run("measure", false, |dir| {
            let m = json(&dir.join("manifest.json"));
            let run_id = m["measurements"]["run_id"].as_str().unwrap().to_owned();
            // Let k6 run, then look at every container of the run on the engine.
            std::thread::sleep(Duration::from_secs(3));
            checked = ports_of(&run_id);
        });
        assert!(
            checked.iter().any(|c| c.contains("-k6 "))
                && checked.iter().any(|c| c.contains("-app ")),
            "the stack and k6 were running: {checked:?}"
        );
        for c in &checked {
            assert!(
                !c.contains("->"),
                "a published port: {c} (all: {checked:?})"
            );
        }
        let entry = &m["measurements"]["placement"]["published_entry"];
        assert_eq!(entry["published"], false, "{entry}");
        let k6 = m.to_string();
        assert!(!k6.contains("published on 127.0.0.1"), "no fallback caveat");
    }
}
