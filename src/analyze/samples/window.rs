//! The reduction of the samples over one window (a step or a second): CPU per role, PSI,
//! php-fpm status, pg activity, Node metrics, and criterion 5 (saturated resources).
use super::*;

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
    /// Mean busy % of the CPUs PostgreSQL is pinned to, whoever used them (on 2 CPUs the load
    /// generator shares PostgreSQL's core); `None` when the run's layout is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_core_busy_pct: Option<f64>,
    /// The app's pinned CPUs: the app, steal and other processes (`None` when not pinned).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_cpus: Option<CpuSplit>,
    /// The database's pinned CPUs, as `app_cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_cpus: Option<CpuSplit>,
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

/// Reduce the samples of `[from_ms, to_ms)`. `app_cores` is how many cores the app box may use,
/// `pins` where each slot was pinned (empty sets when unknown).
pub(crate) fn window(
    s: &Samples,
    from_ms: i64,
    to_ms: i64,
    app_cores: Option<f64>,
    pins: &Pinning,
    rules: &SaturationRules,
) -> WindowServer {
    let mut w = WindowServer::default();
    let cg = in_window(&s.cgroup, |x| x.t, from_ms, to_ms);
    let per_role = cpu_by_role(cg);
    for (role, by_t) in &per_role {
        if let Some(m) = mean(by_t.values().copied()) {
            w.cpu_pct.insert(role.column().to_string(), m * 100.0);
        }
        if *role == Role::K6 {
            w.k6_cpu_max_pct = max(by_t.values().copied()).map(|c| c * 100.0);
        }
    }
    let host = in_window(&s.host, |x| x.t, from_ms, to_ms);
    host_figures(&mut w, cg, host);
    if !pins.db.is_empty() {
        w.db_core_busy_pct = cpus_busy_pct(host, pins.db);
    }
    let busy_pct = rules.app_cores * 100.0;
    w.app_cpus = cpus::split(pins.app, pins, host, &per_role, busy_pct);
    w.db_cpus = cpus::split(pins.db, pins, host, &per_role, busy_pct);
    let fpm = in_window(&s.fpm, |x| x.t, from_ms, to_ms);
    if !fpm.is_empty() {
        let fw = fpm_window(fpm);
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
        w.pg = Some(pg_window(pg, rules));
    }
    let node = in_window(&s.node, |x| x.t, from_ms, to_ms);
    if !node.is_empty() {
        let nw = node_window(node);
        node_saturation(&mut w.saturated, node, &nw, rules);
        w.node = Some(nw);
    }
    db_core_saturation(&mut w, &per_role, rules);
    if let Some(cores) = app_cores {
        app_box_saturation(&mut w, &per_role, cores, rules);
    }
    w
}

/// CPU per role and second: the containers of a role summed per timestamp.
fn cpu_by_role(cg: &[CgroupSample]) -> BTreeMap<Role, BTreeMap<i64, f64>> {
    let mut per_role: BTreeMap<Role, BTreeMap<i64, f64>> = BTreeMap::new();
    for x in cg {
        *per_role
            .entry(x.role)
            .or_default()
            .entry(x.t / 1000)
            .or_default() += x.cpu_cores;
    }
    per_role
}

fn max(it: impl Iterator<Item = f64>) -> Option<f64> {
    it.fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
}

fn share(n: usize, of: usize) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// PSI (the app box's, else the host's), dockerd's CPU and the busiest host CPU.
fn host_figures(w: &mut WindowServer, cg: &[CgroupSample], host: &[HostSample]) {
    w.psi_pct = mean(
        cg.iter()
            .filter(|x| x.role.is_app_box())
            .filter_map(|x| x.psi_some_avg10),
    );
    if w.psi_pct.is_none() {
        w.psi_pct = mean(host.iter().filter_map(|h| h.psi_some_avg10));
    }
    w.dockerd_pct = mean(host.iter().filter_map(|h| h.dockerd_cores)).map(|c| c * 100.0);
    w.host_cpu_max_pct = max(host.iter().flat_map(|h| h.cpu_busy_pct.iter().copied()));
}

/// Mean busy % of `cpus` over host samples (each sample: the mean over those CPUs it has).
pub(crate) fn cpus_busy_pct(host: &[HostSample], cpus: &[u32]) -> Option<f64> {
    let per_sample = host.iter().filter_map(|h| {
        let busy = |cpu: u32| -> Option<f64> {
            let i = if h.cpus.is_empty() {
                usize::try_from(cpu).ok()?
            } else {
                h.cpus.iter().position(|c| *c == cpu)?
            };
            h.cpu_busy_pct.get(i).copied()
        };
        mean(cpus.iter().filter_map(|c| busy(*c)))
    });
    mean(per_sample)
}

