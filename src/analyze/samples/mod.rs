//! Server-side samples written by the run's samplers (JSON lines, `t` = unix ms UTC): their
//! types (the samplers serialise exactly these) and parsing; `window` reduces them over a step
//! or a second, `host` says where the host's CPU went.
mod apps;
mod cpus;
mod handshake;
mod host;
mod kernel;
mod memory;
mod series;
pub(crate) mod sources;
mod window;

use crate::lab::Role;
pub use crate::sample::records::*;
pub use apps::{FpmWindow, NodeWindow, PgWindow};
pub(crate) use cpus::{CpuSplit, HOST_LIMITED_PCT, Pinning};
/// Mean cores below which a consumer outside the lab is not named.
pub(crate) use host::NEGLIGIBLE as NEGLIGIBLE_CORES;
pub use host::host_share;
pub use memory::MemWindow;
pub use series::{MIN_STEP_SAMPLES, Span};
pub use sources::SourcePoint;
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
    /// The host's processes outside the lab by source (`hostprocs.jsonl`).
    #[serde(default)]
    pub hostprocs: Vec<HostProcsSample>,
    /// The readings of the sources read through their registry row (`sources::ROWS`), by
    /// source (`nginx`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sources: BTreeMap<String, Vec<SourcePoint>>,
    /// The php-fpm and nginx access logs (diag-acc only).
    #[serde(default)]
    pub access: super::access::AccessLogs,
    /// Files whose torn last line (a sampler killed mid-write) was dropped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub torn: Vec<String>,
}

impl Samples {
    /// The first column of `source`'s last reading at or before `t` (unix ms), as a count.
    pub(crate) fn last_reading(&self, source: &str, t: i64) -> Option<u64> {
        let p = self.sources.get(source)?.iter().rev().find(|p| p.t <= t)?;
        Some(p.values.first()?.max(0.0).round() as u64)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.cgroup.is_empty()
            && self.host.is_empty()
            && self.fpm.is_empty()
            && self.pg.is_empty()
            && self.node.is_empty()
            && self.hostprocs.is_empty()
            && self.sources.values().all(Vec::is_empty)
    }
    pub fn sort(&mut self) {
        self.cgroup.sort_by_key(|s| s.t);
        self.host.sort_by_key(|s| s.t);
        self.fpm.sort_by_key(|s| s.t);
        self.pg.sort_by_key(|s| s.t);
        self.node.sort_by_key(|s| s.t);
        self.hostprocs.sort_by_key(|s| s.t);
        self.sources
            .values_mut()
            .for_each(|v| v.sort_by_key(|s| s.t));
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
            mem: None,
            throttled_ms: 0.0,
            psi_some_avg10: Some(50.0),
        }
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
