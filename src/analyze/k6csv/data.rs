//! What a k6 CSV is read into (`K6Data`: the steps' tags and aggregates, the timeline), the
//! reader's limits and its errors.
use super::timeline::Timeline;
use crate::analyze::hist::LatencyHist;
use std::collections::BTreeMap;

/// Which tag convention names the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    /// stepped.js: `stage:rNNNN` (rps).
    Stage,
    /// breakpoint.js: `step:NN_rpsX` / `step:NN_vusX` (hold windows only).
    Step,
}

/// What a step's number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepUnit {
    Rps,
    Vus,
}

impl StepUnit {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StepUnit::Rps => "rps",
            StepUnit::Vus => "VUs",
        }
    }
}

/// A step tag value parsed: `r0150` or `04_rps150` / `06_vus60`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepTag {
    pub convention: Convention,
    pub order: u32,
    pub target: u32,
    pub unit: StepUnit,
}

/// Parse a tag (key, value) into a step; `None` for ramp, warm-up and anything else.
pub(crate) fn parse_step_tag(key: &str, value: &str) -> Option<StepTag> {
    match key {
        "stage" => {
            let n = value.strip_prefix('r')?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let target = n.parse().ok()?;
            Some(StepTag {
                convention: Convention::Stage,
                order: target,
                target,
                unit: StepUnit::Rps,
            })
        }
        "step" => {
            let (nn, rest) = value.split_once('_')?;
            let order = nn.parse().ok()?;
            let (unit, num) = if let Some(n) = rest.strip_prefix("rps") {
                (StepUnit::Rps, n)
            } else if let Some(n) = rest.strip_prefix("vus") {
                (StepUnit::Vus, n)
            } else {
                return None;
            };
            let target = num.parse().ok()?;
            Some(StepTag {
                convention: Convention::Step,
                order,
                target,
                unit,
            })
        }
        _ => None,
    }
}

/// Everything measured about the requests that started in one step.
#[derive(Debug, Clone)]
pub struct StepAgg {
    pub name: String,
    pub tag: StepTag,
    pub all: LatencyHist,
    pub ok: LatencyHist,
    pub requests: u64,
    pub ok_count: u64,
    /// Responses by HTTP status (0 = no response: timeout, reset, refused).
    pub statuses: BTreeMap<u16, u64>,
    /// k6 `error_code` counts (e.g. 1050 = request timeout).
    pub error_codes: BTreeMap<String, u64>,
    pub first_start_ms: i64,
    pub last_start_ms: i64,
    pub last_end_ms: i64,
}

/// The result of one pass over a k6 CSV.
#[derive(Clone, Default)]
pub struct K6Data {
    pub convention: Option<Convention>,
    /// Steps in step order.
    pub steps: Vec<StepAgg>,
    pub timeline: Timeline,
    /// `vus` samples (unix ms, active VUs).
    pub vus: Vec<(i64, f64)>,
    pub vus_max: f64,
    pub dropped_total: u64,
    /// Drops in the warm-up scenario (not counted against the system).
    pub dropped_warmup: u64,
    /// Drop timestamps per scenario are folded into the timeline; this keeps the first one.
    pub first_drop_ms: Option<i64>,
    /// The first and last start (unix ms) of the recovery phase's requests (`stage:recover`,
    /// `load.recover_rps`), when the run has one.
    pub recover_span: Option<(i64, i64)>,
    /// How many requests the recovery phase started.
    pub recover_sent: u64,
    /// Requests not in any step: `ramp`, `warmup`, `(untagged)`, `recover`.
    pub excluded: BTreeMap<String, u64>,
    pub rows: u64,
    pub requests: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// Start (unix ms) of the earliest request, any tag: when this generator began sending.
    pub first_request_ms: Option<i64>,
    /// True when timestamps were whole seconds (k6's default CSV time format).
    pub second_resolution: bool,
    /// Rows skipped for a stray timestamp (see [`MAX_SPAN_MS`]), and the first one's line.
    pub skipped_rows: u64,
    pub first_skipped_line: Option<u64>,
}

/// A line longer than this (bytes) is an error: k6 writes lines of a few hundred bytes.
pub(crate) const MAX_LINE: usize = 64 * 1024;
/// The largest `http_req_duration` (ms) accepted: 10 minutes, where the latency histograms
/// saturate; k6's request timeout is far below.
pub(crate) const MAX_DURATION_MS: f64 = 600_000.0;
/// Largest `vus`, `vus_max` or `dropped_iterations` value accepted.
pub(crate) const MAX_COUNT: f64 = 1e9;
/// Rows are kept within this distance (ms) of the run's anchor (the median time of its first
/// rows); rows farther away (a stray line from another run, a clock jump) are skipped and
/// counted in a warning.
pub(crate) const MAX_SPAN_MS: i64 = 24 * 3600 * 1000;
/// Timestamps before 2000-01-01 or from 2100-01-01 on are skipped the same way.
pub(crate) const PLAUSIBLE_MS: std::ops::Range<i64> = 946_684_800_000..4_102_444_800_000;

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("reading the k6 CSV failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the k6 CSV has no header line (empty file?)")]
    Empty,
    #[error("the k6 CSV header lacks column `{0}`: is this k6's `--out csv` output?")]
    MissingColumn(&'static str),
    #[error(
        "line {line}: longer than {MAX_LINE} bytes (no newline): is this k6's `--out csv` output?"
    )]
    LineTooLong { line: u64 },
    #[error("line {line}: {what} (field `{field}`)")]
    BadField {
        line: u64,
        field: &'static str,
        what: String,
    },
}
