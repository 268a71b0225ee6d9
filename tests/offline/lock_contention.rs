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

/// A lock file somebody else created keeps its mode; one perflab creates is 0644 (everyone
/// takes the flock on a read-only descriptor), and a world-writable one of ours (an older
/// perflab's 0666) is made 0644.
#[test]
fn an_existing_lock_file_keeps_its_mode_and_a_new_one_is_not_world_writable() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let theirs = dir.path().join("theirs.lock");
    std::fs::write(&theirs, "").unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o640)).unwrap();
    drop(perflab::lock::acquire(&theirs, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap());
    assert_eq!(mode(&theirs), 0o640);
    let ours = dir.path().join("ours.lock");
    let held = perflab::lock::acquire(&ours, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap();
    assert_eq!(mode(&ours), 0o644);
    assert_eq!(perflab::lock::read_holder(&ours).unwrap().experiment, "me");
    // nothing is written into the lock file: the record is beside it
    assert_eq!(std::fs::metadata(&ours).unwrap().len(), 0);
    drop(held);
    assert_eq!(perflab::lock::read_holder(&ours), None);
    let old = dir.path().join("old.lock");
    std::fs::write(&old, "").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o666)).unwrap();
    drop(perflab::lock::acquire(&old, "me", perflab::lock::Wait::NoWait, |_| {}).unwrap());
    assert_eq!(mode(&old), 0o644);
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
        live: None,
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

// Other local users (issue 38, item 3): real processes of uid `nobody` (the tests run as root,
// `setpriv` drops to it), on a lock in a folder shared like /run/lock (mode 1777).

const NOBODY: u32 = 65534;

/// `cmd args` as uid/gid `nobody`, without root's groups.
fn as_nobody(program: &str, args: &[&str]) -> Command {
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", program])
        .args(args)
        .env("NO_COLOR", "1");
    c
}

/// A folder shared like /run/lock (mode 1777), and the lock path in it.
fn shared_lock_dir() -> (tempfile::TempDir, std::path::PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let lock = dir.path().join("perflab.lock");
    (dir, lock)
}

/// Write `text` to `path` as nobody; whether it worked.
fn nobody_writes(path: &std::path::Path, text: &str) -> bool {
    as_nobody(
        "sh",
        &[
            "-c",
            "printf '%s' \"$1\" > \"$2\"",
            "sh",
            text,
            path.to_str().unwrap(),
        ],
    )
    .stderr(Stdio::null())
    .status()
    .unwrap()
    .success()
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// The issue's case: a 136-byte file written by uid nobody ("host elsewhere, user alice, since
/// 1970") in the queue folder kept perflab waiting ("holder unknown") on a free lock until it
/// was killed. The folder is sticky now; the entry is stale (another host's, from 1970) and
/// shown so; and even a fresh planted entry only delays a free lock by the grace.
#[test]
fn a_queue_entry_planted_by_another_user_does_not_keep_perflab_waiting() {
    let (_dir, lock) = shared_lock_dir();
    // a real wait makes the queue folder
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 1.0);
    let b = hold(&lock, "exp-b", 0.0, &[]).output().unwrap();
    assert!(b.status.success(), "{}", String::from_utf8_lossy(&b.stderr));
    a.wait().unwrap();
    let queue = perflab::lock::queue::queue_dir(&lock);
    assert_eq!(mode(&queue), 0o1777, "the queue folder is sticky");
    // nobody cannot remove or replace root's entry in it
    let roots = queue.join("1.json");
    std::fs::write(&roots, "{}").unwrap();
    let rm = as_nobody("rm", &["-f", roots.to_str().unwrap()])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(
        !rm.success() && roots.exists(),
        "nobody removed root's entry"
    );
    std::fs::remove_file(&roots).unwrap();

    let planted = r#"{"pid":4242,"start":1,"boot":"x","host":"elsewhere","user":"alice","experiment":"exp1","since":"1970-01-01T00:00:00Z","expected_s":null}"#;
    assert_eq!(planted.len(), 136);
    assert!(nobody_writes(&queue.join("4242.json"), planted));
    let t0 = Instant::now();
    let c = hold(&lock, "exp-c", 0.0, &[]).output().unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "waited {:?} on a free lock behind a stale entry",
        t0.elapsed()
    );
    let text = String::from_utf8_lossy(&status(&lock).output().unwrap().stdout).into_owned();
    assert!(text.contains("  free\n"), "{text}");
    assert!(
        text.contains("stale queue entry alice (pid 4242 on elsewhere): exp1, since 1970-01-01T00:00:00Z: another host's entry, older than 10 min; not waited for"),
        "{text}"
    );
    assert!(text.contains("nobody waiting"), "{text}");
    let s = status_json(&lock);
    assert_eq!(s["lock"]["stale_waiters"][0]["user"], "alice");
    assert_eq!(s["lock"]["waiters"], serde_json::json!([]));

    // a fresh one, dated now: it counts, but a free lock it leaves untaken is taken after the
    // grace (3 s), not never
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert!(nobody_writes(
        &queue.join("4242.json"),
        &planted.replace("1970-01-01T00:00:00Z", &now)
    ));
    let t0 = Instant::now();
    let d = hold(&lock, "exp-d", 0.0, &[]).output().unwrap();
    let waited = t0.elapsed();
    assert!(d.status.success(), "{}", String::from_utf8_lossy(&d.stderr));
    assert!(
        waited >= Duration::from_millis(2500) && waited < Duration::from_secs(10),
        "waited {waited:?}"
    );
    assert!(
        String::from_utf8_lossy(&d.stderr).contains("waiting for 1 earlier waiter(s) of the queue"),
        "{}",
        String::from_utf8_lossy(&d.stderr)
    );
}

