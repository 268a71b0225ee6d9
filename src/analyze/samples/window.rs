//! The reduction of the samples over one window (a step or a second): CPU per role, PSI,
//! dockerd, the host's CPUs, php-fpm status, pg activity, Node metrics (`apps`), and
//! criterion 5 (saturated resources). Every figure from interval readings (CPU) is integrated
//! over exactly the window (`series`); maxima and shares are read per sampler tick.
use super::apps::{fpm_window, node_window, pg_window, share};
use super::series::{self, Span};
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
    /// Each role's processes' PSS (MiB), when sampled (`memory`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub memory: BTreeMap<String, MemWindow>,
    pub pg: Option<PgWindow>,
    pub node: Option<NodeWindow>,
    /// The figures of the sources read through their registry row (`sources::ROWS`), by
    /// quantity name (`nginx.active_max`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, f64>,
    /// Criterion 5: saturated resources, as short phrases ("fpm 20/20 busy, listen queue 186").
    pub saturated: Vec<String>,
    /// Figures the window could not measure or the bounds rule took out, by their claim name
    /// (`cpu.app`, `dockerd_pct`), with why ("had 1 sample(s) inside its 0.69 s window (2
    /// needed)", "read 119.9, outside its physical bounds"): they are left out above.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unusable: BTreeMap<String, String>,
}

/// Reduce the samples of `span`. `app_cores` is how many cores the app box may use, `pins`
/// where each slot was pinned (empty sets when unknown).
pub(crate) fn window(
    s: &Samples,
    span: Span,
    app_cores: Option<f64>,
    pins: &Pinning,
    rules: &SaturationRules,
) -> WindowServer {
    let mut w = WindowServer::default();
    let cg = in_window(&s.cgroup, |x| x.t, span.from, span.to);
    let ticks = cpu_by_tick(cg);
    role_cpu(&mut w, cg, series::around(&s.cgroup, |x| x.t, span), span);
    w.memory = super::memory::memory_window(cg);
    w.k6_cpu_max_pct = ticks
        .get(&Role::K6)
        .and_then(|by_t| max(by_t.values().copied()))
        .map(|c| c * 100.0);
    let host = in_window(&s.host, |x| x.t, span.from, span.to);
    let host_near = series::around(&s.host, |x| x.t, span);
    host_figures(&mut w, cg, host, host_near, span);
    if !pins.db.is_empty() {
        w.db_core_busy_pct = cpus_busy_pct(host_near, pins.db, span);
    }
    let busy_pct = rules.app_cores * 100.0;
    w.app_cpus = cpus::split(pins.app, pins, host, host_near, &w, span, busy_pct);
    w.db_cpus = cpus::split(pins.db, pins, host, host_near, &w, span, busy_pct);
    let fpm = in_window(&s.fpm, |x| x.t, span.from, span.to);
    if !fpm.is_empty() {
        let fw = fpm_window(fpm, series::around(&s.fpm, |x| x.t, span), span);
        if fw.saturated_share >= rules.most_of_step {
            w.saturated.push(format!(
                "fpm {}/{} busy, listen queue {}",
                fw.total, fw.total, fw.listen_queue_max
            ));
        }
        if fw.accepted_per_s.is_none() {
            too_few(&mut w, "fpm.accepted_per_s", fpm.len(), span);
        }
        w.fpm = Some(fw);
    }
    let pg = in_window(&s.pg, |x| x.t, span.from, span.to);
    if !pg.is_empty() {
        let near = series::around(&s.pg, |x| x.t, span);
        let pw = pg_window(pg, near, span, rules);
        if pw.commits_per_s.is_none() {
            too_few(&mut w, "pg.commits_per_s", pg.len(), span);
        }
        w.pg = Some(pw);
    }
    let node = in_window(&s.node, |x| x.t, span.from, span.to);
    if !node.is_empty() {
        let nw = node_window(node);
        node_saturation(&mut w.saturated, node, &nw, rules);
        w.node = Some(nw);
    }
    super::sources::window(s, span, &mut w);
    db_core_saturation(&mut w, &ticks, rules);
    if let Some(cores) = app_cores {
        app_box_saturation(&mut w, &ticks, cores, rules);
    }
    w
}

