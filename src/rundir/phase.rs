//! The phases of a measurement session as a run directory records them (`manifest.json`
//! `measurements.phases`, `status.json` `phase`).
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A phase of a session, in the order a round goes through them. A load phase (generators
/// ready, aligned start, measure, collect) runs once for the measured steps and again for each
/// calibration or probe load on the same stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    Lock,
    RunDir,
    StackUp,
    WarmUp,
    GeneratorsReady,
    AlignedStart,
    Measure,
    Collect,
    /// A pause between two loads on the same stack, while in-flight work drains.
    Recover,
    /// `--fit`: a calibration judged, the published numbers fitted to it.
    Fit,
    Teardown,
    Report,
}

impl Phase {
    /// The words a status reason uses ("during warm-up").
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Lock => "lock",
            Phase::RunDir => "run-dir",
            Phase::StackUp => "stack-up",
            Phase::WarmUp => "warm-up",
            Phase::GeneratorsReady => "generators-ready",
            Phase::AlignedStart => "aligned-start",
            Phase::Measure => "measure",
            Phase::Collect => "collect",
            Phase::Recover => "recover",
            Phase::Fit => "fit",
            Phase::Teardown => "teardown",
            Phase::Report => "report",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One phase as it happened: as `measurements.phases` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRecord {
    pub phase: Phase,
    /// `measured`, `calibration`, `probe 3`, ... for the phases of a load; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<String>,
    pub started: DateTime<Utc>,
    pub seconds: f64,
    /// `ok`, `interrupted by SIGINT`, or the error.
    pub outcome: String,
}
