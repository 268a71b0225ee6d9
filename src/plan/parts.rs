//! The parts a plan is made of, plain data: the `--quick` profile, the timeline's windows and
//! steps, k6's stages, the VU sizing and the abort guard.
use serde::{Deserialize, Serialize};

/// The `--quick` profile: each duration x `factor`, rounded up, not below the floors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuickProfile {
    pub factor: f64,
    pub min_hold_s: u32,
    pub min_ramp_s: u32,
    pub min_warmup_s: u32,
    /// The experiment's own values before scaling.
    pub original_hold_s: u32,
    pub original_ramp_s: u32,
    pub original_warmup_s: u32,
}

impl QuickProfile {
    pub(crate) const FACTOR: f64 = 0.25;

    pub(crate) fn scale(v: u32, min: u32) -> u32 {
        if v == 0 {
            0
        } else {
            ((v as f64 * Self::FACTOR).ceil() as u32).max(min).min(v)
        }
    }
}

/// What a window of the timeline is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowKind {
    /// breakpoint.js warm-up scenario (constant arrival rate, untagged).
    Warmup,
    /// Linear ramp to the step's target (tagged `step:ramp`, not measured).
    Ramp,
    /// Hold at the target: the measured window of the step.
    Hold,
    /// The recovery phase after the last step (`load.recover_rps`, tagged `stage:recover`):
    /// not a step, read by the report's recovery section.
    Recover,
    /// drop.js's ramp to 0 after the last step (`load.drop.ramp_down_s`, tagged
    /// `stage:rampdown`): not a step, left out of every step's figures.
    RampDown,
}

/// One window of the k6 timeline; offsets in seconds from k6's test start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub kind: WindowKind,
    /// Step index (0-based) for ramp/hold windows.
    pub step: Option<usize>,
    /// Offered load: rps (open) or VUs (closed); the warm-up's rate for the warm-up.
    pub target: u32,
    pub start_s: u32,
    pub end_s: u32,
    pub measured: bool,
    /// The k6 tag value requests started in this window carry (`stage:r0150`, `step:04_rps150`, `step:ramp`).
    pub tag: Option<String>,
}

/// One step with its hold window (the measured one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub index: usize,
    pub target: u32,
    /// Start of the step (ramp start for breakpoint, jump for stepped).
    pub start_s: u32,
    pub hold_start_s: u32,
    pub hold_end_s: u32,
    /// Tag value selecting the step's requests: `r0150` (key `stage`) or `04_rps150` (key `step`).
    pub tag: String,
    /// Little's law for this step: VUs busy at the SLO latency (open model).
    pub vus_at_slo: Option<u32>,
    /// Closed model: nominal rate upper bound `VUs / think time`.
    pub nominal_rps_max: Option<f64>,
    /// Requests expected in the hold window (rate x hold), and the tail samples behind p99.
    pub expected_requests: Option<u32>,
    pub p99_tail_samples: Option<u32>,
}

/// One k6 stage (`{target, duration}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct K6Stage {
    pub target: u32,
    pub duration_s: u32,
}

impl K6Stage {
    /// k6 duration string, e.g. `"22s"`.
    pub(crate) fn duration(&self) -> String {
        format!("{}s", self.duration_s)
    }
}

/// VU sizing (arrival-rate executors) by Little's law.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VuSizing {
    pub pre_vus: u32,
    pub max_vus: u32,
    /// `max step x SLO` (open) — VUs busy if every request takes the SLO.
    pub needed_at_slo: u32,
    /// `max step x client timeout` — VUs needed to never drop before the timeout.
    pub needed_at_timeout: u32,
    /// At the largest step k6 runs out of VUs once mean latency passes this (s): `max_vus / max step`.
    pub drop_latency_s: Option<f64>,
    pub explanation: String,
}

/// Abort guard as the script will apply it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbortPlan {
    pub enabled: bool,
    /// stepped.js: cumulative p95 guard (ABORT_P95_MS); breakpoint.js: p95 of hold windows vs SLO.
    pub p95_ms: f64,
    pub error_rate: f64,
    /// delayAbortEval, counted from the test start (stepped 10 s; breakpoint WARMUP + 30 s).
    pub delay_eval_s: u32,
}