/// The lock file was 0666: anyone could write a fake holder into it, and `status` showed "held
/// by bob ... expected end 23:00" on a free lock. Now the file is 0644 and two real users both
/// take the flock (on a read-only descriptor); each one's record is a file of its own, believed
/// only when it names the process holding the lock; status tells the flock from the records.
#[test]
fn another_user_takes_the_lock_but_cannot_fake_its_holder() {
    let (_dir, lock) = shared_lock_dir();
    let bin = env!("CARGO_BIN_EXE_perflab");
    let root = hold(&lock, "root-first", 0.0, &[]).output().unwrap();
    assert!(
        root.status.success(),
        "{}",
        String::from_utf8_lossy(&root.stderr)
    );
    assert_eq!(mode(&lock), 0o644);
    let records = perflab::lock::holder::holder_dir(&lock);
    assert_eq!(mode(&records), 0o1777);
    let fake = r#"{"pid":1,"experiment":"exp9","since":"2026-12-05T20:00:00Z","hostname":"HOST","user":"bob","start":1,"boot":"","expected_end":"2026-12-05T23:00:00Z"}"#
        .replace("HOST", &perflab::owner::this_host());
    // nobody cannot write the lock file any more
    assert!(!nobody_writes(&lock, &fake), "nobody wrote the lock file");

    // nobody takes the lock for real (its flock on a read-only descriptor) and is named
    let mut theirs = as_nobody(
        bin,
        &["lock-hold", "--experiment", "nobodys", "--seconds", "30"],
    )
    .env("PERFLAB_LOCK", &lock)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut line = String::new();
    BufReader::new(theirs.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("locked pid"),
        "nobody's perflab said {line:?}"
    );
    let s = status_json(&lock);
    assert_eq!(s["lock"]["held"], true);
    assert_eq!(s["lock"]["holder"]["experiment"], "nobodys");
    assert_eq!(s["lock"]["holder"]["pid"], theirs.id());
    // root waits for it, naming it
    let r = hold(&lock, "exp-r", 0.0, &["--no-wait"]).output().unwrap();
    assert!(String::from_utf8_lossy(&r.stderr).contains(&format!("nobodys (pid {}", theirs.id())));
    kill(&mut theirs);

    // a record planted by nobody naming bob's holder, on the free lock: shown, not believed
    let own = records.join(format!("{NOBODY}.json"));
    assert!(nobody_writes(&own, &fake));
    let text = String::from_utf8_lossy(&status(&lock).output().unwrap().stdout).into_owned();
    assert!(text.contains("  free\n"), "{text}");
    assert!(!text.contains("held by bob"), "{text}");
    assert!(
        text.contains("recorded holder bob (pid 1): exp9, since 2026-12-05T20:00:00Z: not holding the lock, ignored"),
        "{text}"
    );
    let s = status_json(&lock);
    assert_eq!(
        (s["lock"]["held"].clone(), s["lock"]["holder"].clone()),
        (serde_json::json!(false), serde_json::Value::Null)
    );
    // and while root holds the lock, the planted record is not its holder either
    let (mut a, _out) = spawn_holder(&lock, "exp-a", 30.0);
    let s = status_json(&lock);
    assert_eq!(s["lock"]["holder"]["experiment"], "exp-a", "{s}");
    assert_eq!(s["lock"]["held_by_pid"], a.id());
    kill(&mut a);
}
