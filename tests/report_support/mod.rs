//! Shared helpers of the report tests: a k6 fixture analyzed into a `Report`.
#![allow(dead_code)]
use perflab::analyze::model::Source;
use perflab::analyze::{self, Params, Report};
use perflab::report::load;
use std::path::PathBuf;

pub fn fixture(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

pub fn report_of(name: &str, tweak: impl FnOnce(&mut Params)) -> Report {
    let summary = load::k6_summary(&fixture(name, "summary.json")).unwrap();
    let mut p = Params::new(summary.slo_p95_ms().unwrap());
    let (aborted, insufficient) =
        load::k6_log_flags(&std::fs::read_to_string(fixture(name, "log")).unwrap());
    p.aborted = Some(aborted);
    p.insufficient_vus = insufficient;
    tweak(&mut p);
    analyze::analyze_run(analyze::Inputs {
        k6: load::k6_csv(&fixture(name, "csv.gz")).unwrap(),
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
    })
    .unwrap()
}