/// Per second of the window: the increase of a counter from the first sample to the last.
fn rate(first: (i64, u64), last: (i64, u64), n: usize) -> Option<f64> {
    if n < 2 {
        return None;
    }
    let dt = (last.0 - first.0) as f64 / 1000.0;
    (dt > 0.0).then(|| last.1.saturating_sub(first.1) as f64 / dt)
}

fn fpm_window(fpm: &[FpmSample]) -> FpmWindow {
    let sat = fpm
        .iter()
        .filter(|f| f.status.idle_processes == 0 && f.status.listen_queue > 0)
        .count();
    let (a, b) = (&fpm[0], &fpm[fpm.len() - 1]);
    let status = |f: fn(&FpmStatus) -> u64| fpm.iter().map(move |s| f(&s.status));
    FpmWindow {
        samples: fpm.len(),
        idle_min: status(|s| s.idle_processes).min().unwrap_or(0),
        total: status(|s| s.total_processes).max().unwrap_or(0),
        listen_queue_max: status(|s| s.listen_queue).max().unwrap_or(0),
        listen_queue_len: status(|s| s.listen_queue_len).max().unwrap_or(0),
        saturated_share: share(sat, fpm.len()),
        accepted_per_s: rate(
            (a.t, a.status.accepted_conn),
            (b.t, b.status.accepted_conn),
            fpm.len(),
        ),
    }
}

fn pg_window(pg: &[PgSample], rules: &SaturationRules) -> PgWindow {
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
    let (a, b) = (&pg[0], &pg[pg.len() - 1]);
    PgWindow {
        top,
        commits_per_s: rate((a.t, a.xact_commit), (b.t, b.xact_commit), pg.len()),
        waits_for_client: share(client_read, pg.len()) >= rules.most_of_step,
    }
}

fn node_window(node: &[NodeSample]) -> NodeWindow {
    let mut errors = BTreeMap::new();
    for n in node {
        for (k, v) in &n.errors {
            *errors.entry(k.clone()).or_default() += v;
        }
    }
    let mut inflight_by_t: BTreeMap<i64, f64> = BTreeMap::new();
    for n in node {
        *inflight_by_t.entry(n.t / 1000).or_default() += n.inflight as f64;
    }
    NodeWindow {
        samples: node.len(),
        elu_max: node.iter().map(|n| n.elu).fold(0.0, f64::max),
        eld_p99_max_ms: node.iter().map(|n| n.eld_p99_ms).fold(0.0, f64::max),
        pool_waiting_max: node
            .iter()
            .map(|n| n.pool_waiting_max.max(n.pool_waiting))
            .max()
            .unwrap_or(0),
        pool_waiting_share: share(
            node.iter()
                .filter(|n| n.pool_waiting > 0 || n.pool_waiting_max > 0)
                .count(),
            node.len(),
        ),
        inflight_max: node.iter().map(|n| n.inflight_max).max().unwrap_or(0),
        inflight_mean: mean(inflight_by_t.values().copied()).unwrap_or(0.0),
        err5xx: node.iter().map(|n| n.err5xx).sum(),
        errors,
    }
}

/// The event loop busy, or the pg pool exhausted, for most of the window.
fn node_saturation(
    saturated: &mut Vec<String>,
    node: &[NodeSample],
    nw: &NodeWindow,
    rules: &SaturationRules,
) {
    let elu_high = share(
        node.iter().filter(|n| n.elu >= rules.elu).count(),
        node.len(),
    );
    if elu_high >= rules.most_of_step {
        saturated.push(format!(
            "event loop busy (ELU {:.2}, ELD p99 {:.0} ms)",
            nw.elu_max, nw.eld_p99_max_ms
        ));
    }
    if nw.pool_waiting_share >= rules.most_of_step {
        saturated.push(format!(
            "pg pool exhausted ({} waiting)",
            nw.pool_waiting_max
        ));
    }
}

/// A single-core database near 100 %.
fn db_core_saturation(
    w: &mut WindowServer,
    per_role: &BTreeMap<Role, BTreeMap<i64, f64>>,
    rules: &SaturationRules,
) {
    if let Some(by_t) = per_role.get(&Role::Pg) {
        let high = by_t.values().filter(|c| **c >= rules.db_core).count();
        if share(high, by_t.len()) >= rules.most_of_step {
            w.saturated.push(format!(
                "pg core at {:.0} %",
                w.cpu_pct.get("pg").copied().unwrap_or(0.0)
            ));
        }
    }
}

