//! The samplers' JSON lines (`samples/*.jsonl`, `t` = unix ms UTC): the record types the
//! samplers write and the analysis reads, and the line-by-line parser. Pure data.
use crate::lab::Role;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// `samples/cgroup.jsonl`: one line per container every second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CgroupSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    pub role: Role,
    pub container: String,
    /// CPU used over the last interval, in cores (1.0 = one core busy).
    pub cpu_cores: f64,
    pub mem_bytes: u64,
    pub throttled_ms: f64,
    /// cgroup v2 `cpu.pressure` some avg10 (%); null on cgroup v1.
    pub psi_some_avg10: Option<f64>,
    /// Its processes' PSS (`sample::memory`; absent in runs before it was sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<ProcsMem>,
}

/// The memory of a container's processes at one tick (`/proc/<pid>/smaps_rollup`), KiB.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcsMem {
    /// Its processes.
    pub procs: u32,
    /// Their PSS summed: what the container's processes map, each shared page once.
    pub pss_kib: u64,
    /// The most common process name (php-fpm's master and workers, PostgreSQL's backends).
    pub worker_name: String,
    pub workers: u32,
    /// Their PSS summed.
    pub worker_pss_kib: u64,
    /// Their private pages summed (what one more such process would add).
    pub worker_private_kib: u64,
}

/// `samples/host.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    /// Per CPU, % of the interval not idle (steal included).
    pub cpu_busy_pct: Vec<f64>,
    /// Per CPU, % of the interval stolen by the hypervisor (absent in runs before it was sampled).
    #[serde(default)]
    pub cpu_steal_pct: Vec<f64>,
    /// The CPU number of each entry of `cpu_busy_pct` (absent in runs before it was recorded:
    /// then the entries are the online CPUs in `/proc/stat` order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<u32>,
    /// Host `/proc/pressure/cpu` some avg10 (%).
    pub psi_some_avg10: Option<f64>,
    pub dockerd_cores: Option<f64>,
    pub perflab_cores: Option<f64>,
}

/// Who a process outside the run's containers is: the procs sampler groups the host's
/// processes by name into these sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcSource {
    /// Docker's userland proxy of published ports: relays every byte of the load.
    DockerProxy,
    /// containerd, its shims and runc.
    Containerd,
    /// The storage driver's FUSE processes (fuse-overlayfs) serving the run's containers'
    /// file systems: every file access of the lab crosses them.
    LabStorage,
    Dockerd,
    /// This perflab process (its samplers are threads of it).
    Perflab,
    /// A k6 outside the run's containers.
    K6,
    /// Compilers and their helpers: cargo, rustc, cc1, ld... (other users' builds).
    Build,
    /// The kernel's softirq threads (network receive that overflowed the interrupt context).
    Ksoftirqd,
    Kworker,
    /// Other kernel threads.
    Kernel,
    /// Processes of containers that are not the run's, and the FUSE storage processes serving
    /// them.
    Containers,
    Other,
}

impl ProcSource {
    /// Part of the lab's own plumbing (Docker and perflab), not another user's work.
    pub(crate) fn is_plumbing(self) -> bool {
        matches!(
            self,
            ProcSource::DockerProxy
                | ProcSource::Containerd
                | ProcSource::LabStorage
                | ProcSource::Dockerd
                | ProcSource::Perflab
        )
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            ProcSource::DockerProxy => "docker-proxy",
            ProcSource::Containerd => "containerd",
            ProcSource::LabStorage => "fuse-overlayfs",
            ProcSource::Dockerd => "dockerd",
            ProcSource::Perflab => "perflab",
            ProcSource::K6 => "k6",
            ProcSource::Build => "cargo/rustc",
            ProcSource::Ksoftirqd => "ksoftirqd",
            ProcSource::Kworker => "kworker",
            ProcSource::Kernel => "kernel threads",
            ProcSource::Containers => "other containers",
            ProcSource::Other => "other",
        }
    }
}

/// One process name's CPU over an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcCores {
    /// `comm` (kernel threads without their `/N` suffix: "kworker", "ksoftirqd").
    pub name: String,
    pub source: ProcSource,
    pub cores: f64,
}

/// `samples/hostprocs.jsonl`: every second, the CPU of the host's processes outside the
/// run's containers by source, the busiest names, and per-CPU irq and softirq time. Same `t`
/// as the `host.jsonl` line of that second.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostProcsSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    /// Cores per source over the last interval (a process's own CPU and that of its children
    /// reaped in the interval).
    pub sources: BTreeMap<ProcSource, f64>,
    /// The busiest process names outside the run's containers, busiest first (at most
    /// [`HostProcsSample::TOP`]).
    pub top: Vec<ProcCores>,
    /// Cores of the outside processes not in `top`.
    pub rest_cores: f64,
    /// Cores of the processes inside the run's containers (the cgroup samples count them).
    pub lab_cores: f64,
    /// Per CPU, % of the interval in hard irq and in softirq (`/proc/stat`).
    pub irq_pct: Vec<f64>,
    pub softirq_pct: Vec<f64>,
    /// Processes read, and how long reading them took (the sampler's own cost).
    pub procs: u32,
    pub scan_us: u64,
}

