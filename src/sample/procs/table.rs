//! The process table of the procs sampler, pure: `/proc/<pid>/stat` lines parsed, each
//! process placed and named into a source, cumulative counters turned into per-interval
//! deltas (a reaped child counted once), and one interval summarized into a line.
use std::collections::{BTreeMap, HashMap};

use crate::lab::Role;
use crate::sample::records::{HostProcsSample, ProcCores, ProcSource};

/// `PF_KTHREAD` in the flags field of `/proc/<pid>/stat`.
const PF_KTHREAD: u64 = 0x0020_0000;

/// The fields of one `/proc/<pid>/stat` line the sampler reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PidStat {
    pub comm: String,
    pub ppid: u32,
    pub kthread: bool,
    /// utime + stime (clock ticks): the process's own CPU, all its threads.
    pub own: u64,
    /// cutime + cstime: the CPU of the children it has reaped (and theirs).
    pub children: u64,
    /// Start time after boot (clock ticks): tells a reused pid from the process seen before.
    pub start: u64,
}

/// Parse `/proc/<pid>/stat` (the name may hold spaces and parentheses).
pub(crate) fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // after ')': state(0) ppid(1) pgrp session tty tpgid flags(6) minflt cminflt majflt
    // cmajflt utime(11) stime(12) cutime(13) cstime(14) prio nice threads itreal start(19)
    let n = |i: usize| -> Option<u64> { f.get(i)?.parse::<i64>().ok().map(|v| v.max(0) as u64) };
    Some(PidStat {
        comm: text.get(open + 1..close)?.to_owned(),
        ppid: n(1)? as u32,
        kthread: n(6)? & PF_KTHREAD != 0,
        own: n(11)? + n(12)?,
        children: n(13)? + n(14)?,
        start: n(19)?,
    })
}

/// Where a process runs, from its cgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Placement {
    /// In one of the run's containers: counted by the cgroup samples, not here.
    Lab,
    /// In a container that is not the run's, or a FUSE storage process serving one.
    Container,
    /// A FUSE storage process (fuse-overlayfs) serving the root file system of the run's
    /// container of this role: outside its cgroup, working for it.
    LabStorage(Role),
    #[default]
    Host,
}

/// Compilers and build helpers, by `comm` (15 characters at most).
const BUILD: &[&str] = &[
    "cargo",
    "rustc",
    "rustdoc",
    "clippy-driver",
    "cargo-clippy",
    "rust-analyzer",
    "rustfmt",
    "cc",
    "cc1",
    "cc1plus",
    "c++",
    "gcc",
    "g++",
    "clang",
    "as",
    "ld",
    "ld.bfd",
    "ld.gold",
    "ld.lld",
    "rust-lld",
    "mold",
    "collect2",
    "sccache",
];

/// The source of a process: by name, kernel threads by kind, then by where it runs.
pub(crate) fn classify(comm: &str, kthread: bool, own: bool, place: Placement) -> ProcSource {
    if own {
        return ProcSource::Perflab;
    }
    if kthread {
        return match kernel_name(comm) {
            "ksoftirqd" => ProcSource::Ksoftirqd,
            "kworker" => ProcSource::Kworker,
            _ => ProcSource::Kernel,
        };
    }
    match comm {
        "docker-proxy" => ProcSource::DockerProxy,
        "dockerd" => ProcSource::Dockerd,
        "containerd" | "runc" => ProcSource::Containerd,
        c if c.starts_with("containerd-shim") || c.starts_with("runc:") => ProcSource::Containerd,
        "fuse-overlayfs" if matches!(place, Placement::LabStorage(_)) => ProcSource::LabStorage,
        "fuse-overlayfs" => ProcSource::Containers,
        "k6" => ProcSource::K6,
        c if BUILD.contains(&c) || c.starts_with("build-script-") => ProcSource::Build,
        _ if place == Placement::Container => ProcSource::Containers,
        _ => ProcSource::Other,
    }
}

/// A kernel thread's name without its per-CPU or per-pool suffix ("kworker/1:2-events").
fn kernel_name(comm: &str) -> &str {
    comm.split('/').next().unwrap_or(comm)
}

/// A process as last seen.
#[derive(Debug, Clone)]
struct Seen {
    ppid: u32,
    start: u64,
    own: u64,
    children: u64,
    comm: String,
    source: ProcSource,
    place: Placement,
}

