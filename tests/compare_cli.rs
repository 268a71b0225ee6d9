//! `perflab compare` on recorded rounds (tests/fixtures/compare: quick rounds of 2a and exp1
//! made on this project's shared 2-CPU host by scripts/make-compare-fixtures.sh): the `--json`
//! verdict of the injected regressions and of clean reruns against the same baseline, the
//! per-side lists, the text of one run against one run, `--html`, and bad input.
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures/compare";

fn perflab() -> Command {
    let mut c = Command::cargo_bin("perflab").unwrap();
    c.env_remove("PERFLAB_CATALOG")
        .env_remove("PERFLAB_OUT")
        .env("NO_COLOR", "1");
    c
}

/// The run directories of a recorded batch, oldest first.
fn rounds(batch: &str) -> Vec<PathBuf> {
    let exp_dir = std::fs::read_dir(Path::new(FIX).join(batch))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut v: Vec<PathBuf> = std::fs::read_dir(exp_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").exists())
        .collect();
    v.sort();
    v
}

fn list(batch: &str) -> String {
    let v: Vec<String> = rounds(batch)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    v.join(",")
}

fn compare_json(a: &str, b: &str) -> Value {
    let out = perflab()
        .args(["compare", a, b, "--json"])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("compare --json prints JSON")
}

fn verdict(v: &Value) -> &str {
    v["verdict"].as_str().unwrap()
}

#[test]
fn injected_burn_is_a_regression_with_both_sides_listed() {
    for (base, burn, key) in [
        ("2a-base", "2a-burn", "experiment.stack.node.burn_us"),
        ("exp1-base", "exp1-burn", "experiment.stack.php.burn_us"),
    ] {
        let v = compare_json(&list(base), &list(burn));
        assert_eq!(verdict(&v), "regressed", "{base} vs {burn}: {}", v["why"]);
        for side in ["rounds_a", "rounds_b"] {
            assert_eq!(v[side]["runs"].as_array().unwrap().len(), 3);
            assert_eq!(v[side]["max_sustainable"].as_array().unwrap().len(), 3);
            assert_eq!(v[side]["cpu_ms_per_ok"].as_array().unwrap().len(), 3);
        }
        assert!(v["cpu"]["step"].as_u64().is_some());
        assert!(
            v["cpu"]["delta_pct"].as_f64().unwrap() > v["cpu"]["threshold_pct"].as_f64().unwrap()
        );
        let config = v["config"].as_array().unwrap();
        assert!(config.iter().any(|d| d["key"] == key), "{config:?}");
        assert_eq!(v["versions"].as_array().unwrap().len(), 0);
        assert!(
            v["rounds_b"]["injected"][0]
                .as_str()
                .unwrap()
                .contains("burn_us")
        );
        // the other way round (the burn removed) is never a regression; 2a's is an improvement,
        // exp1's -20 % stays within its 23.6 % threshold (the delta is relative to A)
        let back = compare_json(&list(burn), &list(base));
        assert_ne!(verdict(&back), "regressed", "{}", back["why"]);
        if base == "2a-base" {
            assert_eq!(verdict(&back), "improved", "{}", back["why"]);
        }
    }
}

#[test]
fn clean_reruns_are_not_a_regression() {
    for (base, clean) in [
        ("2a-base", "2a-clean"),
        ("2a-base", "2a-clean2"),
        ("2a-clean", "2a-clean2"),
        ("exp1-base", "exp1-clean"),
    ] {
        let v = compare_json(&list(base), &list(clean));
        assert_ne!(verdict(&v), "regressed", "{base} vs {clean}: {}", v["why"]);
        assert_eq!(v["config"].as_array().unwrap().len(), 0, "{}", v["config"]);
    }
}

#[test]
fn one_run_a_side_keeps_the_steps_and_is_inconclusive() {
    let (a, b) = (&rounds("2a-base")[0], &rounds("2a-burn")[0]);
    perflab()
        .args(["compare"])
        .arg(a)
        .arg(b)
        .assert()
        .code(0)
        .stdout(predicates::str::contains("verdict A"))
        .stdout(predicates::str::contains("knee: A "))
        .stdout(predicates::str::contains(
            "experiment.stack.node.burn_us: (absent) -> 1000",
        ))
        .stdout(predicates::str::contains("verdict: INCONCLUSIVE"));
}

#[test]
fn html_page_is_self_contained_and_leads_with_the_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("cmp.html");
    perflab()
        .args(["compare", &list("2a-base"), &list("2a-burn"), "--html"])
        .arg(&page)
        .assert()
        .code(0);
    let html = std::fs::read_to_string(&page).unwrap();
    let verdict_at = html.find("Verdict: REGRESSED").expect("verdict");
    assert!(verdict_at < html.find("id=\"rounds\"").unwrap());
    assert!(html.contains("INJECTED, not a clean run: in B: stack.node.burn_us=1000"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"));
    // runs link to their report.html, relative to the page
    assert!(html.contains("/report.html\">2a/"), "no run links");
}

#[test]
fn bad_lists_are_bad_input() {
    let a = list("2a-base");
    perflab()
        .args(["compare", &format!("{a},"), &a])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("empty run in the list"));
    perflab()
        .args(["compare", &a, "tests/fixtures/compare/nope"])
        .assert()
        .code(2);
}

/// The burn knob heads every report of an injected run, and no report of a clean one.
#[test]
fn injected_runs_say_so_in_every_report_header() {
    let read = |dir: &Path| perflab::rundir::read_report(dir).unwrap();
    let burn = read(&rounds("2a-burn")[0]);
    let clean = read(&rounds("2a-base")[0]);
    let line = "INJECTED (not a clean run): stack.node.burn_us=1000 (1000 µs of CPU burnt per request in the app)";
    assert!(perflab::report::text::render(&burn).contains(line));
    assert!(perflab::report::markdown::render(&burn, &[]).contains(line));
    let tmp = tempfile::tempdir().unwrap();
    for (r, injected) in [(&burn, true), (&clean, false)] {
        perflab::html::write_html(r, tmp.path(), Err("-".into()), Err("-".into())).unwrap();
        let html = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
        assert_eq!(html.contains("<p class=\"injected\">INJECTED"), injected);
        assert_eq!(
            perflab::report::text::render(r).contains("INJECTED"),
            injected
        );
    }
}

/// Copy a recorded batch into `to`, each round's manifest given a host speed reading (compute
/// Mops/s and memory M loads/s on both CPUs, before the loads); returns the list argument.
fn with_speed(batch: &str, to: &Path, compute: f64, memory: f64) -> String {
    let mut out = Vec::new();
    for src in rounds(batch) {
        let dst = to.join(batch).join(src.file_name().unwrap());
        std::fs::create_dir_all(&dst).unwrap();
        for f in std::fs::read_dir(&src).unwrap().flatten() {
            if f.path().is_file() {
                std::fs::copy(f.path(), dst.join(f.file_name())).unwrap();
            }
        }
        let path = dst.join("manifest.json");
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let cpu = |n: u32| {
            serde_json::json!({"cpu": n, "compute_mops": compute, "memory_msteps": memory,
                "compute_spread_pct": 1.0, "memory_spread_pct": 1.5})
        };
        m["measurements"]["host_speed"] = serde_json::json!({
            "before": {"at": "2026-12-01T08:00:00Z", "cpus": [cpu(0), cpu(1)]}
        });
        std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
        out.push(dst.display().to_string());
    }
    out.join(",")
}

/// A regression measured while the host itself ran slower is not called a regression: the
/// host speed probe's change explains more CPU per request; on an equally fast host the same
/// rounds still say `regressed`.
#[test]
fn a_regression_on_a_slower_host_is_inconclusive() {
    let tmp = tempfile::tempdir().unwrap();
    let base = with_speed("2a-base", &tmp.path().join("a"), 400.0, 10.0);
    let same_host = with_speed("2a-burn", &tmp.path().join("b"), 396.0, 10.3);
    let v = compare_json(&base, &same_host);
    assert_eq!(verdict(&v), "regressed", "{}", v["why"]);
    assert_eq!(v["host_speed"]["a_compute_mops"], 400.0);
    assert_eq!(v["host_speed"]["unmeasured_rounds"], 0);
    let slower = with_speed("2a-burn", &tmp.path().join("c"), 300.0, 10.0);
    let v = compare_json(&base, &slower);
    assert_eq!(verdict(&v), "inconclusive", "{}", v["why"]);
    let why = v["why"].as_str().unwrap();
    assert!(
        why.contains("B's host ran slower than A's (compute -25 %"),
        "{why}"
    );
    assert!(why.contains("would have been regressed"), "{why}");
    let text = perflab()
        .args(["compare", &base, &slower])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("host speed (probe before each round's loads): compute A 400 B 300 Mops/s"),
        "{text}"
    );
    // Recorded rounds without a reading keep their verdicts, and say they have none.
    let v = compare_json(&list("2a-base"), &list("2a-burn"));
    assert_eq!(verdict(&v), "regressed");
    assert_eq!(v["host_speed"]["unmeasured_rounds"], 6);
}