impl HostProcsSample {
    /// How many names `top` keeps per interval.
    pub(crate) const TOP: usize = 6;
}

/// The php-fpm status page (JSON), the fields the analysis reads; others are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FpmStatus {
    #[serde(rename = "listen queue", default)]
    pub listen_queue: u64,
    #[serde(rename = "max listen queue", default)]
    pub max_listen_queue: u64,
    #[serde(rename = "listen queue len", default)]
    pub listen_queue_len: u64,
    #[serde(rename = "idle processes", default)]
    pub idle_processes: u64,
    #[serde(rename = "active processes", default)]
    pub active_processes: u64,
    #[serde(rename = "total processes", default)]
    pub total_processes: u64,
    #[serde(rename = "accepted conn", default)]
    pub accepted_conn: u64,
    /// How often the process manager wanted a worker past `pm.max_children` (a counter since
    /// the pool started; never moves under `pm = static`, which forks no worker on demand).
    #[serde(rename = "max children reached", default)]
    pub max_children_reached: u64,
}

/// `samples/fpm.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FpmSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    pub status: FpmStatus,
}

/// One `pg_stat_activity` group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgActivity {
    pub state: String,
    pub wait_event_type: Option<String>,
    pub wait_event: Option<String>,
    pub count: u64,
}

/// `samples/pg.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PgSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    pub activity: Vec<PgActivity>,
    pub xact_commit: u64,
}

/// `samples/node.jsonl`: the Node app's 2-second metrics line (lab-spec §4) plus `container`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeSample {
    #[serde(deserialize_with = "de_time")]
    pub t: i64,
    pub container: String,
    pub pid: u64,
    pub rps: f64,
    pub err5xx: u64,
    pub eld_p50_ms: f64,
    pub eld_p99_ms: f64,
    pub eld_max_ms: f64,
    pub elu: f64,
    pub cpu_cores: f64,
    pub cpu_ms_per_req: Option<f64>,
    pub pool_total: u64,
    pub pool_idle: u64,
    pub pool_waiting: u64,
    pub pool_waiting_max: u64,
    pub inflight: u64,
    pub inflight_max: u64,
    pub rss_mb: f64,
    pub errors: BTreeMap<String, u64>,
}

/// `t` as unix ms (number) or an ISO 8601 / RFC 3339 string (the Node app writes ISO).
fn de_time<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum T {
        N(f64),
        S(String),
    }
    match T::deserialize(d)? {
        T::N(n) => Ok(n as i64),
        T::S(s) => chrono::DateTime::parse_from_rfc3339(&s)
            .map(|t| t.timestamp_millis())
            .map_err(|e| serde::de::Error::custom(format!("`t` {s:?} is not RFC 3339: {e}"))),
    }
}

/// Parse one JSONL text into samples of type `T`; errors name the line.
/// [`parse_jsonl`], except that a last line with no newline that does not parse is dropped:
/// the sampler was killed while writing it (SIGKILL, a full disk). Returns the records and
/// whether such a torn line was dropped; any other bad line is still an error.
pub fn parse_jsonl_torn_tail<T: for<'de> Deserialize<'de>>(
    text: &str,
) -> Result<(Vec<T>, bool), String> {
    match parse_jsonl(text) {
        Ok(v) => Ok((v, false)),
        Err(e) if !text.ends_with('\n') => {
            let cut = text.rfind('\n').map_or(0, |i| i + 1);
            parse_jsonl(&text[..cut]).map(|v| (v, true)).map_err(|_| e)
        }
        Err(e) => Err(e),
    }
}

pub(crate) fn parse_jsonl<T: for<'de> Deserialize<'de>>(text: &str) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"t":1764500000000,"role":"fpm","container":"c","cpu_cores":0.5,"mem_bytes":1,"throttled_ms":0.0,"psi_some_avg10":null}"#;

    #[test]
    fn a_torn_last_line_is_dropped_and_said_but_a_bad_middle_line_is_an_error() {
        let whole = format!("{LINE}\n{LINE}\n");
        let (v, torn) = parse_jsonl_torn_tail::<CgroupSample>(&whole).unwrap();
        assert_eq!((v.len(), torn), (2, false));
        let cut = format!("{LINE}\n{LINE}\n{}", &LINE[..40]);
        assert!(
            parse_jsonl::<CgroupSample>(&cut).is_err(),
            "the plain parser refuses it"
        );
        let (v, torn) = parse_jsonl_torn_tail::<CgroupSample>(&cut).unwrap();
        assert_eq!((v.len(), torn), (2, true));
        let middle = format!("{LINE}\n{}\n{LINE}\n", &LINE[..40]);
        let e = parse_jsonl_torn_tail::<CgroupSample>(&middle).unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        // A bad last line that did end with a newline was written whole: not torn, an error.
        let bad_end = format!("{LINE}\n{}\n", &LINE[..40]);
        assert!(parse_jsonl_torn_tail::<CgroupSample>(&bad_end).is_err());
    }
}
