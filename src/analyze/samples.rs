//! Server-side samples written by the run's samplers (JSON lines, `t` = unix ms UTC) and their
//! reduction over a time window: CPU per role, PSI, php-fpm status, pg activity, Node metrics.
//! The samplers serialise exactly these types.
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::BTreeMap;

/// Container roles (the `role` field of `samples/cgroup.jsonl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Fpm,
    Nginx,
    Pg,
    App,
    K6,
    Demo,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Fpm => "fpm",
            Role::Nginx => "nginx",
            Role::Pg => "pg",
            Role::App => "app",
            Role::K6 => "k6",
            Role::Demo => "demo",
        }
    }
    /// Roles whose CPU serves the requests on the app box (ms CPU per ok, app-cores criterion).
    pub fn is_app_box(self) -> bool {
        matches!(self, Role::Fpm | Role::Nginx | Role::App | Role::Demo)
    }
}

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
    /// Host `/proc/pressure/cpu` some avg10 (%).
    pub psi_some_avg10: Option<f64>,
    pub dockerd_cores: Option<f64>,
    pub perflab_cores: Option<f64>,
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

/// All server-side samples of a run (each vector sorted by `t`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Samples {
    pub cgroup: Vec<CgroupSample>,
    pub host: Vec<HostSample>,
    pub fpm: Vec<FpmSample>,
    pub pg: Vec<PgSample>,
    pub node: Vec<NodeSample>,
    /// The php-fpm and nginx access logs (diag-acc only).
    #[serde(default)]
    pub access: super::access::AccessLogs,
}

impl Samples {
    pub fn is_empty(&self) -> bool {
        self.cgroup.is_empty()
            && self.host.is_empty()
            && self.fpm.is_empty()
            && self.pg.is_empty()
            && self.node.is_empty()
    }
    pub fn sort(&mut self) {
        self.cgroup.sort_by_key(|s| s.t);
        self.host.sort_by_key(|s| s.t);
        self.fpm.sort_by_key(|s| s.t);
        self.pg.sort_by_key(|s| s.t);
        self.node.sort_by_key(|s| s.t);
    }
}

/// Parse one JSONL text into samples of type `T`; errors name the line.
pub fn parse_jsonl<T: for<'de> Deserialize<'de>>(text: &str) -> Result<Vec<T>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        out.push(serde_json::from_str(line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    Ok(out)
}

/// Thresholds of criterion 5 (a resource saturated for most of the step).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SaturationRules {
    /// Fraction of the step's samples that must show the condition.
    pub most_of_step: f64,
    /// A single-core database at or above this share of its core.
    pub db_core: f64,
    pub elu: f64,
    /// App-box cores in use at or above this share of the cores it may use.
    pub app_cores: f64,
}

impl Default for SaturationRules {
    fn default() -> Self {
        SaturationRules {
            most_of_step: 0.8,
            db_core: 0.85,
            elu: 0.98,
            app_cores: 0.9,
        }
    }
}

