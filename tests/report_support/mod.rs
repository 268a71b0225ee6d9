//! Shared helpers of the report tests: a k6 fixture analyzed into a `Report`, recorded run
//! directories copied into a temp out/ root.
#![allow(dead_code)]
use perflab::analyze::model::Source;
use perflab::analyze::{self, Params, Report};
use perflab::rundir::inputs as load;
use perflab::rundir::read::{FileKind, RunFile};
use std::path::{Path, PathBuf};

pub fn fixture(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

/// A file given on its own, as `perflab analyze` reads it.
pub fn loose(p: &Path, kind: FileKind) -> RunFile {
    RunFile::loose(p, kind)
}

pub fn report_of(name: &str, tweak: impl FnOnce(&mut Params)) -> Report {
    let summary = load::k6_summary(&loose(&fixture(name, "summary.json"), FileKind::K6Summary))
        .unwrap()
        .0;
    let mut p = Params::new(summary.slo_p95_ms().unwrap());
    let (aborted, insufficient) =
        load::k6_log_flags(&std::fs::read_to_string(fixture(name, "log")).unwrap());
    p.aborted = Some(aborted);
    p.insufficient_vus = insufficient;
    tweak(&mut p);
    analyze::analyze_run(analyze::Inputs {
        k6: load::k6_csv(&loose(&fixture(name, "csv.gz"), FileKind::K6Csv))
            .unwrap()
            .0,
        summary: Some(summary),
        samples: Default::default(),
        params: p,
        logs: Default::default(),
        source: Source {
            title: name.into(),
            csv: format!("{name}.csv.gz"),
            summary: Some(format!("{name}.summary.json")),
            ..Default::default()
        },
        caveats: Vec::new(),
    })
    .unwrap()
}

/// A recorded run directory copied into a temp out/ root (the fixture stays untouched).
pub fn copy_run(exp: &str, out: &Path) -> PathBuf {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/verify")
        .join(exp);
    let run = std::fs::read_dir(&src)
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let dst = out.join(exp).join(run.file_name().unwrap());
    std::fs::create_dir_all(&dst).unwrap();
    for f in ["manifest.json", "report.json", "status.json"] {
        std::fs::copy(run.join(f), dst.join(f)).unwrap();
    }
    dst
}

/// Copy every file and folder under `from` into `to` (made if missing): a run directory as it
/// travels, a fixture into a temp out/ root.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Record another Debian suite in a copied run's manifest (`measurements.suite`).
pub fn set_suite(dir: &Path, suite: &str) {
    let p = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    m["measurements"]["suite"] = suite.into();
    std::fs::write(&p, m.to_string()).unwrap();
}
