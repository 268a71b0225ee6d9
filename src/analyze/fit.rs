//! What `perflab run --fit` records in the manifest (`measurements.fit`, through `rundir`) and
//! the report shows: the calibration load's
//! numbers, the quantities the rules read, each rule with its published and fitted value, and
//! the plan as published beside the fitted one (the manifest's `plan`).
use serde::{Deserialize, Serialize};

use crate::plan::Plan;
use crate::plan::fit::{AppliedRule, Quantities};

/// What the calibration load measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Offered rate and seconds held.
    pub rate: u32,
    pub hold_s: u32,
    pub ok_per_s: f64,
    /// Mean latency (the service time W at low load).
    pub w_ms: f64,
    pub p95_ms: f64,
    /// p99 latency (absent in runs recorded before the peak probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ms: Option<f64>,
    /// App-box CPU ms per successful request.
    pub app_ms: Option<f64>,
    /// PostgreSQL CPU ms per successful request.
    pub db_ms: Option<f64>,
    /// The calibration step's verdict: it must pass (a calibration over the knee measures
    /// nothing about the host's ceilings).
    pub pass: bool,
    pub why: String,
    /// Calibrations at higher rates that did not pass before this one (`20 rps: p95 914 ms >
    /// 200`): the host broke below the published calibration rate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_attempts: Vec<String>,
    /// The low-rate calibration this one followed, at half the lowest ceiling it measured (the
    /// working point). At a few requests per second an idle box inflates CPU per request and W
    /// (measured: 5.45 ms CPU/request at 20 rps against 4.0-4.3 ms at 150-230 rps on the Node
    /// app), so the rules read the working point's numbers and this one is kept beside them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screening: Option<Box<Calibration>>,
}

/// The fit of one run, as the manifest keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitRecord {
    pub calibration: Calibration,
    /// The peak probe (`fit.calibrate.peak`): an open load at or over the lowest ceiling with
    /// the published VUs, where CPU per request and the queue's wait are what they are when a
    /// ceiling binds (measured on the Node app: 6.0 ms CPU/request at the 75 rps working point
    /// against 4.1-4.4 ms at 190-235 rps, so the working point put its capacity at 166 rps
    /// instead of about 230).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<Calibration>,
    /// Every quantity a rule could read, measured and published.
    pub quantities: Quantities,
    /// Each rule with its published and fitted value.
    pub rules: Vec<AppliedRule>,
    /// The plan as published (the manifest's `plan` is the fitted one).
    pub article_plan: Plan,
    /// A rule set a stack field, so the stack was restarted with the fitted settings.
    pub restacked: bool,
}
