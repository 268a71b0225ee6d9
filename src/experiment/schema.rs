//! The YAML shape of one catalog file under `experiments/`: an experiment or a group.
//!
//! This is the contract between the catalog and every later stage (plan, stack, load,
//! analyze). Field names are the YAML keys; units are in the names (`_s`, `_ms`).
pub use crate::claim::schema::{Bound, Claim, Refuted, StepAt, Tol, Tolerance};
pub use crate::lab::{
    DemoSettings, Lab, Listen, NodeSettings, PhpSettings, PostgresSettings, Script, StackSettings,
};
use serde::{Deserialize, Serialize};

/// The `kind:` key of an experiment file (optional there; `experiment` is the default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExperimentKind {
    #[default]
    Experiment,
}

/// The `kind:` key of a group file (required: `kind: group`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    #[default]
    Group,
}

/// One catalog file: either an experiment or a group (decided by its `kind:` key).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)] // few dozen entries, read once
pub enum CatalogEntry {
    Experiment(Experiment),
    Group(Group),
}

impl CatalogEntry {
    pub(crate) fn id(&self) -> &str {
        match self {
            CatalogEntry::Experiment(e) => &e.id,
            CatalogEntry::Group(g) => &g.id,
        }
    }

    /// `"experiment"` or `"group"`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            CatalogEntry::Experiment(_) => "experiment",
            CatalogEntry::Group(_) => "group",
        }
    }
}

/// One runnable experiment: a stack configuration and a load shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// `experiment` (may be omitted).
    #[serde(default)]
    pub kind: ExperimentKind,
    pub id: String,
    pub lab: Lab,
    /// What the experiment does, one sentence.
    pub description: String,
    /// The article's finding, one line (printed by `perflab list`).
    pub finding: String,
    /// The article's figures for this experiment, free text, shown beside measured results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Where a value is not given by the article and was inferred or chosen, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    pub stack: StackSettings,
    pub load: LoadSettings,
    /// The finding as checkable claims (`perflab verify`); see `Claim`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Claim>,
    /// How the published numbers translate to this host (`perflab run --fit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Fit>,
}

/// A named sequence of experiments run back to back, each on a fresh stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// Always `group`.
    pub kind: GroupKind,
    pub id: String,
    pub description: String,
    /// Experiment (or group) ids, in run order; repeats allowed (e.g. diag alternation).
    pub members: Vec<String>,
    /// A recovered/stuck map the group draws (`perflab verify ID`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<TriggerMap>,
}

/// `map:` of a group (issue 44): one experiment with a `load.trigger`, run at each trigger size
/// (the columns) under each configuration (the rows); a cell is one round of `experiment` with
/// its row's `set` pairs and `size.key=<value>`, read back by that configuration. Its outcome
/// is the trigger's: recovered, stuck or n/a.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriggerMap {
    /// The experiment every cell runs (it has a `load.trigger`).
    pub experiment: String,
    pub size: MapSize,
    /// The configurations, top to bottom.
    pub rows: Vec<MapRow>,
}

/// The trigger's size: the `--set` key the columns vary, their values in ascending order, and
/// how close `--refine` brings the two sizes around a row's knife edge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSize {
    pub key: String,
    pub values: Vec<f64>,
    pub resolution: f64,
}

/// One configuration of a map: a name and its `--set` pairs (none: the experiment as written).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapRow {
    pub name: String,
    #[serde(default)]
    pub set: Vec<String>,
}