impl Seen {
    /// The name it is listed under: kernel threads without their suffix, this process as
    /// "perflab" (a test binary has another name).
    fn name(&self) -> String {
        match self.source {
            ProcSource::Perflab => "perflab".to_owned(),
            ProcSource::Ksoftirqd | ProcSource::Kworker | ProcSource::Kernel => {
                kernel_name(&self.comm).to_owned()
            }
            ProcSource::LabStorage => match self.place {
                Placement::LabStorage(role) => format!("{}:{}", self.comm, role.column()),
                _ => self.comm.clone(),
            },
            _ => self.comm.clone(),
        }
    }
}

/// One process's CPU over an interval (clock ticks).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Delta {
    pub pid: u32,
    pub name: String,
    pub source: ProcSource,
    pub place: Placement,
    pub ticks: u64,
}

/// The process table between scans: turns cumulative counters into per-interval deltas.
/// Pure: the caller reads `/proc` and says where a new pid runs (`place`).
#[derive(Debug, Default)]
pub(crate) struct ProcTable {
    own_pid: u32,
    seen: HashMap<u32, Seen>,
    scanned: bool,
}

impl ProcTable {
    pub(crate) fn new(own_pid: u32) -> ProcTable {
        ProcTable {
            own_pid,
            ..Default::default()
        }
    }

    /// Take the processes alive now and return each one's CPU since the last call. The first
    /// call only sets the baseline (all zero). A new process counts all its CPU (it started
    /// after the last scan). A process that disappeared was reaped: its parent's children time
    /// grew by its whole total, of which the part seen before is taken off again, so nothing
    /// counts twice and the CPU of a child too short-lived to be seen lands on its parent.
    pub(crate) fn advance(
        &mut self,
        now: Vec<(u32, PidStat)>,
        mut place: impl FnMut(u32, &PidStat) -> Placement,
    ) -> Vec<Delta> {
        let first = !self.scanned;
        self.scanned = true;
        let mut old = std::mem::take(&mut self.seen);
        let mut rows = Vec::with_capacity(now.len());
        let mut replaced = Vec::new();
        for (pid, st) in now {
            let before = match old.remove(&pid) {
                Some(s) if s.start != st.start => {
                    replaced.push(s);
                    None
                }
                s => s,
            };
            // (own, children) since the last scan
            let delta = match &before {
                Some(s) => (
                    st.own.saturating_sub(s.own),
                    st.children.saturating_sub(s.children),
                ),
                None if first => (0, 0),
                None => (st.own, st.children),
            };
            let placement = before.as_ref().map_or_else(|| place(pid, &st), |s| s.place);
            let source = match before {
                Some(s) if s.comm == st.comm => s.source,
                _ => classify(&st.comm, st.kthread, pid == self.own_pid, placement),
            };
            self.seen.insert(
                pid,
                Seen {
                    ppid: st.ppid,
                    start: st.start,
                    own: st.own,
                    children: st.children,
                    comm: st.comm,
                    source,
                    place: placement,
                },
            );
            rows.push((pid, delta));
        }
        let debt = reaped_debt(&old, &replaced);
        rows.into_iter()
            .map(|(pid, (own, children))| {
                let s = &self.seen[&pid];
                Delta {
                    pid,
                    name: s.name(),
                    source: s.source,
                    place: s.place,
                    ticks: own + children.saturating_sub(debt.get(&pid).copied().unwrap_or(0)),
                }
            })
            .collect()
    }
}

/// Per live pid, the ticks of its vanished descendants already counted: they come back in its
/// children time when it reaps them. A vanished parent passes its own and its children's on.
/// `replaced` vanished too, their pid now taken by a new process.
fn reaped_debt(gone: &HashMap<u32, Seen>, replaced: &[Seen]) -> HashMap<u32, u64> {
    let mut debt: HashMap<u32, u64> = HashMap::new();
    for s in gone.values().chain(replaced) {
        let mut p = s.ppid;
        for _ in 0..64 {
            match gone.get(&p) {
                Some(up) => p = up.ppid,
                None => break,
            }
        }
        *debt.entry(p).or_default() += s.own + s.children;
    }
    debt
}

