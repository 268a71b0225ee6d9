//! The `measurements` of a run's `manifest.json`: what the run measured about the harness and
//! the stack (one typed field per key; absent keys are `None`), and the records they hold.
use crate::docker::{ClockOffset, EngineFacts};
use crate::plan::Alignment;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `manifest.json` `measurements` (schema 2). Key names are those every version wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurements {
    /// The lab's stack (run id, suite, containers, warm-up).
    #[serde(flatten)]
    pub stack: StackMeasurements,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The load generator's engine clock minus the orchestrator's (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loadgen_clock_offset_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres_slots: Option<PgSlots>,
    /// The first generator's k6 command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_command: Option<String>,
    /// VUs the paused generators allocated before the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_vus_allocated: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alignment: Option<Alignment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_resume: Option<K6Resume>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generators: Option<Generators>,
    /// When the first generator's container started (Docker's RFC 3339 time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_started_at: Option<String>,
    /// Cgroup sample lines each sampler agent sent back, by its role (`loadgen`, `stack`).
    /// Schema 1 wrote one `sampler_agent_<role>_cgroup_lines` key per agent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sampler_agent_cgroup_lines: BTreeMap<String, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samplers: Option<SamplerSummary>,
    /// perflab's own mean CPU over the sampling, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub perflab_cpu_pct_of_core: Option<f64>,
    /// dockerd's mean CPU over the sampling, % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dockerd_cpu_pct_of_core: Option<f64>,
    /// Transactions PostgreSQL committed during the measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_xact_commit_delta: Option<i64>,
    /// Each generator's first request (unix ms, from its CSV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_first_request_ms: Option<Vec<Option<i64>>>,
    /// The spread between those first requests (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_first_request_spread_ms: Option<i64>,
    /// One exit code for the run (a harness failure first, else 99 when a threshold crossed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_exit_code: Option<i64>,
    /// Every generator's exit code (several generators only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_exit_codes: Option<Vec<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_thresholds_crossed: Option<bool>,
    /// The refined max sustainable rate and its probes (`perflab run --refine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refine: Option<crate::analyze::refine::Refined>,
    /// The app's freezes (`load.pause`) and the three p99s they give.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub freezes: Vec<crate::analyze::omission::Freeze>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omission: Option<crate::analyze::omission::Omission>,
    /// The measured load's timed actions (`load.actions`: a php-fpm reload), as they ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<crate::analyze::actions::ActionRun>,
    /// The trigger of a load (`load.trigger`) as it happened.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<crate::analyze::trigger::TriggerEvent>,
    /// The calibration and the fitted numbers (`perflab run --fit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<crate::analyze::fit::FitRecord>,
    /// The host's CPU speed on the warm stack before the first load and after the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_speed: Option<crate::host::speed::HostSpeed>,
    /// The session's phases as they happened (schema 2; absent before).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<super::phase::PhaseRecord>,
    /// The `perflab compare EXP --a ... --b ...` batch and side this round was run for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<super::batch::CompareTag>,
    /// The matrix cell this round was (`perflab run --run-name`) and the scheduler that ran it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<super::cell::CellRecord>,
}

/// What a run and a tool run with a stack (`cpu-per-request`) record about the lab's stack.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StackMeasurements {
    /// The Docker label value of the stack's objects (`run-<experiment>-<dir>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The Debian suite of the images (`trixie`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// Seconds the stack took to start and answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_start_s: Option<f64>,
    /// The stack's containers by role (`pg`, `php-fpm`, `nginx`, `app`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers: Option<BTreeMap<String, ContainerRecord>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
}

/// A map with number keys (JSON object keys are strings). Also read inside the flattened
/// [`StackMeasurements`], where serde hands the keys over as strings.
fn number_keys<'de, D, K, V>(d: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    K: std::str::FromStr + Ord,
    K::Err: std::fmt::Display,
    V: Deserialize<'de>,
{
    BTreeMap::<String, V>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| Ok((k.parse().map_err(serde::de::Error::custom)?, v)))
        .collect()
}

/// One container of the stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContainerRecord {
    pub role: String,
    pub name: String,
    /// Full 64-hex id.
    pub id: String,
    pub image: String,
    pub cpuset: String,
    pub memory_bytes: i64,
    /// Container port -> published host port.
    #[serde(deserialize_with = "number_keys")]
    pub host_ports: BTreeMap<u16, u16>,
    /// Folders of the image served from a volume filled at stack start, past the engine's
    /// storage driver (absent in older runs: everything went through the driver).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub code_volumes: Vec<String>,
}

