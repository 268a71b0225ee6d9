//! `report.json` of an experiment run: the analysis (`analyze::Report`, its fields at top level)
//! with the file's schema version. `report` writes it, `verify` / `compare` / `capacity` read it.
use crate::analyze::Report;
use serde::{Deserialize, Serialize};

/// Version of `report.json` (files written before it carried one are version 1).
pub const REPORT_SCHEMA_VERSION: u32 = 1;

fn report_v1() -> u32 {
    1
}

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportFile {
    #[serde(default = "report_v1")]
    pub schema_version: u32,
    #[serde(flatten)]
    pub report: Report,
}

/// The text of `report.json` for `r` (pretty, newline-terminated).
pub fn to_json(r: &Report) -> String {
    #[derive(Serialize)]
    struct Out<'a> {
        schema_version: u32,
        #[serde(flatten)]
        report: &'a Report,
    }
    let out = Out {
        schema_version: REPORT_SCHEMA_VERSION,
        report: r,
    };
    serde_json::to_string_pretty(&out).expect("report serialises") + "\n"
}

/// Parse `report.json`. Its `timeline` and `per_second` arrays may be absent (the recorded
/// fixtures drop them to stay small). Read straight into the types, twice over the text: the
/// version first (every other field skipped), then the report, which ignores the version
/// (through [`ReportFile`]'s `flatten` the text went into a JSON tree and serde's buffer
/// first: the scanner behind `index` and `compare --no-run` reads a report per run).
pub fn parse(text: &str) -> anyhow::Result<Report> {
    #[derive(Deserialize)]
    struct Version {
        #[serde(default = "report_v1")]
        schema_version: u32,
    }
    let f: Version = serde_json::from_str(text)?;
    anyhow::ensure!(
        f.schema_version <= REPORT_SCHEMA_VERSION,
        "report schema {} is newer than this perflab reads ({REPORT_SCHEMA_VERSION}): upgrade perflab",
        f.schema_version
    );
    let mut report: Report = serde_json::from_str(text)?;
    // A report written before the bounds rule (or edited) is held to it as it is read.
    crate::analyze::bounds::apply(&mut report);
    Ok(report)
}
