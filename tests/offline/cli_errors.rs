//! Each kind of bad input gives its message, names the file/field, exits 2 and starts nothing.
use assert_cmd::Command;
use predicates::prelude::*;

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG").env("NO_COLOR", "1");
    c
}

fn fixture(name: &str) -> String {
    format!("tests/fixtures/catalog/{name}.yaml")
}

/// `perflab validate <fixture>` exits 2 and stderr contains every `needle`.
fn rejects(name: &str, needles: &[&str]) {
    let mut assert = perflab()
        .args(["validate", &fixture(name)])
        .assert()
        .code(2);
    for n in needles {
        assert = assert.stderr(predicate::str::contains(*n));
    }
    assert.stdout(predicate::str::is_empty());
}

#[test]
fn valid_fixture_passes() {
    perflab()
        .args(["validate", &fixture("good")])
        .assert()
        .success()
        .stdout(predicate::str::contains("ok: 1 file(s) valid"));
}

#[test]
fn malformed_yaml() {
    rejects(
        "malformed",
        &[
            "malformed.yaml:6:9",
            "malformed YAML",
            "nothing was started",
        ],
    );
}

#[test]
fn unknown_key_with_did_you_mean() {
    rejects(
        "unknown-key",
        &[
            "unknown-key.yaml:17:3",
            "load.stpes",
            "did you mean `steps`?",
            "allowed keys:",
        ],
    );
}

#[test]
fn wrong_type() {
    rejects(
        "wrong-type",
        &[
            "wrong-type.yaml:18:11",
            "load.hold_s",
            "invalid type",
            "expected u32",
        ],
    );
}

#[test]
fn decreasing_steps() {
    rejects(
        "decreasing-steps",
        &[
            "decreasing-steps.yaml:20:5",
            "load.steps[2]",
            "strictly increasing: 80 follows 90",
        ],
    );
}

#[test]
fn unknown_endpoint() {
    rejects(
        "unknown-endpoint",
        &[
            "load.endpoint",
            "`/api/dbb` is not an endpoint of the php lab",
            "did you mean `/api/db`?",
        ],
    );
}

#[test]
fn closed_model_without_think_time() {
    rejects(
        "closed-no-think",
        &[
            "closed-no-think.yaml",
            "load.think_time_s",
            "closed model needs a think time",
        ],
    );
}

#[test]
fn too_few_vus_for_littles_law() {
    rejects(
        "little-vus",
        &[
            "load.max_vus",
            "Little's law needs 120 x 0.2 s = 24",
            "vu_cap_reason",
        ],
    );
}

#[test]
fn unknown_enum_value() {
    rejects(
        "unknown-variant",
        &[
            "unknown-variant.yaml:15:10",
            "load.model",
            "did you mean `open`?",
        ],
    );
}

#[test]
fn stack_section_of_another_lab() {
    rejects(
        "wrong-lab-stack",
        &["stack.node", "does not apply to `lab: php`"],
    );
}

#[test]
fn missing_field() {
    rejects(
        "missing-field",
        &["load.timeout_s", "missing field `timeout_s`"],
    );
}

#[test]
fn id_must_match_file_name() {
    rejects(
        "id-mismatch",
        &["id `other-name` differs from the file name `id-mismatch`"],
    );
}

#[test]
fn unknown_kind() {
    rejects(
        "unknown-kind",
        &["unknown kind `grup`", "did you mean `group`?"],
    );
}

#[test]
fn group_member_must_exist() {
    rejects(
        "bad-group",
        &["members[1]", "unknown id `exp11`", "did you mean `exp1`?"],
    );
}

