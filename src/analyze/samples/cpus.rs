//! Where the CPUs of the app box and of the database went over a window: the lab's own
//! containers, the hypervisor's steal, and everything else (other processes, perflab, irq),
//! from the host's per-CPU samples and the pinning. Criterion 5 reads it so that a core the
//! hypervisor stole or another process took counts as busy, and a step that lost more than
//! `HOST_LIMITED_PCT` of those CPUs is marked host-limited.
use super::series::Span;
use super::window::{cpu_busy, cpu_mean};
use super::*;
use crate::lab::Slot;

/// A step whose app or database CPUs lost more than this share (%) to steal, or to processes
/// outside the lab, is host-limited: its figures say as much about the host as about the lab.
pub(crate) const HOST_LIMITED_PCT: f64 = 10.0;

/// The CPUs the run pinned each slot to (empty when unknown: runs recorded before the layout
/// was kept, loose files given to `analyze`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Pinning<'a> {
    pub app: &'a [u32],
    pub db: &'a [u32],
    pub loadgen: &'a [u32],
}

/// How one set of pinned CPUs was spent over a window, in % of those CPUs (100 = all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuSplit {
    /// Not idle: the lab, everything else and steal.
    pub busy_pct: f64,
    /// Stolen by the hypervisor (`None` when the host's samples carry no steal column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// The lab's containers pinned to these CPUs (from their cgroups).
    pub lab_pct: f64,
    /// The rest: processes outside the lab, perflab's samplers, dockerd, interrupts.
    pub other_pct: f64,
    /// Share of the host samples in which these CPUs were at least `app_cores` busy.
    pub busy_share: f64,
}

impl CpuSplit {
    /// "65 % app + 31 % stolen by the hypervisor + 3 % other processes" (parts under 1 % left out).
    pub(crate) fn parts(&self, lab: &str) -> String {
        let mut v = vec![format!("{:.0} % {lab}", self.lab_pct)];
        if let Some(s) = self.steal_pct.filter(|s| *s >= 1.0) {
            v.push(format!("{s:.0} % stolen by the hypervisor"));
        }
        if self.other_pct >= 1.0 {
            v.push(format!("{:.0} % other processes", self.other_pct));
        }
        v.join(" + ")
    }

    /// Why the CPUs' owner was not the only user, when steal or other processes passed
    /// `HOST_LIMITED_PCT` ("the hypervisor stole 31 % of the app's CPU").
    pub(crate) fn host_limited(&self, whose: &str) -> Option<String> {
        let mut v = Vec::new();
        if let Some(s) = self.steal_pct.filter(|s| *s > HOST_LIMITED_PCT) {
            v.push(format!("the hypervisor stole {s:.0} % of {whose} CPU"));
        }
        if self.other_pct > HOST_LIMITED_PCT {
            v.push(format!(
                "processes outside the lab took {:.0} % of {whose} CPU",
                self.other_pct
            ));
        }
        (!v.is_empty()).then(|| v.join("; "))
    }
}

/// Busy % of `cpus` in one host sample (mean over those CPUs it has).
fn sample_busy(h: &HostSample, cpus: &[u32]) -> Option<f64> {
    mean(
        cpus.iter()
            .filter_map(|c| cpu_busy(h, *c, |h| &h.cpu_busy_pct)),
    )
}

/// The lab's roles pinned inside `cpus`: the app box on the app's CPUs, PostgreSQL on the
/// database's, k6 on the load generator's (on 2 CPUs k6 shares PostgreSQL's core).
fn lab_roles(cpus: &[u32], pins: &Pinning) -> Vec<Role> {
    let inside = |set: &[u32]| !set.is_empty() && set.iter().all(|c| cpus.contains(c));
    // every role that runs a container, by the slot it is pinned to
    Role::with_containers()
        .filter(|r| {
            inside(match r.slot() {
                Slot::Loadgen => pins.loadgen,
                Slot::Db => pins.db,
                Slot::App => pins.app,
            })
        })
        .collect()
}

