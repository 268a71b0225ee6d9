//! A run directory whose manifest is corrupt or missing still gets its report, and the report
//! says what that cost (the CPU and pool ceilings come from the manifest) instead of dropping
//! the ceilings silently or failing.
use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn run_dir() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let k6 = d.path().join("k6");
    std::fs::create_dir_all(&k6).unwrap();
    let fixture = |ext: &str| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("tests/fixtures/k6/stepped-open.{ext}"))
    };
    std::fs::copy(fixture("csv.gz"), k6.join("requests.csv.gz")).unwrap();
    std::fs::copy(fixture("summary.json"), k6.join("summary.json")).unwrap();
    std::fs::copy(fixture("log"), k6.join("k6.log")).unwrap();
    d
}

/// `perflab report DIR` succeeds; returns its stderr and report.json's warnings.
fn report(dir: &Path) -> (String, Vec<String>) {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .arg("report")
        .arg(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "perflab report failed: {stderr}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    let warnings = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    (stderr, warnings)
}

#[test]
fn a_corrupt_manifest_is_named_with_the_ceilings_it_costs() {
    let d = run_dir();
    let manifest = d.path().join("manifest.json");
    // Torn mid-write.
    std::fs::write(&manifest, r#"{"schema_version": 2, "run_id": "20261130T1"#).unwrap();
    let (stderr, warnings) = report(d.path());
    let w = warnings
        .iter()
        .find(|w| w.contains("manifest.json"))
        .unwrap_or_else(|| panic!("no manifest warning in {warnings:?}"));
    assert!(w.contains(&manifest.display().to_string()), "{w}");
    assert!(w.contains("cannot be read"), "{w}");
    assert!(
        w.contains("no CPU ceiling (needs cpu_layout.app)")
            && w.contains("no pool ceiling (needs experiment.stack)"),
        "{w}"
    );
    assert!(
        stderr.contains("warning: ") && stderr.contains("cannot be read"),
        "{stderr}"
    );
}

#[test]
fn a_missing_manifest_is_said_too() {
    let d = run_dir();
    let (_, warnings) = report(d.path());
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("manifest.json is missing") && w.contains("no CPU ceiling")),
        "{warnings:?}"
    );
}
