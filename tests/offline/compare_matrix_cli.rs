//! `perflab compare GROUP --a ... --b ... --no-run` on recorded rounds (tests/fixtures/compare),
//! without Docker: an out root holds trixie rounds of 2a and exp1 and the same experiments'
//! rounds relabelled `forky` (2a's with 1,000 µs burnt per request, exp1's clean), and a
//! catalog holds exp1, 2a and a group of both. The matrix's rows, summary, exit code, `--json`
//! and `--html`, and the one-experiment text.
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures/compare";

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG")
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1")
        .env(
            "DOCKER_HOST",
            "unix:///nonexistent/perflab-compare-matrix.sock",
        );
    c
}

/// Copy a fixture batch's rounds into `out/<exp>/`; `suite` relabels them and drops their
/// overrides and the burn in their stack (the difference becomes the suite).
fn copy_batch(out: &Path, batch: &str, suite: Option<&str>) -> Vec<PathBuf> {
    let root = Path::new(FIX).join(batch);
    let exp_dir = std::fs::read_dir(&root).unwrap().flatten().next().unwrap();
    let exp = exp_dir.file_name();
    let mut made = Vec::new();
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(exp_dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    srcs.sort();
    for src in srcs {
        let to = out.join(&exp).join(src.file_name().unwrap());
        std::fs::create_dir_all(&to).unwrap();
        for f in ["manifest.json", "report.json", "status.json"] {
            std::fs::copy(src.join(f), to.join(f)).unwrap();
        }
        if let Some(s) = suite {
            let mut m = perflab::rundir::read_manifest(&to).unwrap();
            m.measurements.stack.suite = Some(s.into());
            m.overrides.clear();
            // the burn's stack as the experiment published: the difference is the suite only
            if let Some(n) = m.experiment.stack.node.as_mut() {
                n.burn_us = 0;
            }
            if let Some(php) = m.experiment.stack.php.as_mut() {
                php.burn_us = 0;
            }
            std::fs::write(to.join("manifest.json"), serde_json::to_vec(&m).unwrap()).unwrap();
        }
        made.push(to);
    }
    made
}

/// An out root and a catalog (exp1, 2a, the group `pair`).
fn lab() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    copy_batch(&out, "2a-base", None);
    copy_batch(&out, "2a-burn", Some("forky"));
    copy_batch(&out, "exp1-base", None);
    copy_batch(&out, "exp1-clean", Some("forky"));
    let cat = t.path().join("cat");
    std::fs::create_dir_all(&cat).unwrap();
    for id in ["2a", "exp1"] {
        std::fs::copy(
            format!("experiments/{id}.yaml"),
            cat.join(format!("{id}.yaml")),
        )
        .unwrap();
    }
    std::fs::write(
        cat.join("pair.yaml"),
        "kind: group\nid: pair\ndescription: \"exp1 and 2a\"\nmembers: [exp1, 2a]\n",
    )
    .unwrap();
    t
}

fn args<'a>(t: &'a tempfile::TempDir, target: &'a str) -> Vec<String> {
    let p = |s: &str| t.path().join(s).display().to_string();
    [
        "compare",
        target,
        "--b",
        "suite=forky",
        "--quick",
        "--no-run",
        "--reuse",
        "--out",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([p("out"), "--catalog".into(), p("cat")])
    .collect()
}

#[test]
fn the_group_matrix_has_a_row_per_experiment_and_exits_1_on_a_regression() {
    let t = lab();
    let html = t.path().join("pages/matrix.html");
    let out = perflab()
        .args(args(&t, "pair"))
        .arg("--json")
        .arg("--html")
        .arg(&html)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let m: Value = serde_json::from_slice(&out).unwrap();
    let rows = m["rows"].as_array().unwrap();
    let ids: Vec<&str> = rows
        .iter()
        .map(|r| r["experiment"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["exp1", "2a"]);
    let (exp1, r2a) = (&rows[0], &rows[1]);
    assert_eq!(r2a["verdict"], "regressed", "{}", r2a["why"]);
    assert_ne!(exp1["verdict"], "regressed", "{}", exp1["why"]);
    for r in rows {
        assert_eq!(
            (r["rounds_a"].as_u64(), r["rounds_b"].as_u64()),
            (Some(3), Some(3))
        );
        assert!(r["cpu_ratio"].as_f64().is_some(), "{r}");
    }
    assert!(r2a["cpu_ratio"].as_f64().unwrap() > 1.1);
    assert_eq!(r2a["processes"][0]["process"], "node");
    assert_eq!(m["summary"]["regressed"], serde_json::json!(["2a"]));
    assert_eq!(m["summary"]["exit_code"], 1);
    assert_eq!(m["a"], "A (published, trixie)");
    assert_eq!(m["b"], "B (suite=forky)");
    // the matrix page links each experiment's compare page beside it
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<a href=\"matrix-2a.html\">2a</a>"), "{page}");
    let cmp = std::fs::read_to_string(t.path().join("pages/matrix-2a.html")).unwrap();
    assert!(cmp.contains("REGRESSED"), "{cmp}");
    assert!(cmp.contains("../out/2a/"), "links the rounds' reports");
}

