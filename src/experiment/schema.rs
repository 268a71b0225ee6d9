//! The YAML shape of one catalog file under `experiments/`: an experiment or a group.
//!
//! This is the contract between the catalog and every later stage (plan, stack, load,
//! analyze). Field names are the YAML keys; units are in the names (`_s`, `_ms`).
pub use crate::claim::schema::{Bound, Claim, StepAt, Tol, Tolerance};
use serde::{Deserialize, Serialize};

/// Which lab an experiment runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lab {
    /// nginx + php-fpm + Laravel + PostgreSQL (lab-spec §3).
    Php,
    /// Express + PostgreSQL (lab-spec §4).
    Node,
    /// The tiny capacity server of seed 002 (16 workers x 40 ms), for seconds-long runs.
    Demo,
}

impl Lab {
    pub const ALL: [Lab; 3] = [Lab::Php, Lab::Node, Lab::Demo];

    /// The lab named `name` (`php`, `node`, `demo`), if any.
    pub fn from_name(name: &str) -> Option<Lab> {
        Lab::ALL.into_iter().find(|l| l.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lab::Php => "php",
            Lab::Node => "node",
            Lab::Demo => "demo",
        }
    }

    /// The HTTP endpoints the lab's app serves (an experiment's `load.endpoint` must be one).
    /// Part of the schema: the lab's descriptor (`lab::`) serves them.
    pub fn endpoints(self) -> &'static [&'static str] {
        match self {
            Lab::Php => &["/api/db", "/api/slow", "/api/ping"],
            Lab::Node => &["/cpu", "/db", "/dbsleep"],
            Lab::Demo => &["/work"],
        }
    }

    /// The keys of this lab's `stack.<lab>:` section (the fields of its settings struct; a
    /// test keeps them in sync).
    pub(crate) fn settings_keys(self) -> &'static [&'static str] {
        match self {
            Lab::Php => &[
                "max_children",
                "listen",
                "backlog",
                "persistent",
                "access_log",
                "warmup_requests",
                "burn_us",
                "code_volumes",
                "oversubscribe_reason",
            ],
            Lab::Node => &[
                "processes",
                "pool_max",
                "pg_conn_timeout_ms",
                "burn_us",
                "code_volumes",
            ],
            Lab::Demo => &["workers", "service_ms"],
        }
    }

    /// The lab's stack has a PostgreSQL (`stack.postgres:` applies; the descriptor's roles
    /// agree, by a test in `lab`).
    pub(crate) fn uses_postgres(self) -> bool {
        self != Lab::Demo
    }

    /// The key of this lab's section under `stack:`.
    pub fn stack_key(self) -> &'static str {
        self.as_str()
    }
}

impl std::fmt::Display for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    pub fn id(&self) -> &str {
        match self {
            CatalogEntry::Experiment(e) => &e.id,
            CatalogEntry::Group(g) => &g.id,
        }
    }

    /// `"experiment"` or `"group"`.
    pub fn kind(&self) -> &'static str {
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
    pub fit: Option<super::fit::Fit>,
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
}

/// Container-side settings. Only the section for the experiment's lab is used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackSettings {
    #[serde(default)]
    pub postgres: PostgresSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub php: Option<PhpSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeSettings>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demo: Option<DemoSettings>,
}

impl StackSettings {
    /// The injected CPU work of the lab's section (`stack.<lab>.burn_us`), when not 0: a run
    /// made with it is not a clean run, and its reports say so.
    pub fn injected(&self) -> Vec<String> {
        let burns = [
            ("php", self.php.as_ref().map(|p| p.burn_us)),
            ("node", self.node.as_ref().map(|n| n.burn_us)),
        ];
        burns
            .into_iter()
            .filter_map(|(lab, us)| us.filter(|us| *us > 0).map(|us| (lab, us)))
            .map(|(lab, us)| {
                format!("stack.{lab}.burn_us={us} ({us} µs of CPU burnt per request in the app)")
            })
            .collect()
    }

    /// The app's concurrent request slots, its pool N: php `max_children`, node `pool_max`
    /// x `processes` (each process has its own pool), demo `workers`. One definition for the
    /// fit's `pool` and the report's pool ceiling.
    pub fn slots(&self) -> Option<u32> {
        (self.php.as_ref().map(|p| p.max_children))
            .or(self.node.as_ref().map(|n| n.pool_max * n.processes))
            .or(self.demo.as_ref().map(|d| d.workers))
    }

