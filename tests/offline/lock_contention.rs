//! Host lock contention between real processes (`perflab lock-hold`, hidden debug command),
//! and `perflab status` naming the holder and the queue.
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn hold(lock: &std::path::Path, exp: &str, seconds: f64, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.args([
        "lock-hold",
        "--experiment",
        exp,
        "--seconds",
        &seconds.to_string(),
    ])
    .args(extra)
    .env("PERFLAB_LOCK", lock)
    .env("NO_COLOR", "1");
    c
}

/// Spawn a holder and wait until it reports the lock taken; returns the child and its stdout reader.
fn spawn_holder(
    lock: &std::path::Path,
    exp: &str,
    seconds: f64,
) -> (Child, BufReader<std::process::ChildStdout>) {
    spawn_holder_with(lock, exp, seconds, &[])
}

/// [`spawn_holder`] with more `lock-hold` flags.
fn spawn_holder_with(
    lock: &std::path::Path,
    exp: &str,
    seconds: f64,
    extra: &[&str],
) -> (Child, BufReader<std::process::ChildStdout>) {
    let mut child = hold(lock, exp, seconds, extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(
        line.starts_with(&format!("locked pid {}", child.id())),
        "holder said {line:?}"
    );
    (child, out)
}

#[test]
fn second_process_fails_at_once_with_no_wait() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 5.0);
    let t = Instant::now();
    let b = hold(&lock, "exp-b", 0.0, &["--no-wait"]).output().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "--no-wait must not wait"
    );
    assert_eq!(b.status.code(), Some(1));
    let err = String::from_utf8_lossy(&b.stderr);
    assert!(
        err.contains(&format!("the host is busy: exp-a (pid {}, since ", a.id())),
        "{err}"
    );
    a.kill().unwrap();
    a.wait().unwrap();
}

#[test]
fn waiter_prints_the_holder_and_gets_the_lock_after_release() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, mut a_out) = spawn_holder(&lock, "exp-a", 2.0);
    let c = hold(&lock, "exp-c", 0.0, &[]).output().unwrap();
    assert!(c.status.success());
    let err = String::from_utf8_lossy(&c.stderr);
    assert!(
        err.contains(&format!("waiting for exp-a (pid {}, since ", a.id())),
        "{err}"
    );
    let mut released = String::new();
    a_out.read_line(&mut released).unwrap();
    a.wait().unwrap();
    let released_at =
        chrono::DateTime::parse_from_rfc3339(released.trim().strip_prefix("released at ").unwrap())
            .unwrap();
    let c_out = String::from_utf8_lossy(&c.stdout);
    let locked_at = c_out.lines().next().unwrap().rsplit(' ').next().unwrap();
    let locked_at = chrono::DateTime::parse_from_rfc3339(locked_at).unwrap();
    assert!(
        locked_at >= released_at,
        "C locked at {locked_at}, A released at {released_at}"
    );
    assert_eq!(
        perflab::lock::read_holder(&lock),
        None,
        "the holder is erased on release"
    );
}

#[test]
fn a_killed_holder_frees_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 60.0);
    unsafe { libc::kill(a.id() as i32, libc::SIGKILL) };
    a.wait().unwrap();
    // the stale holder is still written in the file, but the kernel dropped the flock
    assert_eq!(
        perflab::lock::read_holder(&lock).unwrap().experiment,
        "exp-a"
    );
    let b = hold(&lock, "exp-b", 0.0, &["--no-wait"]).output().unwrap();
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
}

