//! The `Report` (serde): the one source every renderer reads, and the parameters it was made with.
use super::k6csv::{Convention, StepUnit};
use super::samples::{ProcSource, SaturationRules, WindowServer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Open (arrival rate) or closed (VUs + think time) load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadModel {
    Open,
    Closed,
}

/// The written criteria and what is known about the run's setup (from the plan or flags).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// Criterion 1: p95 of the requests started in a step must stay under this (ms).
    pub slo_p95_ms: f64,
    pub slo_p99_ms: Option<f64>,
    /// Criterion 2: failed share of a step's requests (0.01 = 1 %).
    pub error_budget: f64,
    /// Criterion 3: ok/s may fall this far below sent/s (0.05 = 5 %).
    pub goodput_tolerance: f64,
    /// Seconds each step is held; inferred from the tags when unknown.
    pub hold_s: Option<f64>,
    /// Criterion 4: the generator's VU cap (arrival-rate `maxVUs`).
    pub max_vus: Option<f64>,
    pub model: Option<LoadModel>,
    /// Closed model think time (s).
    pub think_time_s: Option<f64>,
    /// Cores the app box may use (CPU ceiling, app-cores saturation).
    pub app_cores: Option<f64>,
    /// The CPUs PostgreSQL is pinned to (empty when unknown): their busy time per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub db_cpus: Vec<u32>,
    /// The CPUs the app box is pinned to (empty when unknown): steal and other processes there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub app_cpus: Vec<u32>,
    /// The load generator's CPUs (empty when unknown): k6 is lab, not "other", where it shares.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loadgen_cpus: Vec<u32>,
    /// Concurrency slots of the app (php-fpm workers, pg pool size): ceiling N / W.
    pub pool_size: Option<u32>,
    /// The abort guard's p95 threshold (stepped.js: 2.5 x SLO on all requests; breakpoint.js: SLO on hold windows).
    pub abort_p95_ms: Option<f64>,
    /// k6 stopped the test itself (abortOnFail): from the k6 log or exit code; inferred when unknown.
    pub aborted: Option<bool>,
    /// k6 logged `Insufficient VUs`.
    pub insufficient_vus: bool,
    pub rules: SaturationRules,
    /// The measured load's timed actions as they ran (the manifest's; their effect is the
    /// report's `actions`).
    #[serde(skip)]
    pub actions: Vec<super::actions::ActionRun>,
}

impl Params {
    /// Where the run pinned each slot (empty sets when unknown).
    pub(crate) fn pinning(&self) -> super::samples::Pinning<'_> {
        super::samples::Pinning {
            app: &self.app_cpus,
            db: &self.db_cpus,
            loadgen: &self.loadgen_cpus,
        }
    }

    pub fn new(slo_p95_ms: f64) -> Self {
        Params {
            slo_p95_ms,
            slo_p99_ms: None,
            error_budget: 0.01,
            goodput_tolerance: 0.05,
            hold_s: None,
            max_vus: None,
            model: None,
            think_time_s: None,
            app_cores: None,
            db_cpus: Vec::new(),
            app_cpus: Vec::new(),
            loadgen_cpus: Vec::new(),
            pool_size: None,
            abort_p95_ms: None,
            aborted: None,
            insufficient_vus: false,
            rules: SaturationRules::default(),
            actions: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// Failed, but a later step passes: a stall, not the knee.
    Transient,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Transient => "transient",
        }
    }
}

/// One failed criterion of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// 1..4 (lab-spec §5).
    pub criterion: u8,
    pub text: String,
}

