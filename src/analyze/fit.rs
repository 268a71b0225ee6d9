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
    /// Every passing reading when the working point was repeated; the numbers above are their
    /// medians (one reading of 1a's database ceiling moved 217 -> 349 rps between two runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<Reading>,
}

/// One reading of a repeated calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub ok_per_s: f64,
    pub w_ms: f64,
    pub app_ms: Option<f64>,
    pub db_ms: Option<f64>,
}

/// The spread of one quantity over the readings: lowest, highest, and (highest - lowest) /
/// median in %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    pub pct: f64,
}

/// The median of the finite values.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    super::stats::median(&v)
}

impl Calibration {
    fn reading(&self) -> Reading {
        Reading {
            ok_per_s: self.ok_per_s,
            w_ms: self.w_ms,
            app_ms: self.app_ms,
            db_ms: self.db_ms,
        }
    }

    /// Passing readings at one rate as one calibration: the first with the medians of the
    /// ok/s, W, p95 and the CPU per request, every reading kept. None without a reading.
    pub(crate) fn median_of(runs: Vec<Calibration>) -> Option<Calibration> {
        let readings: Vec<Reading> = runs.iter().map(Calibration::reading).collect();
        let col =
            |f: &dyn Fn(&Calibration) -> Option<f64>| median(runs.iter().filter_map(f).collect());
        let mut out = runs.first()?.clone();
        out.ok_per_s = col(&|c| Some(c.ok_per_s)).unwrap_or(out.ok_per_s);
        out.w_ms = col(&|c| Some(c.w_ms)).unwrap_or(out.w_ms);
        out.p95_ms = col(&|c| Some(c.p95_ms)).unwrap_or(out.p95_ms);
        out.p99_ms = col(&|c| c.p99_ms);
        out.app_ms = col(&|c| c.app_ms);
        out.db_ms = col(&|c| c.db_ms);
        if readings.len() > 1 {
            out.readings = readings;
        }
        Some(out)
    }

    /// The spread of W and of the CPU per request over the readings (empty with fewer than 2).
    pub fn spread(&self) -> Vec<Spread> {
        if self.readings.len() < 2 {
            return Vec::new();
        }
        type Column = (&'static str, fn(&Reading) -> Option<f64>);
        let cols: [Column; 3] = [
            ("app ms/request", |r| r.app_ms),
            ("PostgreSQL ms/request", |r| r.db_ms),
            ("W ms", |r| Some(r.w_ms)),
        ];
        cols.iter()
            .filter_map(|(name, f)| {
                let v: Vec<f64> = self.readings.iter().filter_map(f).collect();
                let (lo, hi) = v
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                        (a.min(*x), b.max(*x))
                    });
                let m = median(v)?;
                (m > 0.0).then(|| Spread {
                    name,
                    min: lo,
                    max: hi,
                    pct: (hi - lo) / m * 100.0,
                })
            })
            .collect()
    }
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
    /// The twin's run whose calibration and peak probe these are (`fit.twin`): none ran here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin_run: Option<String>,
}