/// Open model (arrival rate) or closed model (VUs with think time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Model {
    Open,
    Closed,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSettings {
    pub script: Script,
    #[serde(default = "default_model")]
    pub model: Model,
    /// Path on the lab's entry point, e.g. `/api/db` or `/db`.
    pub endpoint: String,
    /// Offered load per step: requests/s (open) or VUs (closed). Strictly increasing.
    pub steps: Vec<u32>,
    /// Seconds each step is held (measured window).
    pub hold_s: u32,
    /// Seconds of ramp before each hold (breakpoint script; 0 = jump as stepped.js does).
    #[serde(default)]
    pub ramp_s: u32,
    /// Seconds of warm-up scenario before the first step (breakpoint script).
    #[serde(default)]
    pub warmup_s: u32,
    /// Arrival rate of the warm-up scenario (requests/s).
    #[serde(default = "default_warmup_rps")]
    pub warmup_rps: u32,
    /// The SLO on p95 of requests started in a step (ms).
    pub slo_p95_ms: f64,
    /// Optional SLO on p99 (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_p99_ms: Option<f64>,
    /// Error budget as a fraction (0.01 = 1 %).
    #[serde(default = "default_error_budget")]
    pub error_budget: f64,
    /// Abort guards on (k6 stops the test when the guard crosses).
    #[serde(default = "default_true")]
    pub abort: bool,
    /// Abort guard on cumulative p95 (stepped.js `ABORT_P95_MS`; default 2.5 x SLO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_p95_ms: Option<f64>,
    /// VUs allocated before the test (arrival-rate `preAllocatedVUs`).
    pub pre_vus: u32,
    /// Upper bound of VUs (arrival-rate `maxVUs`).
    pub max_vus: u32,
    /// Client timeout per request (s).
    pub timeout_s: u32,
    /// Closed model think time between iterations (s). Required for `model: closed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time_s: Option<f64>,
    /// Why `max_vus` is deliberately below what the top step needs, Little's law at the SLO
    /// (`max step x SLO`: without a reason an error) or at the client timeout (`max step x
    /// timeout_s`: without a reason a warning): the article's harness values kept, or a cap hit
    /// on purpose (1c, 3b).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vu_cap_reason: Option<String>,
    /// The recovery phase (stepped.js, open model): after the last step the load drops to this
    /// rate (requests/s, below the knee: half of it, as seed 002's stress test ends) for
    /// `recover_s` seconds, tagged `stage:recover`; the report's recovery section reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover_rps: Option<u32>,
    /// Seconds the drop to `recover_rps` is held (the recovery phase's length).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recover_s: Option<u32>,
    /// A freeze of the app in the first step, and the closed twin load (`demo-pause`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<Pause>,
    /// Commands run in a container of the lab at planned instants of the load (a php-fpm
    /// reload during the collapse), each through the Docker API's exec, recorded in the manifest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<Action>,
    /// The drop profile (seed 004, `drop.js`): weighted journeys over the lab's pages and
    /// clients that retry; the steps are its stages, held in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<DropLoad>,
    /// A trigger in one step (a CPU cut on a container or a cache flush), then the same
    /// offered rate: whether goodput comes back (issue 44's recovery test).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<Trigger>,
}

/// A command run in a container of the lab at a planned instant of the load: `after_s`
/// seconds into the window `during` names (`--quick` scales it with the window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// Its name in the manifest and the report (`reload`).
    pub name: String,
    /// The window it falls in.
    pub during: ActionWindow,
    /// Seconds into that window.
    pub after_s: f64,
    /// The role whose container runs it (`php-fpm`): a role of the experiment's lab.
    pub role: String,
    /// The command, argv (no shell unless it names one): `[sh, -c, "kill -USR2 1"]`.
    pub exec: Vec<String>,
    /// What it does and why, in words (kept in the plan beside the instant).
    pub why: String,
}

/// The window of the load an action falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ActionWindow {
    /// The last step's hold (the overload, in a recovery profile).
    Top,
    /// The recovery phase (`load.recover_rps`, `load.recover_s`).
    Recover,
}

/// How the drop profile's clients retry a journey whose answer was not a 200.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetryPolicy {
    /// One request per journey.
    #[default]
    None,
    /// Again at once, as a refresh button does, up to `max_retries` times.
    Immediate,
    /// After a capped exponential backoff with full jitter: a wait drawn from 0 to
    /// min(cap, base x 2^attempt).
    Backoff,
}

impl RetryPolicy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RetryPolicy::None => "none",
            RetryPolicy::Immediate => "immediate",
            RetryPolicy::Backoff => "backoff",
        }
    }
}

/// `load.drop:`: the journeys and the clients of the drop profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropLoad {
    /// Percent of the journeys per page (the lab's endpoints without their `/`); they sum to
    /// 100 (seed: 40 home, 20 landing, 15 gacha, 15 raffle, 10 catalog).
    pub journeys: std::collections::BTreeMap<String, u32>,
    /// How a client retries a failed journey.
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Most retries of one journey.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Backoff's base wait (ms).
    #[serde(default = "default_backoff_base_ms")]
    pub backoff_base_ms: u32,
    /// Backoff's cap (ms).
    #[serde(default = "default_backoff_cap_ms")]
    pub backoff_cap_ms: u32,
    /// A retry budget: retries a client may send as a share of its requests (0 to 1; absent:
    /// no budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_budget: Option<f64>,
    /// Items a cold page's journey picks from (one cache key each).
    #[serde(default = "default_items")]
    pub items: u32,
    /// The seed's last stage: a ramp to 0 over this many seconds after the last step (0: none).
    #[serde(default)]
    pub ramp_down_s: u32,
    /// The clients' random seed: each k6 VU seeds its `Math.random` (journeys, items, jitter)
    /// with `seed x 1000 + its number`, so runs with another seed draw otherwise (absent:
    /// unseeded). Which VU starts which arrival still follows the timing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
}