/// One step's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// Tag value as in the CSV (`r0150`, `04_rps150`).
    pub name: String,
    /// The number in the name: rps (open) or VUs (closed).
    pub target: u32,
    pub unit: StepUnit,
    pub requests: u64,
    /// Over all requests of the step, like k6's `http_req_duration{step}` sub-metric.
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub avg_ms: f64,
    /// Over successful requests only (k6's `expected_response:true`).
    pub ok_p50_ms: f64,
    pub ok_p95_ms: f64,
    pub ok_p99_ms: f64,
    pub failed_rate: f64,
    /// Requests started per second of the window.
    pub sent_per_s: f64,
    /// Successful responses completed per second inside the window (goodput).
    pub ok_per_s: f64,
    pub verdict: Verdict,
    pub failures: Vec<Failure>,
    /// Window (unix ms) and its length in seconds.
    pub start_ms: i64,
    pub window_s: f64,
    /// The step was cut short (k6 aborted or stopped): per-second rates use the observed span.
    pub truncated: bool,
    /// Non-200 responses by status ("0" = no response: timeout, refused).
    pub non200: BTreeMap<String, u64>,
    pub dropped: u64,
    pub max_vus: Option<f64>,
    pub mean_vus: Option<f64>,
    /// Samples at or beyond p99: n x 1 %.
    pub p99_tail_samples: f64,
    pub server: Option<WindowServer>,
    /// App-box CPU ms per successful response.
    pub ms_cpu_per_ok: Option<f64>,
    /// The app's or the database's CPUs lost more than `samples::HOST_LIMITED_PCT` to the
    /// hypervisor's steal or to processes outside the lab: why, e.g. "the hypervisor stole
    /// 31 % of the app's CPU". The step's figures say as much about the host as the lab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_limited: Option<String>,
}