/// Server-side figures of one window (a step or one second).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowServer {
    /// Mean CPU per role, % of one core.
    pub cpu_pct: BTreeMap<String, f64>,
    /// Mean PSI some avg10 of the app-box containers (or the host's on cgroup v1), %.
    pub psi_pct: Option<f64>,
    pub dockerd_pct: Option<f64>,
    /// Highest CPU of the k6 container, % of one core.
    pub k6_cpu_max_pct: Option<f64>,
    pub host_cpu_max_pct: Option<f64>,
    pub fpm: Option<FpmWindow>,
    pub pg: Option<PgWindow>,
    pub node: Option<NodeWindow>,
    /// Criterion 5: saturated resources, as short phrases ("fpm 20/20 busy, listen queue 186").
    pub saturated: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FpmWindow {
    pub samples: usize,
    pub idle_min: u64,
    pub total: u64,
    pub listen_queue_max: u64,
    pub listen_queue_len: u64,
    /// Share of samples with idle = 0 and listen queue > 0.
    pub saturated_share: f64,
    /// `accepted conn` per second over the window.
    pub accepted_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PgWindow {
    /// The most common activity group, e.g. "idle Client ClientRead 20".
    pub top: String,
    pub commits_per_s: Option<f64>,
    /// Connections idle in ClientRead in most samples (the database waits for the app).
    pub waits_for_client: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeWindow {
    pub samples: usize,
    pub elu_max: f64,
    pub eld_p99_max_ms: f64,
    pub pool_waiting_max: u64,
    pub pool_waiting_share: f64,
    pub inflight_max: u64,
    /// Mean of the app's in-flight gauge (summed over processes per sample time).
    pub inflight_mean: f64,
    pub err5xx: u64,
    pub errors: BTreeMap<String, u64>,
}

fn in_window<T>(v: &[T], t: impl Fn(&T) -> i64, from: i64, to: i64) -> &[T] {
    let a = v.partition_point(|s| t(s) < from);
    let b = v.partition_point(|s| t(s) < to);
    &v[a..b]
}

fn mean(it: impl Iterator<Item = f64>) -> Option<f64> {
    let (s, n) = it.fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| s / n as f64)
}

/// Where the host's CPU went over `[from_ms, to_ms)`: per host sample (1 s), busy cores minus
/// the lab's containers (cgroup samples of the same second), perflab + dockerd and steal.
pub fn host_share(s: &Samples, from_ms: i64, to_ms: i64) -> Option<super::model::HostShare> {
    let host = in_window(&s.host, |x| x.t, from_ms, to_ms);
    let mut lab_by_s: BTreeMap<i64, f64> = BTreeMap::new();
    for c in in_window(&s.cgroup, |x| x.t, from_ms, to_ms) {
        *lab_by_s.entry(c.t.div_euclid(1000)).or_default() += c.cpu_cores;
    }
    /// busy, lab, harness, steal (cores) of one second
    type Row = (f64, f64, f64, Option<f64>);
    let rows: Vec<Row> = host
        .iter()
        .filter_map(|h| {
            let lab = *lab_by_s.get(&h.t.div_euclid(1000))?;
            let busy = h.cpu_busy_pct.iter().sum::<f64>() / 100.0;
            let harness = h.dockerd_cores.unwrap_or(0.0) + h.perflab_cores.unwrap_or(0.0);
            let steal =
                (!h.cpu_steal_pct.is_empty()).then(|| h.cpu_steal_pct.iter().sum::<f64>() / 100.0);
            Some((busy, lab, harness, steal))
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let n = rows.len() as f64;
    let m = |f: &dyn Fn(&Row) -> f64| rows.iter().map(f).sum::<f64>() / n;
    let busy = m(&|r| r.0);
    let lab = m(&|r| r.1);
    let harness = m(&|r| r.2);
    let steal = rows
        .iter()
        .all(|r| r.3.is_some())
        .then(|| m(&|r| r.3.unwrap_or(0.0)));
    Some(super::model::HostShare {
        busy_cores: busy,
        lab_cores: lab,
        harness_cores: harness,
        steal_cores: steal,
        other_cores: (busy - lab - harness - steal.unwrap_or(0.0)).max(0.0),
        samples: rows.len(),
    })
}

/// Reduce the samples of `[from_ms, to_ms)`. `app_cores` is how many cores the app box may use.
pub fn window(
    s: &Samples,
    from_ms: i64,
    to_ms: i64,
    app_cores: Option<f64>,
    rules: &SaturationRules,
) -> WindowServer {
    let mut w = WindowServer::default();
    let cg = in_window(&s.cgroup, |x| x.t, from_ms, to_ms);
    // CPU per role: sum containers of a role per timestamp, then average over timestamps.
    let mut per_role: BTreeMap<Role, BTreeMap<i64, f64>> = BTreeMap::new();
    for x in cg {
        *per_role
            .entry(x.role)
            .or_default()
            .entry(x.t / 1000)
            .or_default() += x.cpu_cores;
    }
    for (role, by_t) in &per_role {
        if let Some(m) = mean(by_t.values().copied()) {
            w.cpu_pct.insert(role.as_str().to_string(), m * 100.0);
        }
        if *role == Role::K6 {
            w.k6_cpu_max_pct = by_t
                .values()
                .copied()
                .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
                .map(|c| c * 100.0);
        }
    }
    w.psi_pct = mean(
        cg.iter()
            .filter(|x| x.role.is_app_box())
            .filter_map(|x| x.psi_some_avg10),
    );
    let host = in_window(&s.host, |x| x.t, from_ms, to_ms);
    if w.psi_pct.is_none() {
        w.psi_pct = mean(host.iter().filter_map(|h| h.psi_some_avg10));
    }
    w.dockerd_pct = mean(host.iter().filter_map(|h| h.dockerd_cores)).map(|c| c * 100.0);
    w.host_cpu_max_pct = host
        .iter()
        .flat_map(|h| h.cpu_busy_pct.iter().copied())
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));

    let n_share = |n: usize, of: usize| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let fpm = in_window(&s.fpm, |x| x.t, from_ms, to_ms);
    if !fpm.is_empty() {
        let sat = fpm
            .iter()
            .filter(|f| f.status.idle_processes == 0 && f.status.listen_queue > 0)
            .count();
        let accepted_per_s = if fpm.len() >= 2 {
            let (a, b) = (&fpm[0], &fpm[fpm.len() - 1]);
            let dt = (b.t - a.t) as f64 / 1000.0;
            (dt > 0.0).then(|| {
                b.status
                    .accepted_conn
                    .saturating_sub(a.status.accepted_conn) as f64
                    / dt
            })
        } else {
            None
        };
        let fw = FpmWindow {
            samples: fpm.len(),
            idle_min: fpm
                .iter()
                .map(|f| f.status.idle_processes)
                .min()
                .unwrap_or(0),
            total: fpm
                .iter()
                .map(|f| f.status.total_processes)
                .max()
                .unwrap_or(0),
            listen_queue_max: fpm.iter().map(|f| f.status.listen_queue).max().unwrap_or(0),
            listen_queue_len: fpm
                .iter()
                .map(|f| f.status.listen_queue_len)
                .max()
                .unwrap_or(0),
            saturated_share: n_share(sat, fpm.len()),
            accepted_per_s,
        };
        if fw.saturated_share >= rules.most_of_step {
            w.saturated.push(format!(
                "fpm {}/{} busy, listen queue {}",
                fw.total, fw.total, fw.listen_queue_max
            ));
        }
        w.fpm = Some(fw);
    }
    let pg = in_window(&s.pg, |x| x.t, from_ms, to_ms);
    if !pg.is_empty() {
        let mut groups: BTreeMap<String, usize> = BTreeMap::new();
        let mut client_read = 0;
        for p in pg {
            if let Some(top) = p.activity.iter().max_by_key(|a| a.count) {
                let label = format!(
                    "{} {} {} {}",
                    top.state,
                    top.wait_event_type.as_deref().unwrap_or("-"),
                    top.wait_event.as_deref().unwrap_or("-"),
                    top.count
                );
                *groups.entry(label).or_default() += 1;
                if top.state == "idle" && top.wait_event.as_deref() == Some("ClientRead") {
                    client_read += 1;
                }
            }
        }
        let top = groups
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(k, _)| k.clone())
            .unwrap_or_default();
        let commits_per_s = if pg.len() >= 2 {
            let (a, b) = (&pg[0], &pg[pg.len() - 1]);
            let dt = (b.t - a.t) as f64 / 1000.0;
            (dt > 0.0).then(|| b.xact_commit.saturating_sub(a.xact_commit) as f64 / dt)
        } else {
            None
        };
        w.pg = Some(PgWindow {
            top,
            commits_per_s,
            waits_for_client: n_share(client_read, pg.len()) >= rules.most_of_step,
        });
    }
    let node = in_window(&s.node, |x| x.t, from_ms, to_ms);
    if !node.is_empty() {
        let mut errors = BTreeMap::new();
        for n in node {
            for (k, v) in &n.errors {
                *errors.entry(k.clone()).or_default() += v;
            }
        }
        let nw = NodeWindow {
            samples: node.len(),
            elu_max: node.iter().map(|n| n.elu).fold(0.0, f64::max),
            eld_p99_max_ms: node.iter().map(|n| n.eld_p99_ms).fold(0.0, f64::max),
            pool_waiting_max: node
                .iter()
                .map(|n| n.pool_waiting_max.max(n.pool_waiting))
                .max()
                .unwrap_or(0),
            pool_waiting_share: n_share(
                node.iter()
                    .filter(|n| n.pool_waiting > 0 || n.pool_waiting_max > 0)
                    .count(),
                node.len(),
            ),
            inflight_max: node.iter().map(|n| n.inflight_max).max().unwrap_or(0),
            inflight_mean: {
                let mut by_t: BTreeMap<i64, f64> = BTreeMap::new();
                for n in node {
                    *by_t.entry(n.t / 1000).or_default() += n.inflight as f64;
                }
                mean(by_t.values().copied()).unwrap_or(0.0)
            },
            err5xx: node.iter().map(|n| n.err5xx).sum(),
            errors,
        };
        let elu_high = n_share(
            node.iter().filter(|n| n.elu >= rules.elu).count(),
            node.len(),
        );
        if elu_high >= rules.most_of_step {
            w.saturated.push(format!(
                "event loop busy (ELU {:.2}, ELD p99 {:.0} ms)",
                nw.elu_max, nw.eld_p99_max_ms
            ));
        }
        if nw.pool_waiting_share >= rules.most_of_step {
            w.saturated.push(format!(
                "pg pool exhausted ({} waiting)",
                nw.pool_waiting_max
            ));
        }
        w.node = Some(nw);
    }
    // A single-core database near 100 %.
    if let Some(by_t) = per_role.get(&Role::Pg) {
        let high = by_t.values().filter(|c| **c >= rules.db_core).count();
        if n_share(high, by_t.len()) >= rules.most_of_step {
            w.saturated.push(format!(
                "pg core at {:.0} %",
                w.cpu_pct.get("pg").copied().unwrap_or(0.0)
            ));
        }
    }
    // The app box's CPU.
    if let Some(cores) = app_cores {
        let mut app_by_t: BTreeMap<i64, f64> = BTreeMap::new();
        for (role, by_t) in &per_role {
            if role.is_app_box() {
                for (t, c) in by_t {
                    *app_by_t.entry(*t).or_default() += c;
                }
            }
        }
        let high = app_by_t
            .values()
            .filter(|c| **c >= rules.app_cores * cores)
            .count();
        if !app_by_t.is_empty() && n_share(high, app_by_t.len()) >= rules.most_of_step {
            let m = mean(app_by_t.values().copied()).unwrap_or(0.0);
            w.saturated.push(format!(
                "app CPU {:.0} % of {:.0} %",
                m * 100.0,
                cores * 100.0
            ));
        }
    }
    w
}