/// Each role's CPU over exactly the window: each container's interval readings integrated
/// (`series::interval_mean`), summed per role. A role whose container has too few samples in
/// the window has no figure, and says why in `unusable`.
fn role_cpu(w: &mut WindowServer, inside: &[CgroupSample], near: &[CgroupSample], span: Span) {
    let mut by_container: BTreeMap<&str, (Role, Vec<(i64, f64)>)> = BTreeMap::new();
    for x in near {
        let e = by_container
            .entry(x.container.as_str())
            .or_insert_with(|| (x.role, Vec::new()));
        e.1.push((x.t, x.cpu_cores));
    }
    let running: std::collections::HashSet<&str> =
        inside.iter().map(|x| x.container.as_str()).collect();
    let mut per_role: BTreeMap<Role, Result<f64, String>> = BTreeMap::new();
    for (name, (role, pts)) in &by_container {
        if !running.contains(name) {
            continue; // not running in this window
        }
        let v = series::interval_mean(pts, span)
            .ok_or_else(|| series::unusable(pts, span).unwrap_or_default());
        let sum = per_role.entry(*role).or_insert(Ok(0.0));
        *sum = match (sum.clone(), v) {
            (Ok(a), Ok(b)) => Ok(a + b),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
    }
    for (role, v) in per_role {
        match v {
            Ok(c) => {
                w.cpu_pct.insert(role.column().to_string(), c * 100.0);
            }
            Err(why) => {
                w.unusable.insert(format!("cpu.{}", role.column()), why);
            }
        }
    }
}

/// CPU per role and sampler tick: the containers of a role summed per `t` (the fast sampler
/// stamps one tick's lines with one `t`), for the maxima and the shares of saturated ticks.
fn cpu_by_tick(cg: &[CgroupSample]) -> BTreeMap<Role, BTreeMap<i64, f64>> {
    let mut per_role: BTreeMap<Role, BTreeMap<i64, f64>> = BTreeMap::new();
    for x in cg {
        *per_role.entry(x.role).or_default().entry(x.t).or_default() += x.cpu_cores;
    }
    per_role
}

fn max(it: impl Iterator<Item = f64>) -> Option<f64> {
    it.fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))))
}

/// PSI (the app box's, else the host's; gauges read at the samples inside), dockerd's CPU
/// (integrated over the window) and the busiest host CPU (the highest reading inside).
fn host_figures(
    w: &mut WindowServer,
    cg: &[CgroupSample],
    host: &[HostSample],
    host_near: &[HostSample],
    span: Span,
) {
    w.psi_pct = mean(
        cg.iter()
            .filter(|x| x.role.is_app_box())
            .filter_map(|x| x.psi_some_avg10),
    );
    if w.psi_pct.is_none() {
        w.psi_pct = mean(host.iter().filter_map(|h| h.psi_some_avg10));
    }
    if host.iter().any(|h| h.dockerd_cores.is_some()) {
        let pts: Vec<(i64, f64)> = host_near
            .iter()
            .filter_map(|h| Some((h.t, h.dockerd_cores?)))
            .collect();
        w.dockerd_pct = series::interval_mean(&pts, span).map(|c| c * 100.0);
        if w.dockerd_pct.is_none() {
            let why = series::unusable(&pts, span).unwrap_or_default();
            w.unusable.insert("dockerd_pct".into(), why);
        }
    }
    w.host_cpu_max_pct = max(host.iter().flat_map(|h| h.cpu_busy_pct.iter().copied()));
}

/// Why a counter's rate has no figure: the samples inside the window.
fn too_few(w: &mut WindowServer, figure: &str, inside: usize, span: Span) {
    let why = format!(
        "had {inside} sample(s) inside its {:.2} s window",
        span.seconds()
    );
    w.unusable.insert(figure.into(), why);
}