#[test]
fn one_experiment_prints_its_comparison_then_its_row() {
    let t = lab();
    let out = perflab()
        .args(args(&t, "exp1"))
        .assert()
        .get_output()
        .clone();
    let text = String::from_utf8_lossy(&out.stdout);
    let code = out.status.code().unwrap();
    assert!(
        code == 0 || code == 3,
        "exp1 clean against clean: exit {code}\n{text}"
    );
    assert!(text.starts_with("verdict: "), "{text}");
    assert!(
        text.contains("compare exp1: A (published, trixie), B (suite=forky)"),
        "{text}"
    );
    assert!(text.contains("CPU moved most"), "{text}");
    let last = text.lines().last().unwrap();
    assert!(
        last.starts_with("exp1: 1 experiment(s), B (suite=forky) against A (published, trixie): "),
        "{last}"
    );
    assert!(last.ends_with(&format!("exit {code}")), "{last}");
}

#[test]
fn a_configuration_without_rounds_is_an_inconclusive_row_and_exit_3() {
    let t = lab();
    let mut a = args(&t, "2a");
    a[3] = "suite=bookworm".into();
    perflab()
        .args(&a)
        .assert()
        .code(3)
        .stdout(predicates::str::contains(
            "2a: no complete round of side B of this configuration",
        ));
}

#[test]
fn the_ci_example_runs_a_comparison_perflab_accepts_and_fails_on_exit_1() {
    let text = std::fs::read_to_string("docs/ci/regression.yml").unwrap();
    let y: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let job = &y["jobs"]["suite-matrix"];
    let compare = job["env"]["COMPARE"].as_str().expect("env.COMPARE");
    let steps = job["steps"].as_sequence().unwrap();
    let script = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("perflab compare $COMPARE"))
        .expect("a step runs perflab compare $COMPARE");
    assert!(
        script.contains("1) ") && script.contains("exit 1 ;;"),
        "{script}"
    );
    // The comparison as the job gives it, on an empty out root without running: every php
    // experiment is a row (no rounds yet: inconclusive, exit 3), not bad input (exit 2).
    let out = tempfile::tempdir().unwrap();
    let args: Vec<&str> = compare.split_whitespace().collect();
    let stdout = perflab()
        .arg("compare")
        .args(&args)
        .args(["--no-run", "--json", "--out"])
        .arg(out.path())
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let m: Value = serde_json::from_slice(&stdout).unwrap();
    let rows = m["rows"].as_array().unwrap();
    assert!(rows.len() >= 10, "{}", rows.len());
    assert!(rows.iter().any(|r| r["experiment"] == "exp1"));
    assert!(rows.iter().all(|r| r["lab"] == "php"), "php only");
    assert_eq!(m["b"], "B (suite=forky)");
}

/// Issue 38, item 2: out/2a holding three copies of one A round (the same `run_id` in three
/// folders) beside three B rounds. The copies counted as three rounds (REGRESSED, exit 1, and
/// `matrix plan --rounds 3` saw the cell complete); a run is one round wherever rounds are
/// counted, and the copies are named.
fn copies_of_one_a_round(t: &tempfile::TempDir) -> Vec<PathBuf> {
    let out = t.path().join("out");
    let a = copy_batch(&out, "2a-base", None);
    for d in &a[1..] {
        for f in ["manifest.json", "report.json", "status.json"] {
            std::fs::copy(a[0].join(f), d.join(f)).unwrap();
        }
    }
    a
}

#[test]
fn copies_of_one_round_count_once_in_compare_and_are_named() {
    let t = lab();
    let out = t.path().join("out");
    std::fs::remove_dir_all(out.join("2a")).unwrap();
    let a = copies_of_one_a_round(&t);
    copy_batch(&out, "2a-burn", Some("forky"));
    let o = perflab()
        .args(args(&t, "2a"))
        .arg("--json")
        .assert()
        .get_output()
        .clone();
    let m: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &m["rows"][0];
    assert_ne!(row["verdict"], "regressed", "{}", row["why"]);
    assert_eq!(o.status.code(), Some(3), "{}", row["why"]);
    assert_eq!(
        (row["rounds_a"].as_u64(), row["rounds_b"].as_u64()),
        (Some(1), Some(3))
    );
    let err = String::from_utf8_lossy(&o.stderr);
    for copy in &a[1..] {
        let line = format!(
            "skipped copied run: {}: a copy of {} (run id 20261130T222220Z-r1), counted once",
            copy.display(),
            a[0].display()
        );
        assert!(err.contains(&line), "{line}\n{err}");
    }
}

#[test]
fn copies_of_one_round_do_not_complete_a_matrix_cell() {
    let t = tempfile::tempdir().unwrap();
    let a = copies_of_one_a_round(&t);
    let plan = t.path().join("m.plan");
    let o = perflab()
        .args(["matrix", "plan", "2a", "--rounds", "3", "--quick", "--plan"])
        .arg(&plan)
        .arg("--out")
        .arg(t.path().join("out"))
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 cell(s) to run, 1 already complete"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "skipped copied run: {}: a copy of",
            a[2].display()
        )),
        "{err}"
    );
    let text = std::fs::read_to_string(&plan).unwrap();
    let cells: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(cells.len(), 2, "{text}");
}

#[test]
fn the_index_names_a_copy_and_leaves_it_out_of_the_batch_pages() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    copies_of_one_a_round(&t);
    // the next batch of the suite: its page is against the A batch, one run once
    copy_batch(&out, "2a-clean", None);
    perflab()
        .arg("index")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let note = "a copy of 2a/20261130T222220Z-r1 (run id 20261130T222220Z-r1), counted once";
    assert_eq!(index.matches(note).count(), 2, "{index}");
    let page = out.join("compare/2a/20261130T222220Z-r1--20261130T222840Z-r1.html");
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        !page.contains("20261130T222301Z-r2/report.html"),
        "a copy in the batch's page"
    );
    assert!(page.contains("20261130T222220Z-r1/report.html"), "{page}");
}
