//! The history's types: what was asked (`Request`), what was found (`History`: its series,
//! each with its points, change points and flipped claims) and the acknowledgements (`Ack`).
use super::points::{Point, Steps};
use crate::analyze::changepoint::Options;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What `perflab history` was asked.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Experiment ids (a group expanded); empty: every experiment folder of out/.
    pub experiments: Vec<String>,
    pub suite: Option<String>,
    /// Only runs created at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Keep slowed and host-limited points in the detection (they are always listed, marked).
    pub all_points: bool,
    pub options: Options,
}

/// Everything `perflab history` found.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub out_root: String,
    pub options: Options,
    pub series: Vec<Series>,
    /// Run directories left out that are news: unreadable, or copies of a run counted.
    pub skipped: Vec<String>,
    /// The acknowledged change points (`ack`), as read from `history-ack.json`.
    pub acks: Vec<Ack>,
}

/// One change point of one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub metric: String,
    /// The index in the series' points of the first point after the change.
    pub index: usize,
    /// That point's run (what `history ack` takes) and time.
    pub run: String,
    pub created: DateTime<Utc>,
    pub mean_before: f64,
    pub mean_after: f64,
    /// `mean_after / mean_before - 1`, in %.
    pub change_pct: f64,
    pub pvalue: f64,
    /// The figure moved the bad way (CPU or p95 up, rate or knee down); None for a claim's
    /// value, whose good way its verdict says.
    pub regression: Option<bool>,
    /// The versions that differ between the point before and this one (`components`).
    pub changed: Vec<String>,
}

impl Change {
    /// What changed around it, or who is suspected when nothing did.
    pub fn cause(&self) -> String {
        match self.changed.is_empty() {
            true => "nothing changed: the host or noise is the suspect".into(),
            false => self.changed.join(", "),
        }
    }
}

/// A claim that failed after passing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flip {
    pub claim: String,
    pub last_pass: String,
    pub last_pass_at: DateTime<Utc>,
    pub first_fail: String,
    pub first_fail_at: DateTime<Utc>,
    /// The index of the first failing point.
    pub index: usize,
}

/// One figure's values over the series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// One experiment × suite × configuration over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub experiment: String,
    pub suite: String,
    /// `--set` overrides, profile, fit: what the points share.
    pub config: String,
    pub steps: Steps,
    pub points: Vec<Point>,
    pub metrics: Vec<Metric>,
    /// Points in the detection (the unflagged ones, or all with `--all-points`).
    pub judged: usize,
    /// Fewer judged points than the window: no change point is looked for.
    pub too_short: bool,
    pub changes: Vec<Change>,
    pub flips: Vec<Flip>,
}

/// One acknowledged point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ack {
    pub experiment: String,
    /// The point's run, `exp/<run directory>`.
    pub point: String,
    /// The point's time: what later regressions are compared with.
    pub point_created: DateTime<Utc>,
    /// When it was acknowledged.
    pub acked: DateTime<Utc>,
}