    /// Which labs' sections are present.
    pub fn sections(&self) -> [(Lab, bool); 3] {
        [
            (Lab::Php, self.php.is_some()),
            (Lab::Node, self.node.is_some()),
            (Lab::Demo, self.demo.is_some()),
        ]
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSettings {
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// Run `pg_prewarm` on the lab's big table before measuring (Node 1a).
    #[serde(default)]
    pub prewarm: bool,
    /// Report the `pg_stat_database.xact_commit` delta over the run (Node 1a).
    #[serde(default)]
    pub xact_delta: bool,
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            max_connections: default_max_connections(),
            prewarm: false,
            xact_delta: false,
        }
    }
}

fn default_max_connections() -> u32 {
    100
}

/// How nginx reaches php-fpm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Listen {
    /// TCP :9000 on the lab network.
    Tcp,
    /// Unix socket `/run/php/php-fpm.sock` on a volume shared by nginx and php-fpm.
    Unix,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhpSettings {
    /// `pm.max_children` (pm = static).
    pub max_children: u32,
    pub listen: Listen,
    /// `listen.backlog`.
    #[serde(default = "default_backlog")]
    pub backlog: u32,
    /// `DB_PERSISTENT` (PDO::ATTR_PERSISTENT).
    pub persistent: bool,
    /// php-fpm access log `%d %C` and nginx `$request_time $upstream_connect_time` (diag-acc).
    #[serde(default)]
    pub access_log: bool,
    /// Sequential warm-up requests before measuring (opcache, persistent connections).
    #[serde(default = "default_php_warmup_requests")]
    pub warmup_requests: u32,
    /// Injected CPU work: µs of CPU burnt per request in the Laravel controller (0 = none;
    /// a regression made on purpose, shown in every report header).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub burn_us: u32,
    /// Serve the app's code, Laravel's files and PostgreSQL's cluster from volumes filled at
    /// stack start (true, the default), or through the image's storage driver as before (false:
    /// fuse-overlayfs costs CPU outside the app's and the database's cgroups on every file
    /// access; kept to measure that cost).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub code_volumes: bool,
    /// Why more persistent workers than PostgreSQL's `max_connections` are intended (the
    /// failure is the point, exp2-pgconn). Without it that is a validation warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oversubscribe_reason: Option<String>,
}

fn default_backlog() -> u32 {
    511
}
fn default_php_warmup_requests() -> u32 {
    200
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSettings {
    /// 1 = a single process; N > 1 = `node:cluster` with N workers, each with its own pool.
    #[serde(default = "one")]
    pub processes: u32,
    /// pg `Pool({max})` per process.
    #[serde(default = "default_pool_max")]
    pub pool_max: u32,
    /// `PG_CONN_TIMEOUT_MS` (pg `connectionTimeoutMillis`).
    #[serde(default = "default_pg_conn_timeout_ms")]
    pub pg_conn_timeout_ms: u32,
    /// Injected CPU work: µs of CPU burnt per request in the Express handler (0 = none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub burn_us: u32,
    /// Serve the app's code and PostgreSQL's cluster from volumes filled at stack start (true,
    /// the default), or through the image's storage driver (false), as `stack.php.code_volumes`.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub code_volumes: bool,
}

fn yes() -> bool {
    true
}

fn is_true(v: &bool) -> bool {
    *v
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn one() -> u32 {
    1
}
fn default_pool_max() -> u32 {
    10
}
fn default_pg_conn_timeout_ms() -> u32 {
    3000
}

/// The seed-002 capacity server: `workers` concurrent slots, each request holds one for `service_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DemoSettings {
    #[serde(default = "default_demo_workers")]
    pub workers: u32,
    #[serde(default = "default_demo_service_ms")]
    pub service_ms: u32,
}

fn default_demo_workers() -> u32 {
    16
}
fn default_demo_service_ms() -> u32 {
    40
}

/// Which k6 script drives the load (lab-spec §3 `stepped.js`, §4 `breakpoint.js`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Script {
    /// Jump to each rate, hold; requests tagged `stage:rNNNN`.
    Stepped,
    /// Warm-up scenario, then ramp + hold per step; hold requests tagged `step:NN_rpsX|NN_vusX`.
    Breakpoint,
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
    /// A freeze of the app in the first step, and the closed twin load (`demo-pause`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<super::pause::Pause>,
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
