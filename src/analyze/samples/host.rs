//! Where the host's CPU went over a window: busy = the lab's containers + perflab/dockerd +
//! steal + other, and the other cores by who used them: the processes outside the lab by
//! source (`hostprocs.jsonl`), irq time in no process, and what stays unattributed. Pure.
use super::series::{self, Span};
use super::*;
use crate::analyze::model::{Consumer, HostConsumer, HostShare, NamedCores};

/// How many process names the share keeps.
const TOP_NAMES: usize = 5;
/// Consumers below this (mean cores) are left out of the lists.
pub(crate) const NEGLIGIBLE: f64 = 0.005;

/// One sampler tick of the window: its readings cover the interval since the tick before.
struct Second<'a> {
    /// How much of the window that interval covers (ms).
    weight: f64,
    busy: f64,
    lab: f64,
    harness: f64,
    steal: Option<f64>,
    procs: Option<&'a HostProcsSample>,
}

/// Where the host's CPU went over exactly `[from_ms, to_ms)`: per sampler tick (the fast
/// sampler stamps a tick's host, cgroup and processes lines with one `t`), busy cores minus the
/// lab's containers of that tick, perflab + dockerd and steal, each tick weighted by how much of
/// the window its interval covers; the rest split by who used it where the procs sampler ran.
pub fn host_share(s: &Samples, from_ms: i64, to_ms: i64) -> Option<HostShare> {
    let span = Span::step(from_ms, to_ms);
    let host = series::around(&s.host, |x| x.t, span);
    let ts: Vec<i64> = host.iter().map(|h| h.t).collect();
    let mut lab_by_t: BTreeMap<i64, f64> = BTreeMap::new();
    for c in series::around(&s.cgroup, |x| x.t, span) {
        *lab_by_t.entry(c.t).or_default() += c.cpu_cores;
    }
    let procs_by_t: BTreeMap<i64, &HostProcsSample> = series::around(&s.hostprocs, |x| x.t, span)
        .iter()
        .map(|p| (p.t, p))
        .collect();
    let rows: Vec<Second> = host
        .iter()
        .zip(series::overlaps(&ts, span))
        .filter(|(_, weight)| *weight > 0.0)
        .filter_map(|(h, weight)| {
            let lab = *lab_by_t.get(&h.t)?;
            Some(Second {
                weight,
                busy: h.cpu_busy_pct.iter().sum::<f64>() / 100.0,
                lab,
                harness: h.dockerd_cores.unwrap_or(0.0) + h.perflab_cores.unwrap_or(0.0),
                steal: (!h.cpu_steal_pct.is_empty())
                    .then(|| h.cpu_steal_pct.iter().sum::<f64>() / 100.0),
                procs: procs_by_t.get(&h.t).copied(),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let total: f64 = rows.iter().map(|r| r.weight).sum();
    let m = |f: &dyn Fn(&Second) -> f64| rows.iter().map(|r| r.weight * f(r)).sum::<f64>() / total;
    let (busy, lab, harness) = (m(&|r| r.busy), m(&|r| r.lab), m(&|r| r.harness));
    let steal = rows
        .iter()
        .all(|r| r.steal.is_some())
        .then(|| m(&|r| r.steal.unwrap_or(0.0)));
    let mut share = HostShare {
        busy_cores: busy,
        lab_cores: lab,
        harness_cores: harness,
        steal_cores: steal,
        other_cores: (busy - lab - harness - steal.unwrap_or(0.0)).max(0.0),
        samples: rows.len(),
        outside: Vec::new(),
        top_processes: Vec::new(),
        irq_cores: None,
    };
    attribute(&mut share, &rows);
    Some(share)
}

/// perflab and dockerd are counted in `harness_cores` already (the host sampler's figures).
fn in_harness(s: ProcSource) -> bool {
    matches!(s, ProcSource::Perflab | ProcSource::Dockerd)
}

/// Split `other_cores` by who used it, from the procs lines of the window's seconds (when at
/// least half of them have one): the processes' sources, then the rest up to the irq time
/// measured as irq in no process, then what stays unattributed.
fn attribute(h: &mut HostShare, rows: &[Second]) {
    let procs: Vec<(f64, &HostProcsSample)> = rows
        .iter()
        .filter_map(|r| Some((r.weight, r.procs?)))
        .collect();
    if procs.is_empty() || procs.len() * 2 < rows.len() {
        return;
    }
    let n: f64 = procs.iter().map(|p| p.0).sum();
    let mut by_source: BTreeMap<ProcSource, f64> = BTreeMap::new();
    let mut by_name: BTreeMap<(&str, ProcSource), f64> = BTreeMap::new();
    let mut irq = 0.0;
    for (w, p) in &procs {
        let share = w / n;
        for (src, c) in p.sources.iter().filter(|(s, _)| !in_harness(**s)) {
            *by_source.entry(*src).or_default() += c * share;
        }
        for t in p.top.iter().filter(|t| !in_harness(t.source)) {
            *by_name.entry((&t.name, t.source)).or_default() += t.cores * share;
        }
        irq += (p.irq_pct.iter().sum::<f64>() + p.softirq_pct.iter().sum::<f64>()) / 100.0 * share;
    }
    let residual = h.other_cores - by_source.values().sum::<f64>();
    let irq_part = residual.clamp(0.0, irq);
    let mut outside: Vec<HostConsumer> = by_source
        .into_iter()
        .map(|(s, cores)| HostConsumer {
            who: Consumer::Process(s),
            cores,
        })
        .collect();
    outside.push(HostConsumer {
        who: Consumer::Irq,
        cores: irq_part,
    });
    outside.push(HostConsumer {
        who: Consumer::Unattributed,
        cores: residual - irq_part,
    });
    outside.retain(|c| c.cores.abs() >= NEGLIGIBLE);
    outside.sort_by(|a, b| b.cores.total_cmp(&a.cores).then(a.who.cmp(&b.who)));
    h.outside = outside;
    h.irq_cores = Some(irq);
    let mut names: Vec<NamedCores> = by_name
        .into_iter()
        .filter(|(_, c)| *c >= NEGLIGIBLE)
        .map(|((name, source), cores)| NamedCores {
            name: name.to_owned(),
            source,
            cores,
        })
        .collect();
    names.sort_by(|a, b| b.cores.total_cmp(&a.cores).then(a.name.cmp(&b.name)));
    names.truncate(TOP_NAMES);
    h.top_processes = names;
}

impl HostShare {
    /// The consumers `keep` picks, largest first, at most `max`, with the busiest names of a
    /// source when it has several or another name: "cargo/rustc 0.91 (rustc 0.85, cc1 0.05),
    /// docker-proxy 0.12, softirq/irq 0.08".
    pub(crate) fn outside_text(&self, keep: impl Fn(Consumer) -> bool, max: usize) -> String {
        let listed: Vec<String> = self
            .outside
            .iter()
            .filter(|c| keep(c.who))
            .take(max)
            .map(|c| {
                let label = c.who.label();
                let names: Vec<String> = match c.who {
                    Consumer::Process(src) => self
                        .top_processes
                        .iter()
                        .filter(|n| n.source == src)
                        .take(3)
                        .map(|n| {
                            // "fuse-overlayfs:pg" under "fuse-overlayfs": "pg"
                            let short =
                                n.name.strip_prefix(label).and_then(|r| r.strip_prefix(':'));
                            format!("{} {:.2}", short.unwrap_or(&n.name), n.cores)
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let same = names.len() == 1 && names[0].starts_with(&format!("{label} "));
                if names.is_empty() || same {
                    format!("{label} {:.2}", c.cores)
                } else {
                    format!("{label} {:.2} ({})", c.cores, names.join(", "))
                }
            })
            .collect();
        listed.join(", ")
    }

    /// The sum of the consumers `keep` picks.
    pub fn outside_cores(&self, keep: impl Fn(Consumer) -> bool) -> f64 {
        self.outside
            .iter()
            .filter(|c| keep(c.who))
            .map(|c| c.cores)
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::samples::tests::cg;

    fn host(t: i64, busy: [f64; 2], steal: Option<[f64; 2]>) -> HostSample {
        HostSample {
            t,
            cpu_busy_pct: busy.to_vec(),
            cpu_steal_pct: steal.map(|s| s.to_vec()).unwrap_or_default(),
            cpus: Vec::new(),
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
            s.cgroup.push(cg(t, Role::named("fpm").unwrap(), 0.9));
            s.cgroup.push(cg(t, Role::K6, 0.1));
            // 1.5 cores busy: 1.0 lab + 0.02 harness + 0.2 steal + 0.28 other
            s.host.push(host(t, [60.0, 90.0], Some([10.0, 10.0])));
        }
        let h = host_share(&s, 1_000_000, 1_010_000).unwrap();
        // the first tick's reading covers the second before the window
        assert_eq!(h.samples, 9);
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
            q.cgroup.push(cg(t, Role::named("fpm").unwrap(), 0.5));
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

    fn procs(
        t: i64,
        sources: &[(ProcSource, f64)],
        top: &[(&str, ProcSource, f64)],
        softirq: [f64; 2],
    ) -> HostProcsSample {
        HostProcsSample {
            t,
            sources: sources.iter().copied().collect(),
            top: top
                .iter()
                .map(|(name, source, cores)| ProcCores {
                    name: (*name).into(),
                    source: *source,
                    cores: *cores,
                })
                .collect(),
            softirq_pct: softirq.to_vec(),
            irq_pct: vec![0.0, 0.0],
            ..Default::default()
        }
    }

    /// 10 s: lab 1.0 core, busy 1.9, perflab + dockerd 0.02, steal 0.1: other 0.78 cores.
    fn shared_host(procs_line: impl Fn(i64) -> Option<HostProcsSample>) -> Samples {
        let mut s = Samples::default();
        for i in 0..10 {
            let t = 1_000_000 + i * 1000;
            s.cgroup.push(cg(t, Role::named("fpm").unwrap(), 0.9));
            s.cgroup.push(cg(t, Role::K6, 0.1));
            s.host.push(host(t, [95.0, 95.0], Some([5.0, 5.0])));
            s.hostprocs.extend(procs_line(t));
        }
        s
    }

    #[test]
    fn other_cores_are_split_by_source_then_irq_then_unattributed() {
        use ProcSource::*;
        let s = shared_host(|t| {
            Some(procs(
                t,
                &[
                    (Build, 0.5),
                    (DockerProxy, 0.12),
                    (Kworker, 0.02),
                    (Perflab, 0.01),
                    (Dockerd, 0.01),
                ],
                &[
                    ("rustc", Build, 0.45),
                    ("docker-proxy", DockerProxy, 0.12),
                    ("cc1", Build, 0.05),
                    ("perflab", Perflab, 0.01),
                ],
                [5.0, 5.0],
            ))
        });
        let h = host_share(&s, 1_000_000, 1_010_000).unwrap();
        assert!((h.other_cores - 0.78).abs() < 1e-9, "{h:?}");
        let got: Vec<(&str, String)> = h
            .outside
            .iter()
            .map(|c| (c.who.label(), format!("{:.2}", c.cores)))
            .collect();
        let want = [
            ("cargo/rustc", "0.50"),
            ("docker-proxy", "0.12"),
            ("softirq/irq", "0.10"),
            ("unattributed", "0.04"),
            ("kworker", "0.02"),
        ];
        assert_eq!(
            got,
            want.map(|(a, b)| (a, b.to_string())),
            "perflab and dockerd are in the harness figure"
        );
        let sum: f64 = h.outside.iter().map(|c| c.cores).sum();
        assert!(
            (sum - h.other_cores).abs() < 1e-9,
            "the split adds up to other"
        );
        assert_eq!(h.irq_cores.map(|c| format!("{c:.2}")), Some("0.10".into()));
        let names: Vec<&str> = h.top_processes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["rustc", "docker-proxy", "cc1"]);
        assert_eq!(
            h.outside_text(|_| true, 3),
            "cargo/rustc 0.50 (rustc 0.45, cc1 0.05), docker-proxy 0.12, softirq/irq 0.10"
        );
        assert!((h.outside_cores(Consumer::is_other_users) - 0.5).abs() < 1e-9);
        let w = crate::analyze::run::host_share_warnings(&h);
        assert_eq!(w.len(), 3, "other users, Docker's plumbing, steal: {w:#?}");
        assert!(w[0].starts_with("other users' processes used 0.50 cores on average during the steps (cargo/rustc 0.50 (rustc 0.45, cc1 0.05); host busy 1.90"), "{}", w[0]);
        assert!(w[1].starts_with("Docker's plumbing outside the containers used 0.12 cores on average during the steps (docker-proxy 0.12)"), "{}", w[1]);
        // the sources add up to more than other: no irq share, unattributed goes negative
        let s = shared_host(|t| Some(procs(t, &[(Build, 0.9)], &[], [5.0, 5.0])));
        let h = host_share(&s, 1_000_000, 1_010_000).unwrap();
        let irq = h.outside.iter().find(|c| c.who == Consumer::Irq);
        assert!(irq.is_none(), "{h:?}");
        let un = h.outside.iter().find(|c| c.who == Consumer::Unattributed);
        assert!((un.unwrap().cores + 0.12).abs() < 1e-9, "{h:?}");
        // procs lines in fewer than half the seconds (or none, older runs): no split
        let s = shared_host(|t| (t < 1_004_000).then(|| procs(t, &[(Build, 0.5)], &[], [0.0; 2])));
        let h = host_share(&s, 1_000_000, 1_010_000).unwrap();
        assert!(h.outside.is_empty() && h.irq_cores.is_none(), "{h:?}");
    }
}
