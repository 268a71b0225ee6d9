//! Per-container cgroup readings (CPU time, memory, throttling, PSI) for cgroup v1 and v2.
//!
//! A container's cgroup is found from `/proc/<pid>/cgroup` of its init process and the
//! host's cgroup mounts in `/proc/self/mountinfo`, so both the cgroupfs and the systemd
//! drivers work. Parsing is pure and unit-tested; reading touches `/sys/fs/cgroup` only.
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

pub(crate) use crate::host::CgroupVersion;

/// The host's cgroup version; a host that shows neither is read as v1 (its files tell).
fn detect() -> CgroupVersion {
    match crate::host::cgroup_version_at(Path::new("/sys/fs/cgroup")) {
        CgroupVersion::V2 => CgroupVersion::V2,
        _ => CgroupVersion::V1,
    }
}

/// Where one container's counters live.
#[derive(Debug, Clone, PartialEq)]
pub enum CgroupPaths {
    V1 {
        /// Directory holding `cpuacct.usage` (nanoseconds).
        cpuacct: PathBuf,
        /// Directory holding `cpu.stat` (`throttled_time` in ns).
        cpu: Option<PathBuf>,
        /// Directory holding `memory.usage_in_bytes`.
        memory: Option<PathBuf>,
    },
    V2 {
        /// The unified directory: `cpu.stat`, `memory.current`, `cpu.pressure`.
        dir: PathBuf,
    },
}

/// One raw reading of a container's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CgroupReading {
    pub cpu_ns: u64,
    pub throttled_ns: u64,
    pub mem_bytes: u64,
    pub psi_some_avg10: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no cgroup {what} found for pid {pid}: is the container still running?")]
    NotFound { what: String, pid: u32 },
    #[error("unexpected content in {path}: {detail}")]
    Parse { path: PathBuf, detail: String },
}

