//! `perflab run --generators / --host / --publish-on` with bad values: exit 2, the message names
//! the flag and the fix, nothing starts (no Docker needed: the input is checked first).
use assert_cmd::Command;
use predicates::prelude::*;

fn run_with(args: &[&str]) -> assert_cmd::assert::Assert {
    let out = tempfile::tempdir().unwrap();
    let a = Command::cargo_bin("perflab")
        .unwrap()
        .env("NO_COLOR", "1")
        // A Docker endpoint that cannot answer: reaching it would be a different error (exit 1).
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .args(["run", "demo-open", "--quick", "--no-align", "--out"])
        .arg(out.path())
        .args(args)
        .assert();
    // Nothing started: no run directory.
    assert!(
        !out.path().join("demo-open").exists(),
        "a run directory was created"
    );
    a
}

#[test]
fn host_without_a_port_names_the_flag_and_the_form() {
    let _serial = crate::serial();
    run_with(&["--host", "loadgen=tcp://box"])
        .code(2)
        .stderr(predicate::str::contains("--host loadgen=tcp://box"))
        .stderr(predicate::str::contains("tcp://10.0.0.5:2375"));
}

#[test]
fn host_with_an_unknown_role_suggests_one() {
    let _serial = crate::serial();
    run_with(&["--host", "loadgn=tcp://127.0.0.1:2375"])
        .code(2)
        .stderr(predicate::str::contains("unknown role `loadgn`"))
        .stderr(predicate::str::contains("did you mean `loadgen`"));
}

#[test]
fn host_without_role_shows_the_syntax() {
    let _serial = crate::serial();
    run_with(&["--host", "tcp://127.0.0.1:2375"])
        .code(2)
        .stderr(predicate::str::contains("ROLE=ENDPOINT"));
}

#[test]
fn unknown_context_names_where_contexts_live() {
    let _serial = crate::serial();
    run_with(&["--host", "loadgen=no-such-context"])
        .code(2)
        .stderr(predicate::str::contains("not a Docker context"))
        .stderr(predicate::str::contains("docker context create"));
}

#[test]
fn remote_box_with_loopback_publish_address_is_refused() {
    let _serial = crate::serial();
    run_with(&["--host", "loadgen=tcp://10.9.9.9:2375"])
        .code(2)
        .stderr(predicate::str::contains("--publish-on"));
    run_with(&["--publish-on", "nope"])
        .code(2)
        .stderr(predicate::str::contains("--publish-on `nope`"));
}

#[test]
fn generators_out_of_range() {
    let _serial = crate::serial();
    run_with(&["--generators", "0"])
        .code(2)
        .stderr(predicate::str::contains("--generators 0"));
    run_with(&["--generators", "17"])
        .code(2)
        .stderr(predicate::str::contains("1 to 16"));
}
