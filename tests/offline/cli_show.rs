//! `perflab list` / `show` output: the catalog table, JSON shape, the article's 1a timeline.
use assert_cmd::Command;
use predicates::prelude::*;

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG").env("NO_COLOR", "1");
    c
}

#[test]
fn list_json_has_id_lab_kind_for_every_file() {
    let out = perflab().args(["list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = v.as_array().unwrap();
    let files = std::fs::read_dir("experiments").unwrap().count();
    assert_eq!(items.len(), files);
    for i in items {
        assert!(i["id"].is_string() && i["lab"].is_string());
        assert!(["experiment", "group"].contains(&i["kind"].as_str().unwrap()));
    }
    let find = |id: &str| items.iter().find(|i| i["id"] == id).unwrap().clone();
    assert_eq!(find("1a")["lab"], "node");
    assert_eq!(find("exp12")["kind"], "group");
    assert_eq!(find("demo-open")["lab"], "demo");
}

#[test]
fn list_table_and_lab_filter() {
    perflab()
        .args(["list", "--lab", "node"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1a"))
        .stdout(predicate::str::contains("exp1 ").not());
}

#[test]
fn show_1a_prints_the_article_timeline() {
    perflab()
        .args(["show", "1a", "--no-align"])
        .assert()
        .success()
        .stdout(predicate::str::contains("steps     100, 150, 200, 225, 250, 275, 300 rps; ramp 8 s + hold 22 s each, after a warm-up of 20 s at 20 rps"))
        .stdout(predicate::str::contains("SLO p95 < 100 ms"))
        .stdout(predicate::str::contains("VUs       pre 100 / max 400"))
        .stdout(predicate::str::contains("  warm-up     -    20 rps   0:00   0:20  no       (untagged)"))
        .stdout(predicate::str::contains("  hold        1   100 rps   0:28   0:50  yes      step:01_rps100"))
        .stdout(predicate::str::contains("  hold        7   300 rps   3:28   3:50  yes      step:07_rps300"))
        .stdout(predicate::str::contains("total 3:50 (230 s)"))
        .stdout(predicate::str::contains("delayAbortEval 50 s"));
}

#[test]
fn show_json_is_the_plan() {
    let out = perflab()
        .args(["show", "exp1", "--json", "--quick"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["plan"]["hold_s"], 5);
    assert_eq!(v["plan"]["quick"]["original_hold_s"], 20);
    assert_eq!(
        v["plan"]["k6_env"]["STEPS"],
        "60,90,120,150,180,210,240,300"
    );
    assert_eq!(v["plan"]["k6_env"]["VUS"], "600");
    assert!(v["alignment_if_started_now"]["k6_start"].is_string());
}

#[test]
fn show_group_lists_members() {
    perflab()
        .args(["show", "diag"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1. diag-tcp"))
        .stdout(predicate::str::contains("4. diag-unix"));
}

#[test]
fn validate_whole_catalog() {
    let n = std::fs::read_dir("experiments").unwrap().count();
    perflab()
        .arg("validate")
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("ok: {n} file(s) valid")));
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    // `perflab show 1a | head -1`: the reader is gone before the output is written. The process
    // must not panic ("failed printing to stdout", exit 101) nor fail ("Broken pipe", exit 1);
    // the rest of the output is dropped. One command writes through an `impl Write`
    // (`show`), one prints a rendered text (`verify --quantities`).
    use std::process::{Command as Std, Stdio};
    for args in [&["show", "1a"][..], &["verify", "--quantities"][..]] {
        let mut child = Std::new(assert_cmd::cargo::cargo_bin("perflab"))
            .args(args)
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // close the read end before perflab writes
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: stderr: {err}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: stderr: {err}");
    }
}