fn default_max_retries() -> u32 {
    3
}
fn default_backoff_base_ms() -> u32 {
    100
}
fn default_backoff_cap_ms() -> u32 {
    2000
}
fn default_items() -> u32 {
    50
}

/// The role a CPU cut throttles when `load.trigger.role` is absent: the storefront's backend.
pub const DEFAULT_TRIGGER_ROLE: &str = "api";

/// What a trigger does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TriggerKind {
    /// Cut a container's CPU (cgroup `cpu.max`) to `1 - cut` of what it had, for `for_s`.
    Cpu,
    /// Empty the front's cache once (`POST /admin/flush`).
    Flush,
}

/// `load.trigger:`: a short trigger in one step, then the same offered rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    pub kind: TriggerKind,
    /// The step it happens in, 1 = the first (absent: the last).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// Seconds into the step's hold at which it starts (the goodput before it is the baseline).
    pub at_s: f64,
    /// How long the CPU cut lasts (s; a flush is instant: 0).
    #[serde(default)]
    pub for_s: f64,
    /// The share of the container's CPU a cut takes away (0 to 1: 0.9 leaves 10 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<f64>,
    /// The container a CPU cut throttles, by role name (absent: the lab's backend, `api`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The stated time: goodput must be back at its pre-trigger level within this many
    /// seconds of the trigger's end for the run to have recovered.
    pub recover_within_s: f64,
}

fn default_model() -> Model {
    Model::Open
}
fn default_warmup_rps() -> u32 {
    20
}
fn default_error_budget() -> f64 {
    0.01
}
fn default_true() -> bool {
    true
}

/// The app is frozen (every process of its container stopped) for `for_s` seconds, `at_s`
/// seconds into the hold of the first step; the measured load is open, and a closed load of
/// `closed_vus` VUs with `closed_think_time_s` between iterations then runs the same step on
/// the same stack with the same freeze.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    /// Seconds into the first step's hold (D = `hold_s`) at which the freeze starts.
    pub at_s: f64,
    /// How long the app stays frozen (P, seconds): 0 < P < D.
    pub for_s: f64,
    /// VUs of the closed twin load.
    pub closed_vus: u32,
    /// Think time of the closed twin load (s).
    pub closed_think_time_s: f64,
}

/// How an experiment's published numbers are fitted to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    /// The calibration load, before the measured steps on the same stack.
    #[serde(default)]
    pub calibrate: Calibrate,
    /// Applied in order; each sets one field.
    pub rules: Vec<FitRule>,
    /// The calibrated ceiling the knee-needing claims are about, in the steps' units (an
    /// expression over the fit's quantities (`fit::FitQ`): `db_ceiling`, `pool_rps`); the fitted top step must
    /// reach `reach::REACH` times it (`validate` checks it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<String>,
    /// Another experiment whose newest complete fitted run lends its calibration (and peak
    /// probe) instead of one of this run's own, so the two run the same fitted steps and
    /// compare at the same rates (`diag-unix` takes `diag-tcp`'s). That run must exist:
    /// `perflab run` says which to run first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin: Option<String>,
}

/// The calibration load: one open-model step well under any knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibrate {
    /// Requests per second.
    #[serde(default = "default_rate")]
    pub rate: u32,
    /// Seconds held (the measured window).
    #[serde(default = "default_hold")]
    pub hold_s: u32,
    /// A peak probe after the calibration: an open load at this rate (an expression over the
    /// calibration's quantities, e.g. `1.2 * app_ceiling`) for `hold_s`, with the published
    /// VUs, so the quantities `peak_*` are measured where a ceiling binds (`loads/peak/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak: Option<String>,
}

impl Default for Calibrate {
    fn default() -> Self {
        Calibrate {
            rate: default_rate(),
            hold_s: default_hold(),
            peak: None,
        }
    }
}

fn default_rate() -> u32 {
    20
}
fn default_hold() -> u32 {
    15
}

/// One fitted field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRule {
    /// The field, as `--set` names it: `load.steps`, `stack.node.pg_conn_timeout_ms`.
    pub set: String,
    /// The fitted value: an expression over the fit's quantities (`fit::FitQ`); a list applies it to each of its
    /// published values `x`. Integer fields are rounded; a list is kept strictly increasing.
    pub to: String,
    /// The article's relation in words, kept in the manifest beside the numbers.
    pub why: String,
}

/// Is `id` a valid catalog id (lowercase letters, digits, `-`)?
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
