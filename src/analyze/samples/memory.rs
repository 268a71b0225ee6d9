//! The memory of each role's processes over one window (issue 41, item 5): the means of the
//! PSS the fast sampler read beside each cgroup line (`records::ProcsMem`), in MiB, for the
//! whole container and per worker (php-fpm's pool: its total and each worker's share).
use super::{BTreeMap, CgroupSample};
use serde::{Deserialize, Serialize};

/// One role's processes over a window (means of the readings inside it; MiB).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemWindow {
    /// Readings inside the window.
    pub samples: usize,
    /// The container's processes' PSS, summed.
    pub pss_mib: f64,
    /// How many workers (processes of the most common name), most seen.
    pub workers: u32,
    /// The workers' PSS summed: the pool's total.
    pub worker_pss_total_mib: f64,
    /// One worker's PSS (the pool's total over its workers).
    pub worker_pss_mib: f64,
    /// One worker's private pages (what one more worker adds).
    pub worker_private_mib: f64,
}

const KIB_PER_MIB: f64 = 1024.0;

/// Each role's `MemWindow` from the cgroup lines inside the window that carry a reading (the
/// containers of a role summed per tick); empty when none does (runs before it was sampled).
pub(crate) fn memory_window(inside: &[CgroupSample]) -> BTreeMap<String, MemWindow> {
    // role -> tick -> (pss, workers, worker pss, worker private)
    let mut ticks: BTreeMap<String, BTreeMap<i64, [u64; 4]>> = BTreeMap::new();
    for x in inside {
        let Some(m) = &x.mem else { continue };
        let e = ticks.entry(x.role.column().to_string()).or_default();
        let sums = e.entry(x.t).or_default();
        let add = [
            m.pss_kib,
            m.workers.into(),
            m.worker_pss_kib,
            m.worker_private_kib,
        ];
        for (s, a) in sums.iter_mut().zip(add) {
            *s += a;
        }
    }
    ticks
        .into_iter()
        .map(|(role, by_t)| {
            let n = by_t.len() as f64;
            let mean = |i: usize| by_t.values().map(|v| v[i] as f64).sum::<f64>() / n / KIB_PER_MIB;
            let per = |i: usize| {
                let v = by_t.values().filter(|v| v[1] > 0);
                let (sum, k) = v.fold((0.0, 0.0), |(s, k), v| {
                    (s + v[i] as f64 / v[1] as f64, k + 1.0)
                });
                if k > 0.0 { sum / k / KIB_PER_MIB } else { 0.0 }
            };
            let w = MemWindow {
                samples: by_t.len(),
                pss_mib: mean(0),
                workers: by_t.values().map(|v| v[1] as u32).max().unwrap_or(0),
                worker_pss_total_mib: mean(2),
                worker_pss_mib: per(2),
                worker_private_mib: per(3),
            };
            (role, w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Role;
    use crate::sample::records::ProcsMem;

    fn line(t: i64, workers: u32, pss_kib: u64, private_kib: u64) -> CgroupSample {
        let mut c = super::super::tests::cg(t, Role::named("fpm").unwrap(), 0.5);
        c.mem = Some(ProcsMem {
            procs: workers + 1,
            pss_kib: pss_kib + 100,
            worker_name: "php-fpm8.4".into(),
            workers,
            worker_pss_kib: pss_kib,
            worker_private_kib: private_kib,
        });
        c
    }

    #[test]
    fn the_pools_total_and_each_workers_share_in_mib() {
        let inside = [
            line(1000, 20, 20 * 4096, 20 * 2048),
            line(2000, 20, 20 * 6144, 20 * 2048),
        ];
        let m = memory_window(&inside);
        let f = &m["fpm"];
        assert_eq!((f.samples, f.workers), (2, 20));
        assert_eq!(f.worker_pss_total_mib, 100.0); // (80 + 120) / 2
        assert_eq!(f.worker_pss_mib, 5.0);
        assert_eq!(f.worker_private_mib, 2.0);
        assert!((f.pss_mib - (100.0 + 100.0 / 1024.0)).abs() < 1e-9);
        // lines without a reading (older runs) give nothing
        let old = [super::super::tests::cg(1000, Role::PG, 0.2)];
        assert!(memory_window(&old).is_empty());
    }
}
