//! `perflab report` on a run directory of two load generators (`k6/g0`, `k6/g1`), built from a
//! real k6 fixture: the merged report counts both instances, its percentiles come from the
//! merged histograms, and the cross-check against the summed summaries finds nothing.
use assert_cmd::Command;
use serde_json::Value;
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

fn report(dir: &Path) -> Value {
    Command::cargo_bin("perflab")
        .unwrap()
        .args(["--quiet", "report"])
        .arg(dir)
        .assert()
        .success();
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

#[test]
fn two_instances_merge_into_one_report() {
    let one = tempfile::tempdir().unwrap();
    copy_instance(&one.path().join("k6"), "stepped-open");
    let two = tempfile::tempdir().unwrap();
    copy_instance(&two.path().join("k6/g0"), "stepped-open");
    copy_instance(&two.path().join("k6/g1"), "stepped-open");
    let (r1, r2) = (report(one.path()), report(two.path()));
    let (s1, s2) = (
        r1["steps"].as_array().unwrap(),
        r2["steps"].as_array().unwrap(),
    );
    assert_eq!(s1.len(), s2.len());
    for (a, b) in s1.iter().zip(s2) {
        assert_eq!(a["name"], b["name"]);
        // Same requests twice: double the count, the same distribution (HDR merge, 0.1 %).
        assert_eq!(
            b["requests"].as_u64().unwrap(),
            2 * a["requests"].as_u64().unwrap()
        );
        for p in ["p50_ms", "p95_ms", "max_ms"] {
            let (x, y) = (a[p].as_f64().unwrap(), b[p].as_f64().unwrap());
            assert!((x - y).abs() <= x * 0.002 + 0.01, "{p}: {x} vs {y}");
        }
        assert!(
            (b["sent_per_s"].as_f64().unwrap() - 2.0 * a["sent_per_s"].as_f64().unwrap()).abs()
                < 0.5
        );
    }
    let src = &r2["source"];
    assert_eq!(src["generators"].as_array().unwrap().len(), 2);
    assert!(src["csv"].as_str().unwrap().contains("2 generators"));
    assert_eq!(
        r2["checks"]["cross_checked_steps"],
        r1["checks"]["cross_checked_steps"]
    );
    let rows = r2["checks"]["cross_check"].as_array().unwrap();
    assert!(
        !rows.iter().any(|c| c["field"] == "requests"),
        "merged counts equal the summed summaries: {rows:?}"
    );
    // Both instances start together: no start-spread warning.
    let w = r2["warnings"].to_string();
    assert!(!w.contains("first requests are"), "{w}");
    // A single-generator report has no per-instance list.
    assert!(r1["source"].get("generators").is_none());
}