#[test]
fn in_process_api_reports_busy_holder() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 5.0);
    let err = perflab::lock::acquire(&lock, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap_err();
    match err {
        perflab::lock::LockError::Busy {
            holder: Some(h), ..
        } => {
            assert_eq!((h.pid, h.experiment.as_str()), (a.id(), "exp-a"));
        }
        other => panic!("{other}"),
    }
    a.kill().unwrap();
    a.wait().unwrap();
    let held = perflab::lock::acquire(&lock, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap();
    assert_eq!(perflab::lock::read_holder(&lock).unwrap().experiment, "me");
    drop(held);
}

/// A symlink planted at the lock path (another user of a world-writable /run/lock) is refused,
/// and its target is neither chmodded nor written.
#[test]
fn a_symlink_at_the_lock_path_is_refused_and_its_target_untouched() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("precious");
    std::fs::write(&target, "root's data\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    let lock = dir.path().join("perflab.lock");
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let err = perflab::lock::acquire(&lock, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap_err();
    assert!(
        matches!(err, perflab::lock::LockError::NotRegular { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("symbolic link"), "{err}");
    let meta = std::fs::metadata(&target).unwrap();
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "target not chmodded"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "root's data\n");
    // Nothing else appeared beside it (no holder file, no temp file).
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["perflab.lock", "precious"]);
    // The CLI says so and exits non-zero without starting anything.
    let out = hold(&lock, "exp-b", 0.0, &["--no-wait"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
}

#[test]
fn a_directory_or_fifo_at_the_lock_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let as_dir = dir.path().join("d.lock");
    std::fs::create_dir(&as_dir).unwrap();
    let err =
        perflab::lock::acquire(&as_dir, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
    let fifo = dir.path().join("f.lock");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = perflab::lock::acquire(&fifo, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap_err();
    assert!(err.to_string().contains("a FIFO"), "{err}");
}

/// A lock file somebody else created keeps its mode: perflab only shares files it created.
#[test]
fn an_existing_lock_file_keeps_its_mode_and_a_new_one_is_shared() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs.lock");
    std::fs::write(&theirs, "").unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o640)).unwrap();
    drop(perflab::lock::acquire(&theirs, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap());
    let mode = std::fs::metadata(&theirs).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    let ours = dir.path().join("ours.lock");
    let held = perflab::lock::acquire(&ours, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap();
    let mode = std::fs::metadata(&ours).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666);
    assert_eq!(perflab::lock::read_holder(&ours).unwrap().experiment, "me");
    drop(held);
    assert_eq!(perflab::lock::read_holder(&ours), None);
}

// `perflab status` with real processes: one holds the host lock, one waits for it; status names
// both with their users, experiments and expected ends, and a killed waiter is ignored and its
// queue file swept. No Docker needed for the lock part.

fn status(lock: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.arg("status")
        .env("PERFLAB_LOCK", lock)
        .env("NO_COLOR", "1");
    c
}

fn status_json(lock: &std::path::Path) -> serde_json::Value {
    let out = status(lock).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Poll status until `ok` holds (at most 10 s).
fn status_until(
    lock: &std::path::Path,
    ok: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let t0 = Instant::now();
    loop {
        let s = status_json(lock);
        if ok(&s) || t0.elapsed() > Duration::from_secs(10) {
            return s;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn kill(c: &mut Child) {
    unsafe { libc::kill(c.id() as i32, libc::SIGKILL) };
    c.wait().unwrap();
}

fn time(v: &serde_json::Value) -> chrono::DateTime<chrono::Utc> {
    v.as_str().unwrap().parse().unwrap()
}

#[test]
fn status_shows_the_holder_and_a_waiter_and_ignores_a_killed_one() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder_with(&lock, "exp-a", 60.0, &["--expected-s", "600"]);
    let mut b = hold(&lock, "exp-b", 60.0, &["--expected-s", "120"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let s = status_until(&lock, |s| {
        s["lock"]["waiters"].as_array().unwrap().len() == 1
    });

    let me = perflab::owner::invoking_user();
    let h = &s["lock"]["holder"];
    assert_eq!(h["pid"], a.id());
    assert_eq!(h["experiment"], "exp-a");
    assert_eq!(h["user"], me.as_str());
    let holder_end = time(&h["expected_end"]);
    assert_eq!((holder_end - time(&h["since"])).num_seconds(), 600);
    let w = &s["lock"]["waiters"][0];
    assert_eq!(w["pid"], b.id());
    assert_eq!(
        (w["experiment"].as_str(), w["user"].as_str()),
        (Some("exp-b"), Some(me.as_str()))
    );
    // the waiter starts when the holder expects to end, and holds the lock for its 120 s
    assert_eq!(time(&w["expected_start"]), holder_end);
    assert_eq!((time(&w["expected_end"]) - holder_end).num_seconds(), 120);

    let text = status(&lock).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("held by {me} (pid {}): exp-a", a.id())),
        "{text}"
    );
    assert!(
        text.contains(&format!("1. {me} (pid {}): exp-b", b.id())),
        "{text}"
    );

    // A waiter killed with SIGKILL cannot remove its entry: status ignores it and sweeps it.
    let queue = perflab::lock::queue::queue_dir(&lock);
    kill(&mut b);
    assert!(queue.join(format!("{}.json", b.id())).exists());
    let s = status_json(&lock);
    assert_eq!(s["lock"]["waiters"], serde_json::json!([]));
    assert!(!queue.join(format!("{}.json", b.id())).exists(), "swept");

    // A killed holder leaves its record in the lock file, but the lock is free.
    kill(&mut a);
    assert_eq!(
        status_json(&lock)["lock"]["holder"],
        serde_json::Value::Null
    );
}

/// A waiter that gets the lock leaves the queue: nothing is left in the queue directory.
#[test]
fn a_waiter_leaves_the_queue_when_it_gets_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 1.0);
    let b = hold(&lock, "exp-b", 0.0, &[]).output().unwrap();
    assert!(b.status.success());
    assert!(String::from_utf8_lossy(&b.stderr).contains("waiting for exp-a"));
    a.wait().unwrap();
    let left: Vec<_> = std::fs::read_dir(perflab::lock::queue::queue_dir(&lock))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// First come, first served: a waiter that queued earlier goes first, even when the lock is
/// free; one stopped with ^Z (SIGSTOP) does not hold the queue up.
#[test]
fn an_earlier_waiter_goes_first_unless_it_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    // An earlier waiter: a live process with its queue entry, 10 s old.
    let mut early = Command::new("sleep").arg("30").spawn().unwrap();
    let entry = perflab::lock::queue::Waiter {
        pid: early.id(),
        start: perflab::owner::proc_state(early.id()).unwrap().start,
        boot: String::new(),
        host: perflab::owner::this_host(),
        user: "alice".into(),
        experiment: "exp-early".into(),
        since: chrono::Utc::now() - chrono::Duration::seconds(10),
        expected_s: Some(60),
    };
    let queue = perflab::lock::queue::queue_dir(&lock);
    std::fs::create_dir_all(&queue).unwrap();
    let file = queue.join(format!("{}.json", early.id()));
    std::fs::write(&file, serde_json::to_vec(&entry).unwrap()).unwrap();
    // A later one does not take the free lock while the earlier one waits.
    let mut late = hold(&lock, "exp-late", 0.0, &["--expected-s", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let s = status_until(&lock, |s| {
        s["lock"]["waiters"].as_array().unwrap().len() == 2
    });
    let w = &s["lock"]["waiters"];
    assert_eq!(
        (w[0]["experiment"].as_str(), w[1]["experiment"].as_str()),
        (Some("exp-early"), Some("exp-late"))
    );
    assert_eq!(time(&w[1]["expected_start"]), time(&w[0]["expected_end"]));
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        late.try_wait().unwrap().is_none(),
        "the later waiter took the lock first"
    );
    assert_eq!(
        s["lock"]["holder"],
        serde_json::Value::Null,
        "the lock is free"
    );
    // Stopped, the earlier waiter no longer holds the queue up.
    unsafe { libc::kill(early.id() as i32, libc::SIGSTOP) };
    let t0 = Instant::now();
    while late.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let done = late.try_wait().unwrap();
    kill(&mut early);
    if done.is_none() {
        kill(&mut late);
        panic!("a stopped earlier waiter held the queue up");
    }
    let mut line = String::new();
    BufReader::new(late.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("locked pid"), "{line}");
}
