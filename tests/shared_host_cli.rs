//! Shared hosts, bad input: a stack on this machine is never published on every interface.
use assert_cmd::Command;
use predicates::prelude::*;

#[test]
fn publish_on_any_address_for_a_local_stack_is_refused_before_anything_starts() {
    for any in ["0.0.0.0", "::"] {
        let out = tempfile::tempdir().unwrap();
        Command::cargo_bin("perflab")
            .unwrap()
            .env("PERFLAB_LOCK", out.path().join("lock"))
            .args(["run", "demo-open", "--quick", "--publish-on", any, "--out"])
            .arg(out.path().join("runs"))
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!(
                    "--publish-on {any}: the stack runs on this machine"
                ))
                .and(predicate::str::contains("--publish-on 10.0.0.4")),
            );
        // Nothing started: no run directory, the lock never taken.
        assert!(!out.path().join("runs").exists());
        assert!(!out.path().join("lock").exists());
    }
}
