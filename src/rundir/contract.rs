//! The run directory's contract in one module: the type of every file a run directory holds,
//! re-exported from where it is defined (the records of the samplers and of the fit sit below
//! this floor, beside their writers; the plan is `plan`'s), next to `layout`'s paths. Nothing
//! is defined here.

/// `manifest.json` of an experiment run, with its schema version and measurements.
pub use super::manifest::{MANIFEST_SCHEMA_VERSION, Manifest};
pub use super::measurements::{
    ContainerRecord, GeneratorInstance, GeneratorStart, Generators, K6Resume, Measurements,
    Placement, StackMeasurements, Warmup,
};
/// The session's phases, recorded in `manifest.json` (`measurements.phases`) and `status.json`.
pub use super::phase::{Phase, PhaseRecord};
/// `report.json`: the analysis (`analyze::model`) with its schema version.
pub use super::report::{REPORT_SCHEMA_VERSION, ReportFile};
/// `status.json`.
pub use super::status::{RunState, Status};
/// `manifest.json` of a tool run (`calib`, `cpr`, `noise-check`).
pub use super::tool::{TOOL_MANIFEST_SCHEMA_VERSION, ToolManifest, ToolMeasurements};
/// `k6/summary.json` (k6's `--summary-export`), as the analysis reads it.
pub use crate::analyze::summary::K6Summary;
/// `plan.json` (also the manifest's `plan`).
pub use crate::plan::Plan;

/// The samplers' JSON lines, `samples/*.jsonl` (`sample::records`).
pub mod samples {
    pub use crate::sample::records::*;
}

/// The fit's record, `measurements.fit` of `manifest.json` and `fit` of `report.json`
/// (`analyze::fit`).
pub mod fit {
    pub use crate::analyze::fit::*;
}

/// The fields of `report.json` (`analyze::model`: steps, verdicts, checks, sources).
pub mod report {
    pub use crate::analyze::model::*;
}
