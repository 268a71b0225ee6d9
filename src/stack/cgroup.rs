//! Where a container's cgroup files live on this host (v1 cgroupfs/systemd, or v2), so the
//! samplers read CPU, memory and pressure without `docker stats`.
use std::path::{Path, PathBuf};

/// The cgroup hierarchy flavour of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    V1,
    V2,
}

/// A container's cgroup directories. On v1 each controller has its own directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CgroupPaths {
    pub version: CgroupVersion,
    /// v1: the `cpuacct` directory (holds `cpuacct.usage`); v2: the unified directory.
    pub cpu: PathBuf,
    /// v1: the `memory` directory; v2: the unified directory.
    pub memory: PathBuf,
    /// v1: the `cpu` directory (holds `cpu.stat` with throttling); v2: the unified directory.
    pub cpu_stat: PathBuf,
    /// `cpu.pressure` (v2 only; on v1 use the host's `/proc/pressure/cpu`).
    pub pressure: Option<PathBuf>,
}

impl CgroupPaths {
    /// Cumulative CPU time file: v1 `cpuacct.usage` (ns), v2 `cpu.stat` (`usage_usec`).
    pub fn cpu_usage_file(&self) -> PathBuf {
        match self.version {
            CgroupVersion::V1 => self.cpu.join("cpuacct.usage"),
            CgroupVersion::V2 => self.cpu.join("cpu.stat"),
        }
    }
}

/// Detect the host's cgroup version under `root` (normally `/sys/fs/cgroup`).
pub fn detect(root: &Path) -> CgroupVersion {
    if root.join("cgroup.controllers").is_file() {
        CgroupVersion::V2
    } else {
        CgroupVersion::V1
    }
}

/// Find the cgroup directories of container `id` (full 64-hex id) under `root`; `None` when
/// none of the known layouts exists (container stopped, or an unknown cgroup parent).
pub fn container_paths(root: &Path, id: &str) -> Option<CgroupPaths> {
    let leafs = [
        format!("docker/{id}"),
        format!("system.slice/docker-{id}.scope"),
    ];
    match detect(root) {
        CgroupVersion::V2 => leafs
            .iter()
            .map(|l| root.join(l))
            .find(|p| p.is_dir())
            .map(|d| CgroupPaths {
                version: CgroupVersion::V2,
                cpu: d.clone(),
                memory: d.clone(),
                cpu_stat: d.clone(),
                pressure: Some(d.join("cpu.pressure")).filter(|p| p.is_file()),
            }),
        CgroupVersion::V1 => {
            let find = |ctrls: &[&str]| {
                ctrls.iter().find_map(|c| {
                    leafs
                        .iter()
                        .map(|l| root.join(c).join(l))
                        .find(|p| p.is_dir())
                })
            };
            let cpu = find(&["cpuacct", "cpu,cpuacct", "cpuacct,cpu"])?;
            Some(CgroupPaths {
                version: CgroupVersion::V1,
                memory: find(&["memory"]).unwrap_or_else(|| cpu.clone()),
                cpu_stat: find(&["cpu", "cpu,cpuacct", "cpuacct,cpu"])
                    .unwrap_or_else(|| cpu.clone()),
                cpu,
                pressure: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_cgroupfs_layout() {
        let t = tempfile::tempdir().unwrap();
        let id = "a".repeat(64);
        std::fs::create_dir_all(t.path().join(format!("cpuacct/docker/{id}"))).unwrap();
        std::fs::create_dir_all(t.path().join(format!("memory/docker/{id}"))).unwrap();
        let p = container_paths(t.path(), &id).unwrap();
        assert_eq!(p.version, CgroupVersion::V1);
        assert_eq!(
            p.cpu_usage_file(),
            t.path().join(format!("cpuacct/docker/{id}/cpuacct.usage"))
        );
        assert_eq!(p.memory, t.path().join(format!("memory/docker/{id}")));
        assert!(p.pressure.is_none());
        assert!(container_paths(t.path(), &"b".repeat(64)).is_none());
    }

    #[test]
    fn v2_systemd_layout() {
        let t = tempfile::tempdir().unwrap();
        let id = "c".repeat(64);
        std::fs::write(t.path().join("cgroup.controllers"), "cpu memory").unwrap();
        let d = t.path().join(format!("system.slice/docker-{id}.scope"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("cpu.pressure"), "some avg10=0.00").unwrap();
        let p = container_paths(t.path(), &id).unwrap();
        assert_eq!(p.version, CgroupVersion::V2);
        assert_eq!(p.cpu_usage_file(), d.join("cpu.stat"));
        assert_eq!(p.pressure, Some(d.join("cpu.pressure")));
    }
}
