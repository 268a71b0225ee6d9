//! Bad input of the remedies' settings (issue 41): a `limit_req` rate of 0 or below, a backlog
//! of 0, a fastcgi timeout of 0, a recovery phase whose drop is not below the peak or that the
//! abort guards would cut. Each is the catalog's experiment with one line changed: `perflab
//! validate` exits 2 naming the file, the line, the field and the fix, and starts nothing.
use assert_cmd::Command;
use predicates::prelude::*;

/// `experiments/<id>.yaml` with `from` replaced by `to`, validated from a temporary folder:
/// exit 2, stdout empty, stderr holding every needle.
pub(crate) fn rejects(id: &str, from: &str, to: &str, needles: &[&str]) {
    let src = std::fs::read_to_string(format!("experiments/{id}.yaml")).unwrap();
    assert!(src.contains(from), "{id}.yaml has no `{from}`");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{id}.yaml"));
    std::fs::write(&file, src.replacen(from, to, 1)).unwrap();
    let mut a = Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .env("NO_COLOR", "1")
        .arg("validate")
        .arg(&file)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("nothing was started"));
    for n in needles {
        a = a.stderr(predicate::str::contains(*n));
    }
}

#[test]
fn a_limit_req_rate_of_zero_or_below() {
    let (from, file) = ("    limit_req_rps: 140", "exp1-shed.yaml:18:");
    rejects(
        "exp1-shed",
        from,
        "    limit_req_rps: 0",
        &[
            file,
            "stack.php.limit_req_rps",
            "must be > 0",
            "just under the knee",
        ],
    );
    rejects(
        "exp1-shed",
        from,
        "    limit_req_rps: -5",
        &[file, "stack.php.limit_req_rps", "expected u32"],
    );
}

#[test]
fn a_backlog_or_a_fastcgi_timeout_of_zero() {
    rejects(
        "exp3sat-failfast",
        "    backlog: 32",
        "    backlog: 0",
        &["exp3sat-failfast.yaml:", "stack.php.backlog", "must be > 0"],
    );
    rejects(
        "exp3sat-failfast",
        "    fastcgi_timeout_s: 2",
        "    fastcgi_timeout_s: 0",
        &["stack.php.fastcgi_timeout_s", "must be > 0", "e.g. 2"],
    );
}

#[test]
fn a_recovery_drop_not_below_the_peak() {
    rejects(
        "exp3sat-recover",
        "  recover_rps: 22",
        "  recover_rps: 90",
        &[
            "exp3sat-recover.yaml:",
            "load.recover_rps",
            "90 is not below the peak (top step 90)",
            "half of it",
        ],
    );
    rejects(
        "exp3sat-recover",
        "  recover_rps: 22",
        "  recover_rps: 0",
        &["load.recover_rps", "must be > 0"],
    );
}

#[test]
fn a_recovery_phase_the_abort_guards_would_cut_or_half_given() {
    rejects(
        "exp3sat-recover",
        "  abort: false",
        "  abort: true",
        &["load.abort", "must be false with a recovery phase"],
    );
    rejects(
        "exp3sat-recover",
        "  recover_s: 60\n",
        "",
        &["load.recover_s", "is missing", "recover_s: 60"],
    );
}
