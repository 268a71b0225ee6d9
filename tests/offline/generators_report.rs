//! `perflab report` on a run directory of two load generators (`k6/g0`, `k6/g1`), built from a
//! real k6 fixture: the merged report counts both instances, its percentiles come from the
//! merged histograms, and the cross-check against the summed summaries finds nothing.
use assert_cmd::Command;
use perflab::analyze::Report;
use std::path::{Path, PathBuf};

fn fixture(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

fn copy_instance(k6: &Path, name: &str) {
    std::fs::create_dir_all(k6).unwrap();
    for (src, dst) in [
        ("csv.gz", "requests.csv.gz"),
        ("summary.json", "summary.json"),
        ("log", "k6.log"),
    ] {
        std::fs::copy(fixture(name, src), k6.join(dst)).unwrap();
    }
}

fn report(dir: &Path) -> Report {
    Command::cargo_bin("perflab")
        .unwrap()
        .args(["--quiet", "report"])
        .arg(dir)
        .assert()
        .success();
    perflab::rundir::read_report(dir).unwrap()
}

#[test]
fn two_instances_merge_into_one_report() {
    let one = tempfile::tempdir().unwrap();
    copy_instance(&one.path().join("k6"), "stepped-open");
    let two = tempfile::tempdir().unwrap();
    copy_instance(&two.path().join("k6/g0"), "stepped-open");
    copy_instance(&two.path().join("k6/g1"), "stepped-open");
    let (r1, r2) = (report(one.path()), report(two.path()));
    assert_eq!(r1.steps.len(), r2.steps.len());
    for (a, b) in r1.steps.iter().zip(&r2.steps) {
        assert_eq!(a.name, b.name);
        // Same requests twice: double the count, the same distribution (HDR merge, 0.1 %).
        assert_eq!(b.requests, 2 * a.requests);
        for (p, x, y) in [
            ("p50_ms", a.p50_ms, b.p50_ms),
            ("p95_ms", a.p95_ms, b.p95_ms),
            ("max_ms", a.max_ms, b.max_ms),
        ] {
            assert!((x - y).abs() <= x * 0.002 + 0.01, "{p}: {x} vs {y}");
        }
        assert!((b.sent_per_s - 2.0 * a.sent_per_s).abs() < 0.5);
    }
    let src = &r2.source;
    assert_eq!(src.generators.len(), 2);
    assert!(src.csv.contains("2 generators"));
    assert_eq!(r2.checks.cross_checked_steps, r1.checks.cross_checked_steps);
    let rows = &r2.checks.cross_check;
    assert!(
        !rows.iter().any(|c| c.field == "requests"),
        "merged counts equal the summed summaries: {rows:?}"
    );
    // Both instances start together: no start-spread warning.
    assert!(
        !r2.warnings.iter().any(|w| w.contains("first requests are")),
        "{:?}",
        r2.warnings
    );
    // A single-generator report has no per-instance list.
    assert!(r1.source.generators.is_empty());
}

/// `perflab analyze` takes the N runners' CSVs of one test (k6-operator's runners, `perflab
/// export k8s`) and merges them as `report` merges `k6/g*/`: the same steps and knee.
#[test]
fn analyze_merges_the_csvs_of_n_runners() {
    let two = tempfile::tempdir().unwrap();
    copy_instance(&two.path().join("k6/g0"), "stepped-open");
    copy_instance(&two.path().join("k6/g1"), "stepped-open");
    let merged = report(two.path());
    let (csv, sum) = (
        fixture("stepped-open", "csv.gz"),
        fixture("stepped-open", "summary.json"),
    );
    let run = |csvs: &[&Path], sums: &[&Path]| {
        let mut c = Command::cargo_bin("perflab").unwrap();
        c.arg("analyze").args(csvs).arg("--json");
        for s in sums {
            c.arg("--summary").arg(s);
        }
        let o = c.assert().success().get_output().stdout.clone();
        serde_json::from_slice::<serde_json::Value>(&o).unwrap()
    };
    let one = run(&[&csv], &[&sum]);
    let both = run(&[&csv, &csv], &[&sum, &sum]);
    let steps = both["steps"].as_array().unwrap();
    assert_eq!(steps.len(), merged.steps.len());
    for ((s, m), o) in steps
        .iter()
        .zip(&merged.steps)
        .zip(one["steps"].as_array().unwrap())
    {
        assert_eq!(s["requests"].as_u64(), Some(m.requests), "{s}");
        assert_eq!(
            s["requests"].as_u64(),
            o["requests"].as_u64().map(|n| 2 * n)
        );
        assert_eq!(s["p95_ms"].as_f64(), Some(m.p95_ms));
    }
    assert_eq!(both["knee"], one["knee"]);
}