/// One CPU's busy % (by its number; a run recorded before the numbers: its position) in a
/// host sample.
pub(crate) fn cpu_busy(
    h: &HostSample,
    cpu: u32,
    of: impl Fn(&HostSample) -> &[f64],
) -> Option<f64> {
    let i = if h.cpus.is_empty() {
        usize::try_from(cpu).ok()?
    } else {
        h.cpus.iter().position(|c| *c == cpu)?
    };
    of(h).get(i).copied()
}

/// One CPU's readings (busy or steal %, by `of`) integrated over the window.
pub(crate) fn cpu_mean(
    host_near: &[HostSample],
    cpu: u32,
    span: Span,
    of: impl Fn(&HostSample) -> &[f64] + Copy,
) -> Option<f64> {
    let pts: Vec<(i64, f64)> = host_near
        .iter()
        .filter_map(|h| Some((h.t, cpu_busy(h, cpu, of)?)))
        .collect();
    series::interval_mean(&pts, span)
}

/// Mean busy % of `cpus` over exactly the window (each CPU's readings integrated).
pub(crate) fn cpus_busy_pct(host_near: &[HostSample], cpus: &[u32], span: Span) -> Option<f64> {
    mean(
        cpus.iter()
            .filter_map(|c| cpu_mean(host_near, *c, span, |h| &h.cpu_busy_pct)),
    )
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
    if let (Some(by_t), Some(pct)) = (per_role.get(&Role::PG), w.cpu_pct.get("pg").copied()) {
        let high = by_t.values().filter(|c| **c >= rules.db_core).count();
        if share(high, by_t.len()) >= rules.most_of_step {
            w.saturated.push(format!("pg core at {pct:.0} %"));
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
    let app = w.app_cores().filter(|_| !app_by_t.is_empty());
    if let Some(m) = app.filter(|_| share(high, app_by_t.len()) >= rules.most_of_step) {
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
    /// App-box CPU (fpm + nginx, or the Node app / demo server) in cores; `None` when one of
    /// its roles has no usable figure in the window.
    pub(crate) fn app_cores(&self) -> Option<f64> {
        let app_box = || Role::all().iter().copied().filter(|r| r.is_app_box());
        if app_box().any(|r| self.unusable.contains_key(&format!("cpu.{}", r.column()))) {
            return None;
        }
        let v: Vec<f64> = app_box()
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
            Span::step(0, 20_000),
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
                Span::step(0, 20_000),
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
            s.cgroup.push(cg(t, Role::named("fpm").unwrap(), 1.41));
            s.cgroup.push(cg(t, Role::named("nginx").unwrap(), 0.16));
            s.cgroup
                .push(cg(t, Role::PG, if i < 9 { 0.95 } else { 0.5 }));
        }
        let w = window(
            &s,
            Span::step(0, 10_000),
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
            Span::step(0, 10_000),
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
            Span::step(0, 10_000),
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
                Span::step(0, 10_000),
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
                Span::step(0, to_ms),
                None,
                &Pinning {
                    db: cpus,
                    ..Default::default()
                },
                &SaturationRules::default(),
            )
            .db_core_busy_pct
        };
        // Each reading is the busy % since the one before: over [0, 2000), CPU 2 was 70 % busy
        // in (0, 1000] and 99 % in (1000, 5000].
        assert_eq!(busy(&s, 2000, &[2]), Some(84.5));
        assert_eq!(busy(&s, 2000, &[2, 3]), Some(74.5));
        assert_eq!(busy(&s, 2000, &[1]), None);
        assert_eq!(busy(&s, 2000, &[]), None);
        // A run recorded before the CPU numbers: positions are the CPU numbers.
        let mut old = Samples::default();
        for (t, b) in [(0, 90.0), (1000, 70.0), (2000, 50.0)] {
            old.host.push(h(t, vec![10.0, b], Vec::new()));
        }
        assert_eq!(busy(&old, 2000, &[1]), Some(60.0));
        // One reading inside the window: too few for a step's figure.
        assert_eq!(busy(&old, 900, &[1]), None);
    }
}