fn read(path: &Path) -> Result<String, CgroupError> {
    fs::read_to_string(path).map_err(|source| CgroupError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Parse `/proc/<pid>/cgroup`: map of controller -> path (v2's unified line has key "").
pub(crate) fn parse_proc_cgroup(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if ctrls.is_empty() {
            out.insert(String::new(), path.to_owned());
        } else {
            for c in ctrls.split(',') {
                out.insert(c.to_owned(), path.to_owned());
            }
        }
    }
    out
}

/// Parse `/proc/self/mountinfo` for cgroup mounts: controller -> (mount point, root).
/// The v2 mount is keyed "".
pub(crate) fn parse_cgroup_mounts(mountinfo: &str) -> BTreeMap<String, (PathBuf, String)> {
    let mut out = BTreeMap::new();
    for line in mountinfo.lines() {
        // id parent maj:min root mountpoint opts... - fstype source superopts
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 3 {
            continue;
        }
        let (root, mount) = (l[3], PathBuf::from(l[4]));
        match r[0] {
            "cgroup2" => {
                out.insert(String::new(), (mount, root.to_owned()));
            }
            "cgroup" => {
                for opt in r[2].split(',') {
                    if matches!(opt, "cpu" | "cpuacct" | "memory" | "cpuset" | "pids") {
                        out.insert(opt.to_owned(), (mount.clone(), root.to_owned()));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn join_cgroup(mount: &Path, root: &str, cg_path: &str) -> PathBuf {
    // If the mount's root is a prefix of the process's path (nested namespaces), strip it.
    let rel = cg_path
        .strip_prefix(root)
        .filter(|_| root != "/")
        .unwrap_or(cg_path);
    mount.join(rel.trim_start_matches('/'))
}

/// Resolve a process's cgroup directories from the two proc files' contents.
pub(crate) fn resolve_paths(
    version: CgroupVersion,
    proc_cgroup: &str,
    mountinfo: &str,
    pid: u32,
) -> Result<CgroupPaths, CgroupError> {
    let cg = parse_proc_cgroup(proc_cgroup);
    let mounts = parse_cgroup_mounts(mountinfo);
    let locate = |ctrl: &str| -> Option<PathBuf> {
        let (mount, root) = mounts.get(ctrl)?;
        Some(join_cgroup(mount, root, cg.get(ctrl)?))
    };
    match version {
        CgroupVersion::V2 => {
            let dir = locate("").ok_or_else(|| CgroupError::NotFound {
                what: "v2 unified path".into(),
                pid,
            })?;
            Ok(CgroupPaths::V2 { dir })
        }
        CgroupVersion::V1 | CgroupVersion::Unknown => {
            let cpuacct = locate("cpuacct").ok_or_else(|| CgroupError::NotFound {
                what: "cpuacct".into(),
                pid,
            })?;
            Ok(CgroupPaths::V1 {
                cpuacct,
                cpu: locate("cpu"),
                memory: locate("memory"),
            })
        }
    }
}

/// Find the cgroup directories of a running process (a container's init pid from `docker inspect`).
pub(crate) fn paths_for_pid(pid: u32) -> Result<CgroupPaths, CgroupError> {
    let proc_cgroup = read(Path::new(&format!("/proc/{pid}/cgroup")))?;
    let mountinfo = read(Path::new("/proc/self/mountinfo"))?;
    resolve_paths(detect(), &proc_cgroup, &mountinfo, pid)
}

/// Value of `key` in a flat-keyed file such as `cpu.stat` ("key value" per line).
pub(crate) fn keyed_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// `some avg10=` of a PSI file (`/proc/pressure/cpu` or a cgroup's `cpu.pressure`).
pub(crate) fn psi_some_avg10(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split(' ')
        .find_map(|f| f.strip_prefix("avg10="))
        .and_then(|v| v.parse().ok())
}

fn parse_u64(path: &Path) -> Result<u64, CgroupError> {
    let text = read(path)?;
    text.trim().parse().map_err(|_| CgroupError::Parse {
        path: path.to_owned(),
        detail: format!("not a number: {:?}", text.trim()),
    })
}

impl CgroupPaths {
    /// Read the counters now.
    pub fn read(&self) -> Result<CgroupReading, CgroupError> {
        match self {
            CgroupPaths::V1 {
                cpuacct,
                cpu,
                memory,
            } => {
                let cpu_ns = parse_u64(&cpuacct.join("cpuacct.usage"))?;
                let throttled_ns = match cpu {
                    Some(dir) => {
                        keyed_value(&read(&dir.join("cpu.stat"))?, "throttled_time").unwrap_or(0)
                    }
                    None => 0,
                };
                let mem_bytes = match memory {
                    Some(dir) => parse_u64(&dir.join("memory.usage_in_bytes"))?,
                    None => 0,
                };
                Ok(CgroupReading {
                    cpu_ns,
                    throttled_ns,
                    mem_bytes,
                    psi_some_avg10: None,
                })
            }
            CgroupPaths::V2 { dir } => {
                let stat_path = dir.join("cpu.stat");
                let stat = read(&stat_path)?;
                let usage_us =
                    keyed_value(&stat, "usage_usec").ok_or_else(|| CgroupError::Parse {
                        path: stat_path.clone(),
                        detail: "no usage_usec".into(),
                    })?;
                let throttled_us = keyed_value(&stat, "throttled_usec").unwrap_or(0);
                let mem_bytes = parse_u64(&dir.join("memory.current")).unwrap_or(0);
                let psi = fs::read_to_string(dir.join("cpu.pressure"))
                    .ok()
                    .and_then(|t| psi_some_avg10(&t));
                Ok(CgroupReading {
                    cpu_ns: usage_us * 1000,
                    throttled_ns: throttled_us * 1000,
                    mem_bytes,
                    psi_some_avg10: psi,
                })
            }
        }
    }
}

/// CPU in cores between two readings `dt_ns` apart (0 when the counter went backwards).
pub(crate) fn cores_between(prev: &CgroupReading, now: &CgroupReading, dt_ns: u64) -> f64 {
    if dt_ns == 0 {
        return 0.0;
    }
    now.cpu_ns.saturating_sub(prev.cpu_ns) as f64 / dt_ns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_PROC: &str = "9:name=systemd:/docker/abc\n4:memory:/docker/abc\n2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/docker/abc\n";
    const V1_MOUNTS: &str = "30 25 0:26 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct\n\
31 25 0:27 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n\
32 25 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n\
33 25 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

    #[test]
    fn v1_paths_from_cgroupfs_driver() {
        let p = resolve_paths(CgroupVersion::V1, V1_PROC, V1_MOUNTS, 7).unwrap();
        assert_eq!(
            p,
            CgroupPaths::V1 {
                cpuacct: "/sys/fs/cgroup/cpuacct/docker/abc".into(),
                cpu: Some("/sys/fs/cgroup/cpu/docker/abc".into()),
                memory: Some("/sys/fs/cgroup/memory/docker/abc".into()),
            }
        );
    }

    #[test]
    fn v1_combined_cpu_cpuacct_mount() {
        let proc = "3:cpu,cpuacct:/system.slice/docker-abc.scope\n";
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
        let p = resolve_paths(CgroupVersion::V1, proc, mounts, 7).unwrap();
        let CgroupPaths::V1 {
            cpuacct,
            cpu,
            memory,
        } = p
        else {
            panic!()
        };
        assert_eq!(
            cpuacct,
            PathBuf::from("/sys/fs/cgroup/cpu,cpuacct/system.slice/docker-abc.scope")
        );
        assert_eq!(cpu, Some(cpuacct.clone()));
        assert_eq!(memory, None);
    }

    #[test]
    fn v2_path_and_missing_controller() {
        let proc = "0::/system.slice/docker-abc.scope\n";
        let mounts = "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            resolve_paths(CgroupVersion::V2, proc, mounts, 1).unwrap(),
            CgroupPaths::V2 {
                dir: "/sys/fs/cgroup/system.slice/docker-abc.scope".into()
            }
        );
        let err = resolve_paths(CgroupVersion::V1, proc, mounts, 42).unwrap_err();
        assert!(err.to_string().contains("pid 42"), "{err}");
    }

    #[test]
    fn keyed_and_psi_parsing() {
        let stat = "usage_usec 1500\nuser_usec 1000\nthrottled_usec 7\n";
        assert_eq!(keyed_value(stat, "usage_usec"), Some(1500));
        assert_eq!(keyed_value(stat, "throttled_usec"), Some(7));
        assert_eq!(keyed_value(stat, "nope"), None);
        let psi = "some avg10=1.31 avg60=2.21 avg300=0.76 total=2923192\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(psi_some_avg10(psi), Some(1.31));
    }

    #[test]
    fn cores_from_deltas() {
        let a = CgroupReading {
            cpu_ns: 1_000_000_000,
            ..Default::default()
        };
        let b = CgroupReading {
            cpu_ns: 2_500_000_000,
            ..Default::default()
        };
        assert!((cores_between(&a, &b, 1_000_000_000) - 1.5).abs() < 1e-9);
        assert_eq!(cores_between(&b, &a, 1_000_000_000), 0.0);
    }

    #[test]
    fn reads_this_process_cgroup_for_real() {
        // The test process's own cgroup exists on any Linux host: reading it must work.
        let p = paths_for_pid(std::process::id()).unwrap();
        let r = p.read().unwrap();
        assert!(r.cpu_ns > 0, "{p:?} gave {r:?}");
    }
}