#[test]
fn several_files_report_every_error() {
    perflab()
        .args([
            "validate",
            &fixture("wrong-type"),
            &fixture("unknown-endpoint"),
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2 problems"))
        .stderr(predicate::str::contains("wrong-type.yaml"))
        .stderr(predicate::str::contains("unknown-endpoint.yaml"));
}

#[test]
fn missing_file() {
    perflab()
        .args(["validate", "tests/fixtures/catalog/nope.yaml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such file"));
}

#[test]
fn unknown_experiment_id() {
    perflab()
        .args(["show", "exp11"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `exp1`?"));
}

#[test]
fn overlapping_cpus() {
    perflab()
        .args(["show", "exp1", "--cpus", "loadgen=0,app=0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "app cpus 0 overlap loadgen cpus 0",
        ))
        .stderr(predicate::str::contains("--force-cpus"));
}

#[test]
fn forced_overlap_is_a_caveat() {
    perflab()
        .args([
            "show",
            "exp1",
            "--cpus",
            "loadgen=0,db=0,app=0",
            "--force-cpus",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "caveat: forced: app cpus 0 overlap loadgen cpus 0",
        ));
}

#[test]
fn offline_cpu() {
    perflab()
        .args(["show", "exp1", "--cpus", "app=4000"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cpu 4000 of app is not online"));
}

#[test]
fn unknown_cpu_role() {
    perflab()
        .args(["show", "exp1", "--cpus", "ap=1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `app`?"));
}

#[test]
fn set_with_unknown_key() {
    perflab()
        .args(["show", "exp1", "--set", "hold=10"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("`hold` is not a settable field"))
        .stderr(predicate::str::contains("did you mean"));
}

#[test]
fn set_is_validated_like_a_file() {
    perflab()
        .args(["show", "exp1", "--set", "steps=90,60"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--set steps=90,60"))
        .stderr(predicate::str::contains("strictly increasing"));
    perflab()
        .args(["show", "1a", "--set", "model=closed"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs a think time"));
    perflab()
        .args(["show", "exp1", "--set", "hold_s=ten"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--set hold_s=ten: error: load.hold_s: invalid type",
        ));
}

#[test]
fn set_changes_the_plan() {
    perflab()
        .args([
            "show",
            "exp1",
            "--set",
            "hold_s=10",
            "--set",
            "stack.php.max_children=40",
            "--no-align",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("max_children 40"))
        .stdout(predicate::str::contains("total 1:20 (80 s)"));
}

#[test]
fn set_without_equals() {
    perflab()
        .args(["show", "exp1", "--set", "hold_s"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("expected KEY=VALUE"));
}

#[test]
fn broken_catalog_dir_fails_list_with_exit_2() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("wrong-type"), d.path().join("wrong-type.yaml")).unwrap();
    perflab()
        .args(["list", "--catalog"])
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("wrong-type.yaml:18:11"));
}

/// A bad `--out` is found before the images, the lock or the engine are touched: exit 2,
/// the flag named, nothing started (no engine is even reachable here).
#[test]
fn a_bad_out_dir_is_bad_input_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    for out in [file.clone(), file.join("below")] {
        perflab()
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .env("PERFLAB_LOCK", dir.path().join("lock"))
            .args(["run", "demo-open", "--quick", "--no-wait", "--out"])
            .arg(&out)
            .timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("--out {}", out.display())))
            .stderr(predicate::str::contains(
                "give a directory you can write in",
            ));
    }
    assert!(!dir.path().join("lock").exists(), "the lock was not taken");
}

/// `perflab host-speed` measures the CPUs it is given (JSON lines, one a reading) and refuses a
/// bad CPU list or repeat count with exit 2.
#[test]
fn host_speed_reads_the_given_cpus_and_refuses_bad_input() {
    let out = perflab()
        .args(["host-speed", "--cpus", "0", "--repeats", "2", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    for r in &lines {
        assert_eq!(r["cpus"][0]["cpu"], 0, "{r}");
        assert!(r["cpus"][0]["compute_mops"].as_f64().unwrap() > 1.0, "{r}");
    }
    perflab()
        .args(["host-speed", "--cpus", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cpus x"));
    // the old spelling is a hidden alias; the message names the flag by its one name
    perflab()
        .args(["host-speed", "--repeat", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--repeats 0"));
}

/// `perflab CMD ARGS` exits 2, its stderr names `first` and not `later` (a problem behind it).
fn first_problem(args: &[&str], first: &str, later: &str) {
    let out = perflab().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(
        err.contains(first),
        "{args:?} should name {first:?} first: {err}"
    );
    assert!(!err.contains(later), "{args:?} named {later:?}: {err}");
}

/// With two things wrong, every command names the one a user fixes first: the file, run or
/// experiment before a flag's value.
#[test]
fn errors_name_the_first_real_problem() {
    // analyze: the missing file before the missing --slo-ms, or a bad --error-budget
    first_problem(
        &["analyze", "missing.csv"],
        "missing.csv: no such file",
        "--slo-ms",
    );
    first_problem(
        &["analyze", "missing.csv", "--error-budget", "7"],
        "missing.csv: no such file",
        "--error-budget",
    );
    first_problem(
        &[
            "analyze",
            "tests/fixtures/k6/stepped-abort.csv.gz",
            "--summary",
            "nope.json",
        ],
        "--summary nope.json: no such file",
        "--slo-ms",
    );
    // run: the unknown experiment before --rounds 0 or a bad --generators
    first_problem(&["run", "nosuch", "--rounds", "0"], "nosuch", "--rounds");
    first_problem(
        &["run", "nosuch", "--generators", "0"],
        "nosuch",
        "--generators",
    );
    // compare: the missing run before the settings
    first_problem(
        &["compare", "nope-a", "nope-b", "--confidence", "5"],
        "nope-a",
        "--confidence",
    );
    first_problem(
        &[
            "compare",
            "nosuch",
            "--a",
            "suite=forky",
            "--confidence",
            "5",
        ],
        "nosuch",
        "--confidence",
    );
    // capacity: the experiment without runs before --rounds
    first_problem(
        &[
            "capacity",
            "nosuch",
            "--rounds",
            "1",
            "--out",
            "tests/fixtures/verify",
        ],
        "no runs of `nosuch`",
        "capacity needs at least 3 rounds",
    );
}

/// `--html` takes a FILE (compare); `report`'s re-render of report.html alone is
/// `--html-only`, and the old `report --html` spellings get a clear error naming it.
#[test]
fn report_html_is_html_only_and_the_old_spelling_says_so() {
    for args in [
        &["report", "--html", "out/exp1/latest"][..],
        &["report", "out/exp1/latest", "--html"][..],
    ] {
        perflab()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "perflab report out/exp1/latest --html-only",
            ));
    }
}

/// A PgBouncer pool larger than PostgreSQL's max_connections (issue 41): exit 2, naming the
/// field, the numbers and the claim, when the experiment claims that no request fails; a
/// warning otherwise; 0 and past the bound are refused like any count.
#[test]
fn pgbouncer_pool_over_max_connections() {
    perflab()
        .args([
            "show",
            "exp2-pgconn-pgbouncer",
            "--set",
            "stack.php.pool_size=120",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains("nothing was started"))
        .stderr(predicate::str::contains(
            "stack.php.pool_size: PgBouncer's pool of 120 server connections is larger than \
             PostgreSQL's max_connections 100: 20 of them",
        ))
        .stderr(predicate::str::contains(
            "claim `no-errors` says no request fails",
        ))
        .stderr(predicate::str::contains("help: lower stack.php.pool_size"));
    // The same pool in an experiment that claims nothing about errors: a warning.
    perflab()
        .args(["validate", &fixture("pgbouncer-pool-over")])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 warning(s)"))
        .stderr(predicate::str::contains(
            "pgbouncer-pool-over.yaml:14:5: warning: stack.php.pool_size: PgBouncer's pool of 120 \
             server connections is larger than PostgreSQL's max_connections 100",
        ));
    for (set, needle) in [
        ("pool_size=0", "stack.php.pool_size: must be > 0"),
        ("pool_size=20000", "stack.php.pool_size"),
        ("db_via=pgpool", "stack.php.db_via"),
        ("pm=adaptive", "stack.php.pm"),
        ("stack.postgres.auth=md5", "stack.postgres.auth"),
    ] {
        perflab()
            .args(["show", "exp0-pgbouncer", "--set", set])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(needle));
    }
}
