//! Host lock contention between real processes (`perflab lock-hold`, hidden debug command).
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
    let mut child = hold(lock, exp, seconds, &[])
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
    assert!(
        !perflab::lock::holder_path(&lock).exists(),
        "holder file removed after release"
    );
}

#[test]
fn a_killed_holder_frees_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("perflab.lock");
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 60.0);
    unsafe { libc::kill(a.id() as i32, libc::SIGKILL) };
    a.wait().unwrap();
    // the stale holder file is still there, but the kernel dropped the flock
    assert!(perflab::lock::holder_path(&lock).exists());
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