/// One interval's line from the deltas: cores per source, the busiest names and the rest.
pub(crate) fn summarize(deltas: &[Delta], ticks_per_s: u64, dt_s: f64) -> HostProcsSample {
    let per_tick = 1.0 / (ticks_per_s.max(1) as f64 * dt_s.max(1e-3));
    let mut out = HostProcsSample::default();
    let mut by_name: BTreeMap<(&str, ProcSource), u64> = BTreeMap::new();
    for d in deltas.iter().filter(|d| d.ticks > 0) {
        if d.place == Placement::Lab {
            out.lab_cores += d.ticks as f64 * per_tick;
            continue;
        }
        *out.sources.entry(d.source).or_default() += d.ticks as f64 * per_tick;
        *by_name.entry((d.name.as_str(), d.source)).or_default() += d.ticks;
    }
    let mut names: Vec<_> = by_name.into_iter().collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for ((name, source), ticks) in names {
        let cores = ticks as f64 * per_tick;
        if out.top.len() < HostProcsSample::TOP {
            out.top.push(ProcCores {
                name: name.to_owned(),
                source,
                cores,
            });
        } else {
            out.rest_cores += cores;
        }
    }
    out.sources.values_mut().for_each(|c| *c = round4(*c));
    out.top.iter_mut().for_each(|p| p.cores = round4(p.cores));
    out.rest_cores = round4(out.rest_cores);
    out.lab_cores = round4(out.lab_cores);
    out
}

