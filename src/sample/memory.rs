//! The memory of a container's processes, read on the fast tick beside its cgroup line
//! (issue 41, item 5): each process's proportional set size (PSS: its private pages plus its
//! share of the pages it shares) and private pages from `/proc/<pid>/smaps_rollup`, summed
//! over the container and over its workers (the processes of its most common name: php-fpm's
//! master and workers, PostgreSQL's backends). A cgroup's memory counts page cache and kernel
//! memory too; PSS counts what the processes map, each shared page once in all.
use std::fs;
use std::path::Path;

use super::cgroup::CgroupPaths;
use super::records::ProcsMem;

/// `Pss` and `Private_Clean + Private_Dirty` of one `smaps_rollup`, in KiB.
pub(crate) fn parse_smaps_rollup(text: &str) -> Option<(u64, u64)> {
    let kib = |key: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(key)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse::<u64>()
                .ok()
        })
    };
    let pss = kib("Pss:")?;
    Some((
        pss,
        kib("Private_Clean:").unwrap_or(0) + kib("Private_Dirty:").unwrap_or(0),
    ))
}

/// The sums of `procs` (name, PSS KiB, private KiB): over all, and over the processes of the
/// most common name (ties: the first in order).
pub(crate) fn summarize(procs: &[(String, u64, u64)]) -> Option<ProcsMem> {
    if procs.is_empty() {
        return None;
    }
    let count = |n: &str| procs.iter().filter(|p| p.0 == n).count();
    let name = procs
        .iter()
        .map(|p| p.0.as_str())
        .max_by_key(|n| count(n))?;
    let workers: Vec<_> = procs.iter().filter(|p| p.0 == name).collect();
    Some(ProcsMem {
        procs: procs.len() as u32,
        pss_kib: procs.iter().map(|p| p.1).sum(),
        worker_name: name.to_string(),
        workers: workers.len() as u32,
        worker_pss_kib: workers.iter().map(|p| p.1).sum(),
        worker_private_kib: workers.iter().map(|p| p.2).sum(),
    })
}

/// The container's processes now (those gone while reading are skipped); `None` when its
/// `cgroup.procs` cannot be read.
pub(crate) fn read(paths: &CgroupPaths) -> Option<ProcsMem> {
    let dir: &Path = match paths {
        CgroupPaths::V2 { dir } => dir,
        CgroupPaths::V1 {
            memory, cpuacct, ..
        } => memory.as_deref().unwrap_or(cpuacct),
    };
    let pids = fs::read_to_string(dir.join("cgroup.procs")).ok()?;
    let procs: Vec<(String, u64, u64)> = pids
        .lines()
        .filter_map(|p| {
            let comm = fs::read_to_string(format!("/proc/{p}/comm")).ok()?;
            let rollup = fs::read_to_string(format!("/proc/{p}/smaps_rollup")).ok()?;
            let (pss, private) = parse_smaps_rollup(&rollup)?;
            Some((comm.trim().to_string(), pss, private))
        })
        .collect();
    summarize(&procs)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLUP: &str = "55d0c8a2e000-7ffd1c9f1000 ---p 00000000 00:00 0                          [rollup]\n\
Rss:               38412 kB\nPss:               12055 kB\nPss_Dirty:          4100 kB\n\
Shared_Clean:      26000 kB\nShared_Dirty:        412 kB\nPrivate_Clean:       900 kB\n\
Private_Dirty:      3100 kB\nReferenced:        38000 kB\nSwap:                  0 kB\n";

    #[test]
    fn smaps_rollup_gives_pss_and_private() {
        assert_eq!(parse_smaps_rollup(ROLLUP), Some((12055, 4000)));
        assert_eq!(parse_smaps_rollup("Rss: 1 kB\n"), None);
    }

    #[test]
    fn the_workers_are_the_most_common_name() {
        let p = |n: &str, pss, private| (n.to_string(), pss, private);
        let procs = [
            p("docker-init", 100, 100),
            p("php-fpm8.4", 9000, 2000),
            p("php-fpm8.4", 3000, 1500),
            p("php-fpm8.4", 3000, 1500),
        ];
        let m = summarize(&procs).unwrap();
        assert_eq!((m.procs, m.pss_kib), (4, 15100));
        assert_eq!((m.worker_name.as_str(), m.workers), ("php-fpm8.4", 3));
        assert_eq!((m.worker_pss_kib, m.worker_private_kib), (15000, 5000));
        assert_eq!(summarize(&[]), None);
    }
}