impl WindowServer {
    /// App-box CPU (fpm + nginx, or the Node app / demo server) in cores.
    pub fn app_cores(&self) -> Option<f64> {
        let v: Vec<f64> = ["fpm", "nginx", "app", "demo"]
            .iter()
            .filter_map(|r| self.cpu_pct.get(*r))
            .copied()
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cg(t: i64, role: Role, cores: f64) -> CgroupSample {
        CgroupSample {
            t,
            role,
            container: role.as_str().into(),
            cpu_cores: cores,
            mem_bytes: 0,
            throttled_ms: 0.0,
            psi_some_avg10: Some(50.0),
        }
    }

    fn host(t: i64, busy: [f64; 2], steal: Option<[f64; 2]>) -> HostSample {
        HostSample {
            t,
            cpu_busy_pct: busy.to_vec(),
            cpu_steal_pct: steal.map(|s| s.to_vec()).unwrap_or_default(),
            psi_some_avg10: None,
            dockerd_cores: Some(0.01),
            perflab_cores: Some(0.01),
        }
    }

    #[test]
    fn host_share_splits_busy_cores_by_who_used_them() {
        let mut s = Samples::default();
        for i in 0..10 {
            let t = 1_000_000 + i * 1000;
            s.cgroup.push(cg(t, Role::Fpm, 0.9));
            s.cgroup.push(cg(t, Role::K6, 0.1));
            // 1.5 cores busy: 1.0 lab + 0.02 harness + 0.2 steal + 0.28 other
            s.host.push(host(t, [60.0, 90.0], Some([10.0, 10.0])));
        }
        let h = host_share(&s, 1_000_000, 1_010_000).unwrap();
        assert_eq!(h.samples, 10);
        assert!((h.busy_cores - 1.5).abs() < 1e-9, "{h:?}");
        assert!((h.lab_cores - 1.0).abs() < 1e-9, "{h:?}");
        assert!((h.steal_cores.unwrap() - 0.2).abs() < 1e-9, "{h:?}");
        assert!((h.other_cores - 0.28).abs() < 1e-9, "{h:?}");
        let w = crate::analyze::run::host_share_warnings(&h);
        assert_eq!(w.len(), 2, "other processes and steal: {w:?}");
        // a quiet host: lab only, no steal, nothing to say
        let mut q = Samples::default();
        for i in 0..5 {
            let t = 2_000_000 + i * 1000;
            q.cgroup.push(cg(t, Role::Fpm, 0.5));
            q.host.push(host(t, [2.0, 51.0], Some([0.0, 0.0])));
        }
        let h = host_share(&q, 2_000_000, 2_005_000).unwrap();
        assert!(h.other_cores < 0.02, "{h:?}");
        assert!(crate::analyze::run::host_share_warnings(&h).is_empty());
        // runs recorded before steal was sampled: unknown, not zero
        let mut old = q.clone();
        old.host.iter_mut().for_each(|h| h.cpu_steal_pct.clear());
        assert_eq!(
            host_share(&old, 2_000_000, 2_005_000).unwrap().steal_cores,
            None
        );
        assert!(
            host_share(&q, 0, 1000).is_none(),
            "no samples in the window"
        );
    }

    #[test]
    fn time_accepts_ms_and_iso() {
        let a: NodeSample =
            serde_json::from_str(r#"{"t":"2026-10-30T11:09:15.000Z","elu":0.5,"container":"app"}"#)
                .unwrap();
        let b: NodeSample = serde_json::from_str(r#"{"t":1793358555000,"elu":0.5}"#).unwrap();
        assert_eq!(a.t, 1_793_358_555_000);
        assert_eq!(a.t, b.t);
    }

    #[test]
    fn fpm_status_json_fields() {
        let line = r#"{"t":1000,"status":{"pool":"www","listen queue":186,"max listen queue":188,"listen queue len":511,"idle processes":0,"active processes":20,"total processes":20,"accepted conn":11747}}"#;
        let s: FpmSample = serde_json::from_str(line).unwrap();
        assert_eq!(s.status.listen_queue, 186);
        assert_eq!(s.status.total_processes, 20);
    }

    #[test]
    fn fpm_saturation_and_pg_client_read() {
        let mut s = Samples::default();
        for i in 0..10 {
            let t = i * 2000;
            s.fpm.push(FpmSample {
                t,
                status: FpmStatus {
                    listen_queue: if i == 0 { 2 } else { 51 + i as u64 * 10 },
                    idle_processes: 0,
                    total_processes: 20,
                    active_processes: 20,
                    accepted_conn: 1000 + 360 * i as u64,
                    ..Default::default()
                },
            });
            s.pg.push(PgSample {
                t,
                activity: vec![PgActivity {
                    state: "idle".into(),
                    wait_event_type: Some("Client".into()),
                    wait_event: Some("ClientRead".into()),
                    count: 20,
                }],
                xact_commit: 0,
            });
        }
        let w = window(&s, 0, 20_000, None, &SaturationRules::default());
        let f = w.fpm.as_ref().unwrap();
        assert_eq!(f.listen_queue_max, 141);
        assert!((f.accepted_per_s.unwrap() - 180.0).abs() < 1e-9);
        assert_eq!(
            w.saturated,
            vec!["fpm 20/20 busy, listen queue 141".to_string()]
        );
        let pg = w.pg.unwrap();
        assert_eq!(pg.top, "idle Client ClientRead 20");
        assert!(pg.waits_for_client);
    }

    #[test]
    fn fpm_idle_workers_is_not_saturation() {
        let mut s = Samples::default();
        for i in 0..10 {
            s.fpm.push(FpmSample {
                t: i * 2000,
                status: FpmStatus {
                    listen_queue: 3,
                    idle_processes: 5,
                    total_processes: 20,
                    ..Default::default()
                },
            });
        }
        assert!(
            window(&s, 0, 20_000, None, &SaturationRules::default())
                .saturated
                .is_empty()
        );
    }

    #[test]
    fn cpu_per_role_pg_core_and_app_box() {
        let mut s = Samples::default();
        for i in 0..10 {
            let t = i * 1000;
            s.cgroup.push(cg(t, Role::Fpm, 1.41));
            s.cgroup.push(cg(t, Role::Nginx, 0.16));
            s.cgroup
                .push(cg(t, Role::Pg, if i < 9 { 0.95 } else { 0.5 }));
        }
        let w = window(&s, 0, 10_000, Some(2.0), &SaturationRules::default());
        assert!((w.cpu_pct["fpm"] - 141.0).abs() < 1e-9);
        assert!((w.app_cores().unwrap() - 1.57).abs() < 1e-9);
        assert_eq!(w.psi_pct, Some(50.0));
        assert_eq!(w.saturated.len(), 1, "{:?}", w.saturated); // pg 90 % of samples >= 85 %; app 78.5 % < 90 %
        assert!(w.saturated[0].starts_with("pg core at"));
        let w = window(&s, 0, 10_000, Some(1.7), &SaturationRules::default());
        assert!(
            w.saturated.iter().any(|x| x.starts_with("app CPU")),
            "{:?}",
            w.saturated
        );
    }

    #[test]
    fn node_elu_and_pool_waiting() {
        let mut s = Samples::default();
        for i in 0..5 {
            s.node.push(NodeSample {
                t: i * 2000,
                inflight: 100 + i as u64 * 10,
                elu: 1.0,
                eld_p99_ms: 437.0 + i as f64,
                pool_waiting: 3,
                pool_waiting_max: 90,
                ..Default::default()
            });
        }
        let w = window(&s, 0, 10_000, None, &SaturationRules::default());
        assert_eq!(w.saturated.len(), 2, "{:?}", w.saturated);
        let nw = w.node.unwrap();
        assert_eq!(nw.pool_waiting_max, 90);
        assert!((nw.inflight_mean - 120.0).abs() < 1e-9);
        // ELU 0.56 and no waiting: nothing saturated.
        for n in &mut s.node {
            n.elu = 0.56;
            n.pool_waiting = 0;
            n.pool_waiting_max = 0;
        }
        assert!(
            window(&s, 0, 10_000, None, &SaturationRules::default())
                .saturated
                .is_empty()
        );
    }
}