/// Little's law on one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LittleRow {
    pub step: String,
    pub lambda_per_s: f64,
    pub w_s: f64,
    pub lambda_w: f64,
    /// Time-averaged in-flight requests counted from the request intervals.
    pub l_inflight: f64,
    /// Mean active VUs from k6's `vus` samples (open model: requests in flight at the generator).
    pub l_vus: Option<f64>,
    /// Mean in-flight reported by the app itself (Node metrics), when sampled.
    pub l_app: Option<f64>,
    /// W implied by the VUs: L / λ (the article's 228 / 180 = 1.27 s).
    pub w_from_vus_s: Option<f64>,
    /// |L - λW| / λW with L counted in-flight.
    pub diff: f64,
    /// Little's law reads as a steady state only where the step is stable.
    pub stable: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stability {
    Stable,
    /// In-flight grew 25-50 % between halves: near the edge, run longer to know.
    Drifting,
    /// In-flight grew by half or more, beyond start-up bias and noise: the queue grows.
    Unstable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StabilityRow {
    pub step: String,
    pub inflight_first_half: f64,
    pub inflight_second_half: f64,
    pub verdict: Stability,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedRow {
    pub step: String,
    pub vus: u32,
    /// VUs / (R0 + Z) with R0 the first step's mean latency.
    pub nominal_per_s: f64,
    pub achieved_per_s: f64,
    /// (nominal - achieved) x window: requests real users would have sent (coordinated omission).
    pub missing: f64,
    /// R = N / X - Z.
    pub implied_r_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AbortCheck {
    pub step: String,
    pub threshold_ms: f64,
    pub cumulative_p95_ms: f64,
    pub step_p95_ms: f64,
    /// Samples at or below / above the threshold, cumulative up to the abort.
    pub good: u64,
    pub bad: u64,
    /// B must exceed G / 19 for the cumulative p95 to cross.
    pub bad_needed: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeilingCheck {
    pub step: String,
    pub cores: f64,
    pub ms_cpu_per_ok: f64,
    /// cores x 1000 / CPU ms per ok.
    pub cpu_ceiling_per_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolCeiling {
    pub slots: u32,
    pub w_s: f64,
    /// N / W.
    pub ceiling_per_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossCheckRow {
    pub step: String,
    pub field: String,
    pub ours: f64,
    pub k6: f64,
}

/// Where the host's CPU went during the measured steps (mean cores): did anything outside the
/// lab share the machine? busy = lab + harness + steal + other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostShare {
    pub busy_cores: f64,
    /// The lab's containers (cgroup samples), k6 included.
    pub lab_cores: f64,
    /// perflab itself and dockerd.
    pub harness_cores: f64,
    /// Stolen by the hypervisor (None in runs recorded before steal was sampled).
    pub steal_cores: Option<f64>,
    /// What is left: other processes on the host (never below 0).
    pub other_cores: f64,
    pub samples: usize,
    /// `other_cores` by who used it, largest first: the processes outside the lab by source,
    /// irq time outside any process, and what stays unattributed (empty in runs recorded
    /// before `samples/hostprocs.jsonl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<HostConsumer>,
    /// The busiest process names outside the lab (perflab and dockerd aside), busiest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_processes: Vec<NamedCores>,
    /// softirq + hard irq time on all CPUs (cores), inside processes or not (network receive
    /// on the bridge and the veths shows here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq_cores: Option<f64>,
}

/// Who used part of the host's CPU outside the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consumer {
    /// Processes of this source (`samples/hostprocs.jsonl`).
    Process(ProcSource),
    /// softirq and hard irq time in no process: the rest, up to the irq time measured.
    Irq,
    /// Neither: processes too short-lived to be seen whose parent is gone, rounding (negative
    /// when the sources add up to more than the busy time).
    Unattributed,
}

impl Consumer {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Consumer::Process(s) => s.label(),
            Consumer::Irq => "softirq/irq",
            Consumer::Unattributed => "unattributed",
        }
    }

    /// Another user's work sharing the host (not the lab's plumbing, not the kernel's).
    pub(crate) fn is_other_users(self) -> bool {
        matches!(
            self,
            Consumer::Process(
                ProcSource::Build | ProcSource::K6 | ProcSource::Containers | ProcSource::Other
            )
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostConsumer {
    pub who: Consumer,
    /// Mean cores over the window.
    pub cores: f64,
}

/// A process name's mean CPU over a window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NamedCores {
    pub name: String,
    pub source: ProcSource,
    pub cores: f64,
}

/// The host's CPU over one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepHostShare {
    pub step: String,
    pub share: HostShare,
}

/// Checks on the measurement itself (lab-spec §6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Checks {
    pub little: Vec<LittleRow>,
    pub stability: Vec<StabilityRow>,
    /// Seconds from the end of the last step's window until the last response.
    pub drain_s: Option<f64>,
    pub cpu_ceiling: Option<CeilingCheck>,
    pub pool_ceiling: Option<PoolCeiling>,
    pub closed: Vec<ClosedRow>,
    pub abort: Option<AbortCheck>,
    /// Highest k6 container CPU, % of one core (goal < 80 %).
    pub k6_cpu_max_pct: Option<f64>,
    /// Differences beyond 1 % (or 0.5 ms) against k6's summary: bugs to chase.
    pub cross_check: Vec<CrossCheckRow>,
    /// Steps compared with the summary (0 = no summary).
    pub cross_checked_steps: usize,
    /// The host's CPU over the measured steps, split by who used it.
    #[serde(default)]
    pub host_share: Option<HostShare>,
    /// The same per step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_steps: Vec<StepHostShare>,
}

/// One second of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondRow {
    /// Unix seconds.
    pub t: i64,
    /// Seconds since the first step's start.
    pub rel: i64,
    pub done: u32,
    pub ok: u32,
    pub started: u32,
    pub non200: u32,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub inflight: f64,
    pub dropped: u32,
    pub vus: Option<f64>,
    pub cpu_pct: BTreeMap<String, f64>,
    pub psi_pct: Option<f64>,
    pub dockerd_pct: Option<f64>,
}

/// Where the data came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    pub title: String,
    pub csv: String,
    pub summary: Option<String>,
    pub convention: Option<Convention>,
    pub rows: u64,
    pub requests: u64,
    /// Requests outside the measured steps (ramp, warm-up, untagged).
    pub excluded: BTreeMap<String, u64>,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    pub has_samples: bool,
    /// Several load generators (k6 execution segments): one entry per instance, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub generators: Vec<GeneratorSource>,
}

/// One load generator's share of a merged run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratorSource {
    /// `k6/g<i>/requests.csv.gz`.
    pub csv: String,
    pub requests: u64,
    /// Start of its first request (unix ms).
    pub first_request_ms: Option<i64>,
    pub dropped: u64,
}