/// The app box's CPU near the cores it may use.
fn app_box_saturation(
    w: &mut WindowServer,
    per_role: &BTreeMap<Role, BTreeMap<i64, f64>>,
    cores: f64,
    rules: &SaturationRules,
) {
    let mut app_by_t: BTreeMap<i64, f64> = BTreeMap::new();
    for (role, by_t) in per_role {
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
    if !app_by_t.is_empty() && share(high, app_by_t.len()) >= rules.most_of_step {
        let m = mean(app_by_t.values().copied()).unwrap_or(0.0);
        w.saturated.push(format!(
            "app CPU {:.0} % of {:.0} %",
            m * 100.0,
            cores * 100.0
        ));
    } else if let Some(split) = w
        .app_cpus
        .as_ref()
        .filter(|s| s.busy_share >= rules.most_of_step)
    {
        // The app's own CPU is below the bar, but its cores were busy or stolen all the same:
        // the hypervisor or another process took what the app would have used.
        w.saturated
            .push(format!("app CPU bound ({})", split.parts("app")));
    }
}

impl WindowServer {
    /// App-box CPU (fpm + nginx, or the Node app / demo server) in cores.
    pub(crate) fn app_cores(&self) -> Option<f64> {
        let v: Vec<f64> = Role::ALL
            .iter()
            .filter(|r| r.is_app_box())
            .filter_map(|r| self.cpu_pct.get(r.column()))
            .copied()
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::samples::tests::cg;

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
        let w = window(
            &s,
            0,
            20_000,
            None,
            &Pinning::default(),
            &SaturationRules::default(),
        );
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
            window(
                &s,
                0,
                20_000,
                None,
                &Pinning::default(),
                &SaturationRules::default()
            )
            .saturated
            .is_empty()
        );
    }

    #[test]
    fn cpu_per_role_pg_core_and_app_box() {
        let mut s = Samples::default();
        for i in 0..10 {
            let t = i * 1000;
            s.cgroup.push(cg(t, Role::PhpFpm, 1.41));
            s.cgroup.push(cg(t, Role::Nginx, 0.16));
            s.cgroup
                .push(cg(t, Role::Pg, if i < 9 { 0.95 } else { 0.5 }));
        }
        let w = window(
            &s,
            0,
            10_000,
            Some(2.0),
            &Pinning::default(),
            &SaturationRules::default(),
        );
        assert!((w.cpu_pct["fpm"] - 141.0).abs() < 1e-9);
        assert!((w.app_cores().unwrap() - 1.57).abs() < 1e-9);
        assert_eq!(w.psi_pct, Some(50.0));
        assert_eq!(w.saturated.len(), 1, "{:?}", w.saturated); // pg 90 % of samples >= 85 %; app 78.5 % < 90 %
        assert!(w.saturated[0].starts_with("pg core at"));
        let w = window(
            &s,
            0,
            10_000,
            Some(1.7),
            &Pinning::default(),
            &SaturationRules::default(),
        );
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
        let w = window(
            &s,
            0,
            10_000,
            None,
            &Pinning::default(),
            &SaturationRules::default(),
        );
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
            window(
                &s,
                0,
                10_000,
                None,
                &Pinning::default(),
                &SaturationRules::default()
            )
            .saturated
            .is_empty()
        );
    }

    #[test]
    fn db_core_busy_reads_the_pinned_cpus_by_number() {
        let h = |t: i64, busy: Vec<f64>, cpus: Vec<u32>| HostSample {
            t,
            cpu_busy_pct: busy,
            cpu_steal_pct: Vec::new(),
            cpus,
            psi_some_avg10: None,
            dockerd_cores: None,
            perflab_cores: None,
        };
        let mut s = Samples::default();
        // CPU 1 offline: the entries are CPUs 0, 2 and 3.
        s.host.push(h(0, vec![10.0, 90.0, 50.0], vec![0, 2, 3]));
        s.host.push(h(1000, vec![20.0, 70.0, 30.0], vec![0, 2, 3]));
        s.host.push(h(5000, vec![99.0, 99.0, 99.0], vec![0, 2, 3]));
        let busy = |s: &Samples, to_ms: i64, cpus: &[u32]| {
            window(
                s,
                0,
                to_ms,
                None,
                &Pinning {
                    db: cpus,
                    ..Default::default()
                },
                &SaturationRules::default(),
            )
            .db_core_busy_pct
        };
        assert_eq!(busy(&s, 2000, &[2]), Some(80.0));
        assert_eq!(busy(&s, 2000, &[2, 3]), Some(60.0));
        assert_eq!(busy(&s, 2000, &[1]), None);
        assert_eq!(busy(&s, 2000, &[]), None);
        // A run recorded before the CPU numbers: positions are the CPU numbers.
        let mut old = Samples::default();
        old.host.push(h(0, vec![10.0, 90.0], Vec::new()));
        assert_eq!(busy(&old, 1000, &[1]), Some(90.0));
    }
}