impl From<&crate::stack::StackContainer> for ContainerRecord {
    fn from(c: &crate::stack::StackContainer) -> Self {
        ContainerRecord {
            role: c.role.log_name().to_string(),
            name: c.name.clone(),
            id: c.id.clone(),
            image: c.image.clone(),
            cpuset: c.cpuset.clone(),
            memory_bytes: c.memory_bytes,
            host_ports: c.host_ports.clone(),
            code_volumes: c.code_volumes.clone(),
        }
    }
}

/// The stack's containers keyed by role, as the manifest records them.
pub(crate) fn containers_of(
    c: &BTreeMap<crate::lab::Role, crate::stack::StackContainer>,
) -> BTreeMap<String, ContainerRecord> {
    c.iter()
        .map(|(role, c)| (role.log_name().to_string(), c.into()))
        .collect()
}

/// Where the roles ran and how the engines' clocks compare.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// Engine endpoints of the roles.
    pub loadgen: String,
    pub db: String,
    pub app: String,
    pub loadgen_remote: bool,
    /// Where the load generators reach the stack's entry.
    pub published_entry: PublishedEntry,
    pub loadgen_engine: Option<EngineFacts>,
    pub stack_engine: Option<EngineFacts>,
    pub loadgen_clock_offset: Option<ClockOffset>,
    pub stack_clock_offset: Option<ClockOffset>,
    /// With a remote load generator: is its engine the stack's daemon (same engine id)?
    pub same_daemon_as_stack: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PublishedEntry {
    pub ip: String,
    pub port: u16,
    /// Whether that is a published host port (`false`: the entry's address on the lab
    /// network, nothing published; absent in manifests of perflab before it stopped publishing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub published: Option<bool>,
}

/// How many of `max_connections` the lab's app can really use, read from the server before the
/// warm-up: PostgreSQL keeps `superuser_reserved_connections` (and, from 16, `reserved_connections`)
/// for privileged roles, and the harness holds its own connections for the samplers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgSlots {
    pub max_connections: i64,
    pub superuser_reserved: i64,
    pub reserved: i64,
    pub harness: i64,
    pub usable: i64,
}

/// What the warm-up did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    pub requests: u32,
    /// Responses by status code (0 = transport error).
    #[serde(deserialize_with = "number_keys")]
    pub status_counts: BTreeMap<u16, u32>,
    /// Blocks loaded by `pg_prewarm`, when asked.
    pub prewarmed_blocks: Option<i64>,
}

impl From<&crate::stack::warmup::WarmupReport> for Warmup {
    fn from(w: &crate::stack::warmup::WarmupReport) -> Self {
        Warmup {
            requests: w.requests,
            status_counts: w.status_counts.clone(),
            prewarmed_blocks: w.prewarmed_blocks,
        }
    }
}

/// How late the common resume of the paused generators was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct K6Resume {
    pub sent_at: DateTime<Utc>,
    pub answered_at: DateTime<Utc>,
    /// `sent_at` minus the planned k6 start.
    pub late_ms: i64,
    pub latency_ms: i64,
}

/// How the load generators were placed and started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generators {
    pub count: usize,
    /// Their engine's endpoint.
    pub engine: String,
    pub remote: bool,
    pub off_host: bool,
    pub cpuset: String,
    pub shared_cpuset: bool,
    /// `resume` (together through their APIs) or `gate` (released by their start gates).
    pub start: GeneratorStart,
    pub gate_unix_ns_engine_clock: i64,
    /// `--k6-dashboard`: the file k6's web dashboard was exported to in each instance's folder
    /// (`k6/dashboard.html`, `k6/g<i>/dashboard.html`); absent when it was off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k6_dashboard: Option<String>,
    pub instances: Vec<GeneratorInstance>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GeneratorStart {
    Resume,
    Gate,
}

/// One generator (k6 execution segment).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratorInstance {
    pub index: u32,
    /// `--execution-segment`, e.g. `1/2:1`.
    pub segment: String,
    /// `--execution-segment-sequence`, e.g. `0,1/2,1`.
    pub sequence: String,
    pub container: String,
    pub cpuset: String,
    /// Its folder under `k6/` (`k6` for a single generator, `g<i>` otherwise).
    pub out: Option<String>,
    /// `http://host:port` of its REST API.
    pub api: Option<String>,
    pub command: String,
}

pub(crate) use crate::sample::SamplerSummary;

/// A share of a core as the manifest records it: percent, one decimal.
pub(crate) fn pct_of_core(cores: f64) -> f64 {
    (cores * 1000.0).round() / 10.0
}