/// The analysis of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub source: Source,
    pub params: Params,
    pub model: LoadModel,
    pub hold_s: f64,
    pub steps: Vec<StepReport>,
    /// Target of the last step that passes with every earlier step passing.
    pub last_passing: Option<u32>,
    /// Target of the first failing step that is not transient.
    pub knee: Option<u32>,
    /// The last passing step right below the knee (transient steps before it allowed).
    pub passing_below_knee: Option<u32>,
    /// "knee 180 rps: p95 1,113 ms > 200; fpm 20/20 busy, listen queue 186; ..."
    pub knee_why: Option<String>,
    /// Dropped iterations outside the warm-up.
    pub dropped_iterations: u64,
    pub dropped_warmup: u64,
    pub checks: Checks,
    /// The seconds around the knee (or the last step); absent in the recorded fixtures.
    #[serde(default)]
    pub per_second: Vec<SecondRow>,
    /// The whole run, one row per second; absent in the recorded fixtures.
    #[serde(default)]
    pub timeline: Vec<SecondRow>,
    /// Distinct log messages with counts, by log name.
    #[serde(default)]
    pub logs: BTreeMap<String, super::logs::LogDigest>,
    /// Access-log summary per step (diag-acc: php-fpm `%d %C`, nginx request/connect time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub access: Vec<super::access::AccessRow>,
    pub warnings: Vec<String>,
    /// Figures of the steps not shown as measured: outside their physical bounds, or not
    /// measurable from the samples in the window (`bounds`). Claims judged on them are n/a.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unusable: Vec<super::bounds::Unusable>,
    /// The refined max sustainable rate (`perflab run --refine`): probes on the same stack
    /// after the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine: Option<super::refine::Refined>,
    /// The open load, its closed twin and the twin corrected (`load.pause`), from the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omission: Option<super::omission::Omission>,
    /// How the run was fitted to the host (`perflab run --fit`), from the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<super::fit::FitRecord>,
    /// Work injected on purpose (`stack.<lab>.burn_us`), from the run's manifest: the header
    /// says so, so an injected run is never taken for a clean one. Empty: a clean run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injected: Vec<String>,
    /// The host's CPU speed before and after the loads (`host::speed`), from the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_speed: Option<crate::host::speed::HostSpeed>,
    /// Recovery after overload (`load.recover_rps`): drain, p95 back, work wasted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<super::recovery::Recovery>,
    /// The load's timed actions (`load.actions`: a php-fpm reload) and what followed each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<super::actions::ActionEffect>,
    /// The trigger and whether goodput came back after it (`load.trigger`), from the manifest
    /// and the per-second rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<super::trigger::TriggerReport>,
    /// The load was drop.js's weighted journeys (`load.drop`), from the manifest: the reports
    /// show the responses by class with a trigger or without one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub journeys: bool,
    /// The Universal Scalability Law fitted to a closed-model run's clean steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usl: Option<super::usl::UslSweep>,
}

/// The object `perflab analyze --json` prints (issue 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeJson {
    pub steps: Vec<AnalyzeJsonStep>,
    pub last_passing: Option<u32>,
    pub knee: Option<u32>,
    pub dropped_iterations: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalyzeJsonStep {
    pub name: String,
    pub target: u32,
    pub requests: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub failed_rate: f64,
    pub sent_per_s: f64,
    pub ok_per_s: f64,
    pub verdict: Verdict,
}

impl Report {
    pub fn to_analyze_json(&self) -> AnalyzeJson {
        AnalyzeJson {
            steps: self
                .steps
                .iter()
                .map(|s| AnalyzeJsonStep {
                    name: s.name.clone(),
                    target: s.target,
                    requests: s.requests,
                    p50_ms: s.p50_ms,
                    p95_ms: s.p95_ms,
                    p99_ms: s.p99_ms,
                    max_ms: s.max_ms,
                    failed_rate: s.failed_rate,
                    sent_per_s: s.sent_per_s,
                    ok_per_s: s.ok_per_s,
                    verdict: s.verdict,
                })
                .collect(),
            last_passing: self.last_passing,
            knee: self.knee,
            dropped_iterations: self.dropped_iterations,
        }
    }
    /// Why `figure` of step `step` is not shown as measured, if it is not.
    pub fn unusable(&self, step: &str, figure: &str) -> Option<&super::bounds::Unusable> {
        self.unusable
            .iter()
            .find(|u| u.step == step && u.figure == figure)
    }
    pub(crate) fn unit(&self) -> &'static str {
        self.steps.first().map(|s| s.unit.as_str()).unwrap_or("rps")
    }
}
