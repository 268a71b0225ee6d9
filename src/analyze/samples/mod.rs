//! Server-side samples written by the run's samplers (JSON lines, `t` = unix ms UTC): their
//! types (the samplers serialise exactly these), parsing, and where the host's CPU went;
//! `window` reduces them over a step or a second.
mod window;

use crate::lab::Role;
pub use crate::sample::records::*;
pub use window::*;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Files whose torn last line (a sampler killed mid-write) was dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub torn: Vec<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn cg(t: i64, role: Role, cores: f64) -> CgroupSample {
        CgroupSample {
            t,
            role,
            container: role.column().into(),
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
            s.cgroup.push(cg(t, Role::PhpFpm, 0.9));
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
            q.cgroup.push(cg(t, Role::PhpFpm, 0.5));
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
}