/// Four decimals: 0.1 ms of CPU per second, below the ticks' resolution; keeps lines short.
pub(super) fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in crate::sample) fn st(
        comm: &str,
        ppid: u32,
        own: u64,
        children: u64,
        start: u64,
    ) -> PidStat {
        PidStat {
            comm: comm.into(),
            ppid,
            kthread: false,
            own,
            children,
            start,
        }
    }

    fn ticks_of(d: &[Delta], name: &str) -> u64 {
        d.iter().filter(|d| d.name == name).map(|d| d.ticks).sum()
    }

    pub(in crate::sample) fn ticks_of_pid(d: &[Delta], pid: u32) -> u64 {
        d.iter().filter(|d| d.pid == pid).map(|d| d.ticks).sum()
    }

    #[test]
    fn stat_line_fields_kernel_flag_and_odd_names() {
        let line =
            "77 (my (odd) proc) S 1 77 77 0 -1 4194560 10 0 0 0 250 50 7 3 20 0 4 0 12345 0 0";
        let s = parse_pid_stat(line).unwrap();
        assert_eq!(s, st("my (odd) proc", 1, 300, 10, 12345));
        let kworker =
            "31 (kworker/1:2-events) I 2 0 0 0 -1 69238880 0 0 0 0 0 12 0 0 20 0 1 0 40 0 0";
        let k = parse_pid_stat(kworker).unwrap();
        assert!(k.kthread && !s.kthread);
        assert_eq!(
            classify(&k.comm, k.kthread, false, Placement::Host),
            ProcSource::Kworker
        );
        assert_eq!(parse_pid_stat("12 (short) S 1 2"), None);
    }

    #[test]
    fn names_map_to_sources() {
        let c = |n: &str| classify(n, false, false, Placement::Host);
        assert_eq!(c("docker-proxy"), ProcSource::DockerProxy);
        assert_eq!(c("containerd-shim"), ProcSource::Containerd);
        assert_eq!(c("runc:[2:INIT]"), ProcSource::Containerd);
        assert_eq!(c("rustc"), ProcSource::Build);
        assert_eq!(c("build-script-bu"), ProcSource::Build);
        assert_eq!(c("k6"), ProcSource::K6);
        assert_eq!(c("node"), ProcSource::Other);
        assert_eq!(
            classify("postgres", false, false, Placement::Container),
            ProcSource::Containers
        );
        assert_eq!(
            classify("ksoftirqd/0", true, false, Placement::Host),
            ProcSource::Ksoftirqd
        );
        assert_eq!(
            classify("rcu_preempt", true, false, Placement::Host),
            ProcSource::Kernel
        );
        assert_eq!(
            classify("anything", false, true, Placement::Host),
            ProcSource::Perflab
        );
    }

    #[test]
    fn deltas_new_and_reused_pids() {
        let mut t = ProcTable::new(0);
        let host = |_: u32, _: &PidStat| Placement::Host;
        let d = t.advance(vec![(10, st("bash", 1, 500, 0, 5))], host);
        assert_eq!(ticks_of(&d, "bash"), 0, "the first scan is the baseline");
        let d = t.advance(
            vec![
                (10, st("bash", 1, 530, 0, 5)),
                (11, st("rustc", 10, 40, 0, 90)),
            ],
            host,
        );
        assert_eq!((ticks_of(&d, "bash"), ticks_of(&d, "rustc")), (30, 40));
        // pid 11 reused by another process: the new one counts from zero; the old rustc was
        // reaped by bash, whose children time grew by its total (40 seen + 5 more)
        let d = t.advance(
            vec![
                (10, st("bash", 1, 530, 45, 5)),
                (11, st("node", 10, 7, 0, 99)),
            ],
            host,
        );
        assert_eq!((ticks_of(&d, "bash"), ticks_of(&d, "node")), (5, 7));
        assert_eq!(
            d.iter().find(|d| d.name == "node").unwrap().source,
            ProcSource::Other
        );
    }

    #[test]
    fn reaped_children_count_once_and_unseen_ones_land_on_the_parent() {
        let mut t = ProcTable::new(0);
        let host = |_: u32, _: &PidStat| Placement::Host;
        let cargo = |own, ch| (100, st("cargo", 1, own, ch, 1));
        t.advance(vec![cargo(10, 0), (101, st("rustc", 100, 50, 0, 2))], host);
        let d = t.advance(
            vec![
                cargo(12, 0),
                (101, st("rustc", 100, 150, 0, 2)),
                (102, st("cc", 101, 20, 0, 3)),
            ],
            host,
        );
        assert_eq!(
            ticks_of(&d, "rustc") + ticks_of(&d, "cc") + ticks_of(&d, "cargo"),
            122
        );
        // rustc reaped cc (20 seen + 4), then exited (150 seen + 10 more, cc's 24 in its
        // children time); cargo reaped it: +184 in cargo's children time, of which 170 seen.
        // An unseen short child of cargo: +30 more.
        let d = t.advance(vec![cargo(13, 184 + 30)], host);
        assert_eq!(ticks_of(&d, "cargo"), 1 + 14 + 30);
        // a parent that lets the kernel reap (SIGCHLD ignored) has no children time to take
        // the debt from: its own CPU is left alone
        let mut t = ProcTable::new(0);
        t.advance(vec![cargo(10, 0), (101, st("rustc", 100, 50, 0, 2))], host);
        let d = t.advance(vec![cargo(19, 0)], host);
        assert_eq!(ticks_of(&d, "cargo"), 9);
    }

    #[test]
    fn summary_sets_the_lab_apart_and_keeps_the_busiest_names() {
        let d = |name: &str, source, place, ticks| Delta {
            pid: 1,
            name: name.into(),
            source,
            place,
            ticks,
        };
        let mut v = vec![
            d("php-fpm", ProcSource::Other, Placement::Lab, 90),
            d("rustc", ProcSource::Build, Placement::Host, 40),
            d("rustc", ProcSource::Build, Placement::Host, 30),
            d("docker-proxy", ProcSource::DockerProxy, Placement::Host, 12),
            d("kworker", ProcSource::Kworker, Placement::Host, 0),
        ];
        for i in 0..8 {
            v.push(d(
                &format!("p{i}"),
                ProcSource::Other,
                Placement::Host,
                1 + i,
            ));
        }
        // 100 ticks/s over 2 s: 1 tick = 0.005 cores
        let s = summarize(&v, 100, 2.0);
        assert!((s.lab_cores - 0.45).abs() < 1e-9);
        assert!((s.sources[&ProcSource::Build] - 0.35).abs() < 1e-9);
        assert!((s.sources[&ProcSource::Other] - 36.0 * 0.005).abs() < 1e-9);
        assert!(
            !s.sources.contains_key(&ProcSource::Kworker),
            "idle sources are left out"
        );
        let names: Vec<&str> = s.top.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["rustc", "docker-proxy", "p7", "p6", "p5", "p4"]);
        // p0..p3 = 1+2+3+4 ticks
        assert!((s.rest_cores - 10.0 * 0.005).abs() < 1e-9);
        let total: f64 = s.sources.values().sum();
        let listed: f64 = s.top.iter().map(|p| p.cores).sum::<f64>() + s.rest_cores;
        assert!((total - listed).abs() < 1e-9);
    }
}