/// The split of `cpus` over exactly the window (each CPU's busy and steal readings
/// integrated, the lab's roles from the window's CPU figures); `threshold_pct` is the busy
/// share that counts a sample inside the window as saturated. `None` when the CPUs are
/// unknown, no host sample covers them, or a lab role on them has no usable figure.
pub(crate) fn split(
    cpus: &[u32],
    pins: &Pinning,
    host: &[HostSample],
    host_near: &[HostSample],
    w: &WindowServer,
    span: Span,
    threshold_pct: f64,
) -> Option<CpuSplit> {
    if cpus.is_empty() {
        return None;
    }
    let per_cpu = |of: fn(&HostSample) -> &[f64]| {
        mean(
            cpus.iter()
                .filter_map(|c| cpu_mean(host_near, *c, span, of)),
        )
    };
    let busy = per_cpu(|h| &h.cpu_busy_pct)?;
    let steal = host
        .iter()
        .all(|h| !h.cpu_steal_pct.is_empty())
        .then(|| per_cpu(|h| &h.cpu_steal_pct))
        .flatten();
    let mut lab_cores = 0.0;
    for role in lab_roles(cpus, pins) {
        let column = role.column();
        if w.unusable.contains_key(&format!("cpu.{column}")) {
            return None;
        }
        lab_cores += w.cpu_pct.get(column).copied().unwrap_or(0.0) / 100.0;
    }
    let lab_pct = (lab_cores / cpus.len() as f64 * 100.0).min(busy);
    let per_sample: Vec<f64> = host.iter().filter_map(|h| sample_busy(h, cpus)).collect();
    let high = per_sample.iter().filter(|b| **b >= threshold_pct).count();
    Some(CpuSplit {
        busy_pct: busy,
        steal_pct: steal,
        lab_pct,
        other_pct: (busy - lab_pct - steal.unwrap_or(0.0)).max(0.0),
        busy_share: high as f64 / per_sample.len().max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(t: i64, busy: [f64; 2], steal: [f64; 2]) -> HostSample {
        HostSample {
            t,
            cpu_busy_pct: busy.to_vec(),
            cpu_steal_pct: steal.to_vec(),
            cpus: vec![0, 1],
            psi_some_avg10: None,
            dockerd_cores: None,
            perflab_cores: None,
        }
    }

    fn app_at(cores: f64) -> WindowServer {
        let mut w = WindowServer::default();
        w.cpu_pct.insert("fpm".into(), cores * 100.0);
        w
    }

    const SPAN: Span = Span {
        from: 0,
        to: 10_000,
        min_inside: 2,
    };

    const PINS: Pinning = Pinning {
        app: &[1],
        db: &[0],
        loadgen: &[0],
    };

    #[test]
    fn steal_and_other_processes_are_told_apart_from_the_app() {
        // the app's CPU (1): 65 % app, 31 % stolen, 2 % someone else
        let host: Vec<HostSample> = (0..10)
            .map(|t| host(t * 1000, [40.0, 98.0], [0.0, 31.0]))
            .collect();
        let s = split(&[1], &PINS, &host, &host, &app_at(0.65), SPAN, 90.0).unwrap();
        assert!((s.lab_pct - 65.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.steal_pct, Some(31.0));
        assert!((s.other_pct - 2.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.busy_share, 1.0);
        assert_eq!(
            s.parts("app"),
            "65 % app + 31 % stolen by the hypervisor + 2 % other processes"
        );
        assert_eq!(
            s.host_limited("the app's").as_deref(),
            Some("the hypervisor stole 31 % of the app's CPU")
        );
    }

    /// The case: fpm 65 % of its one core, the hypervisor 31 %: criterion 5 names the
    /// app CPU bound with the split, where the app's own CPU alone (65 % < 90 %) said nothing.
    #[test]
    fn busy_plus_stolen_is_app_cpu_bound_with_the_split_shown() {
        let mut s = Samples::default();
        for i in 0..10 {
            s.cgroup.push(super::super::tests::cg(
                i * 1000,
                Role::named("fpm").unwrap(),
                0.65,
            ));
            s.host.push(host(i * 1000, [40.0, 98.0], [0.0, 31.0]));
        }
        let rules = SaturationRules::default();
        let w = window(&s, SPAN, Some(1.0), &PINS, &rules);
        assert_eq!(
            w.saturated,
            ["app CPU bound (65 % app + 31 % stolen by the hypervisor + 2 % other processes)"]
        );
        // without the pinning (older runs) only the app's own CPU counts: nothing saturated
        let w = window(&s, SPAN, Some(1.0), &Pinning::default(), &rules);
        assert!(w.saturated.is_empty(), "{:?}", w.saturated);
        // the app at its ceiling keeps today's wording
        s.cgroup.iter_mut().for_each(|c| c.cpu_cores = 0.97);
        let w = window(&s, SPAN, Some(1.0), &PINS, &rules);
        assert_eq!(w.saturated, ["app CPU 97 % of 100 %"]);
    }

    #[test]
    fn a_quiet_core_is_not_host_limited_and_unknown_steal_is_not_zero() {
        let host: Vec<HostSample> = (0..10)
            .map(|t| host(t * 1000, [40.0, 66.0], [0.0, 0.0]))
            .collect();
        let s = split(&[1], &PINS, &host, &host, &app_at(0.65), SPAN, 90.0).unwrap();
        assert_eq!(s.host_limited("the app's"), None);
        assert_eq!(s.busy_share, 0.0);
        let mut old = host.clone();
        old.iter_mut().for_each(|h| h.cpu_steal_pct.clear());
        assert_eq!(
            split(&[1], &PINS, &old, &old, &app_at(0.65), SPAN, 90.0)
                .unwrap()
                .steal_pct,
            None
        );
        assert_eq!(
            split(&[], &PINS, &host, &host, &app_at(0.65), SPAN, 90.0),
            None
        );
    }

    #[test]
    fn the_load_generator_sharing_the_database_core_is_lab_not_other() {
        let host: Vec<HostSample> = (0..10)
            .map(|t| host(t * 1000, [95.0, 50.0], [0.0, 0.0]))
            .collect();
        let mut roles = app_at(0.5);
        roles.cpu_pct.insert("pg".into(), 70.0);
        roles.cpu_pct.insert("k6".into(), 23.0);
        let s = split(&[0], &PINS, &host, &host, &roles, SPAN, 90.0).unwrap();
        assert!((s.lab_pct - 93.0).abs() < 1e-9, "{s:?}");
        assert!((s.other_pct - 2.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.host_limited("the database's"), None);
    }
}
