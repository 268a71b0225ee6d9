//! `perflab matrix` failures. Fast: an unreachable host fails its cell with the reason in the
//! job log and in `status`, and a hostile hosts file is bad input (exit 2). SLOW (Docker,
//! about 2 min plus any wait for the host lock): the controller killed (SIGKILL) during the
//! first of two cells loses nothing; `matrix run` again completes both, each cell once.
use crate::matrix_support;
use matrix_support::*;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

/// A controller in its own process group, stopped with everything it started when dropped.
struct GroupGuard(std::process::Child);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the group this test created
        unsafe { libc::kill(-(self.0.id() as i32), libc::SIGTERM) };
        let _ = self.0.wait();
    }
}

#[test]
fn an_unreachable_host_fails_its_cell_with_the_reason() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let (out, plan) = plan(t.path(), 1);
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let hosts = t.path().join("hosts");
    std::fs::write(
        &hosts,
        format!("ssh -p {dead} -o BatchMode=yes -o ConnectTimeout=3 nobody@127.0.0.1\n"),
    )
    .unwrap();
    let o = matrix_run(&plan, &out)
        .arg("--hosts")
        .arg(&hosts)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("0 done, 0 running, 1 failed"), "{text}");
    assert!(
        text.contains("Connection refused") && text.contains(&format!("-p {dead}")),
        "{text}"
    );
    assert!(matrix_status(&plan, &out).contains("Connection refused"));
    // hostile hosts files: exit 2, nothing started
    for (body, want) in [
        ("", "no host"),
        ("a\u{7}b\n", "line 1"),
        ("x@y\nx@y\n", "twice"),
    ] {
        std::fs::write(&hosts, body).unwrap();
        let o = matrix_run(&plan, &out)
            .arg("--hosts")
            .arg(&hosts)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{body:?}: {err}");
        assert!(err.contains(want), "{body:?}: {err}");
    }
    let o = matrix_run(&plan, &out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn killing_the_controller_loses_no_cell_and_run_again_resumes() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let (out, plan) = plan(t.path(), 2);
    let run = || {
        let mut c = matrix_run(&plan, &out);
        c.arg("--local");
        c
    };
    // its own process group: should the test fail, the guard stops it and its cell's run
    let first = run()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut first = GroupGuard(first);
    // kill it once the first cell's run directory exists (the cell is under way; it may wait
    // long for the host lock behind other measurements)
    let t0 = Instant::now();
    while run_dirs(&out, "demo-open").is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(3600),
            "the first cell never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(3));
    // SIGKILL the controller alone: its cell's `perflab run` goes on, orphaned
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let o = run().output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("2 done, 0 running, 0 failed, 0 remaining"),
        "{text}"
    );
    let dirs = run_dirs(&out, "demo-open");
    let names: Vec<String> = dirs
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "each cell once, no second attempt: {names:?}"
    );
    assert!(names.iter().all(|n| n.ends_with("-trixie")), "{names:?}");
    assert_no_overlap(&spans(&dirs));
    // a third run has nothing to do
    let o = run().output().unwrap();
    assert!(o.status.success());
    assert_eq!(run_dirs(&out, "demo-open").len(), 2);
}
