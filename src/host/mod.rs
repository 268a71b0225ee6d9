//! Host facts for the manifest, read from `/proc` and `/sys` only (no subprocess but `git`):
//! CPU model, online CPUs, memory, kernel, OS, cgroup version, PSI, perflab version and commit.
pub mod speed;
pub(crate) mod timings;

use serde::{Deserialize, Serialize};
use std::path::Path;

/// cgroup hierarchy of the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CgroupVersion {
    /// Unified hierarchy (`/sys/fs/cgroup/cgroup.controllers` exists).
    V2,
    /// Legacy per-controller hierarchies (possibly with a `unified` mount beside them).
    V1,
    Unknown,
}

/// What the manifest records about the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// Online CPUs, kernel list form (`0-3`).
    pub online_cpus: Option<String>,
    pub online_cpu_count: usize,
    pub memory_bytes: Option<u64>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub cgroup: CgroupVersion,
    /// Host PSI (`/proc/pressure/cpu`) readable.
    pub host_psi: bool,
    /// Filled by the stack side (Docker API `version`).
    pub docker_version: Option<String>,
    /// e.g. `fuse-overlayfs`, filled by the stack side.
    pub docker_storage_driver: Option<String>,
}

/// perflab's own version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerflabVersion {
    pub version: String,
    /// `git rev-parse HEAD` of the source tree, when it is a git checkout.
    pub git_commit: Option<String>,
    /// Uncommitted changes in the source tree.
    pub git_dirty: Option<bool>,
}

fn read_trim(p: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// First `model name` (x86) or `Model`/`Hardware` (arm) line of a cpuinfo text.
pub(crate) fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        matches!(k.trim(), "model name" | "Model" | "Hardware").then(|| v.trim().to_string())
    })
}

/// `MemTotal` of a meminfo text, in bytes.
pub(crate) fn parse_mem_total(meminfo: &str) -> Option<u64> {
    meminfo_bytes(meminfo, "MemTotal:")
}

/// A `<field> N kB` line of a meminfo text, in bytes.
fn meminfo_bytes(meminfo: &str, field: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The memory this host can give new work now (`MemAvailable`), in bytes.
pub(crate) fn mem_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    meminfo_bytes(&meminfo, "MemAvailable:")
}

/// `PRETTY_NAME` of an os-release text.
pub(crate) fn parse_os_release(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
}

/// cgroup version under a cgroup mount root (normally `/sys/fs/cgroup`).
pub(crate) fn cgroup_version_at(root: &Path) -> CgroupVersion {
    if root.join("cgroup.controllers").exists() {
        CgroupVersion::V2
    } else if root.join("cpu").exists()
        || root.join("cpuacct").exists()
        || root.join("memory").exists()
    {
        CgroupVersion::V1
    } else {
        CgroupVersion::Unknown
    }
}

/// Where Linux lists the online CPUs.
pub(crate) const ONLINE_PATH: &str = "/sys/devices/system/cpu/online";

/// Online CPUs of this host, sorted, from `/sys/devices/system/cpu/online`.
pub fn online_cpus() -> Result<Vec<u32>, String> {
    read_online(Path::new(ONLINE_PATH))
}

/// The CPUs of a kernel CPU-list file, sorted and without duplicates.
pub(crate) fn read_online(path: &Path) -> Result<Vec<u32>, String> {
    let s = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut v = parse_cpu_list(&s)?;
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// The highest CPU number Linux can have (`NR_CPUS` is at most 8192).
pub(crate) const MAX_CPU: u32 = 8191;

/// Parse a kernel/Docker CPU list such as `0-3,6` (in the order written, each CPU once). A CPU
/// number above [`MAX_CPU`] is refused before any range is expanded (`1-4294967295` once tried
/// to allocate 17 GB), so the list holds at most 8192 CPUs.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut v = Vec::new();
    let mut seen = vec![false; MAX_CPU as usize + 1];
    for part in s.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            let x = x.trim();
            match x.parse::<u32>() {
                Ok(n) if n <= MAX_CPU => Ok(n),
                _ if !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()) => Err(format!(
                    "CPU {x} is above {MAX_CPU}, the highest CPU number Linux supports"
                )),
                _ => Err(format!("`{x}` is not a CPU number in `{s}`")),
            }
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(part)?, num(part)?),
        };
        if b < a {
            return Err(format!("range `{part}` runs backwards"));
        }
        for c in a..=b {
            if !std::mem::replace(&mut seen[c as usize], true) {
                v.push(c);
            }
        }
    }
    if v.is_empty() {
        return Err(format!("`{s}` names no CPU"));
    }
    Ok(v)
}

/// The kernel/Docker list form of sorted CPUs: `2-3`, `0,2`, `0-3,6`.
pub(crate) fn cpu_list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

impl HostFacts {
    /// Read the facts of this host. Missing files give `None`, never an error.
    pub(crate) fn collect() -> HostFacts {
        let online = online_cpus().ok();
        HostFacts {
            hostname: read_trim("/proc/sys/kernel/hostname"),
            cpu_model: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .as_deref()
                .and_then(parse_cpu_model),
            online_cpu_count: online.as_ref().map_or(0, Vec::len),
            online_cpus: online.map(|o| cpu_list(&o)),
            memory_bytes: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .as_deref()
                .and_then(parse_mem_total),
            kernel: read_trim("/proc/sys/kernel/osrelease"),
            os: std::fs::read_to_string("/etc/os-release")
                .ok()
                .as_deref()
                .and_then(parse_os_release),
            cgroup: cgroup_version_at(Path::new("/sys/fs/cgroup")),
            host_psi: Path::new("/proc/pressure/cpu").exists()
                && read_trim("/proc/pressure/cpu").is_some(),
            docker_version: None,
            docker_storage_driver: None,
        }
    }

    /// Caveats implied by the host (cgroup v1: no per-container PSI).
    pub(crate) fn caveats(&self) -> Vec<String> {
        let mut c = Vec::new();
        if self.cgroup == CgroupVersion::V1 {
            c.push(
                "cgroup v1: no per-container cpu.pressure; PSI is the host's /proc/pressure/cpu \
                 (all containers together), not php-fpm's alone as in the article"
                    .to_string(),
            );
        }
        c
    }
}

impl PerflabVersion {
    /// This binary's version and the git commit of its source tree (`PERFLAB_GIT_COMMIT` overrides).
    pub fn current() -> PerflabVersion {
        let dir = env!("CARGO_MANIFEST_DIR");
        let git = |args: &[&str]| -> Option<String> {
            let out = std::process::Command::new("git")
                .args(["-C", dir])
                .args(args)
                .stderr(std::process::Stdio::null())
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        };
        let commit = std::env::var("PERFLAB_GIT_COMMIT")
            .ok()
            .or_else(|| git(&["rev-parse", "HEAD"]));
        let dirty = commit
            .as_ref()
            .and_then(|_| git(&["status", "--porcelain", "--untracked-files=no"]))
            .map(|s| !s.is_empty());
        PerflabVersion {
            version: env!("CARGO_PKG_VERSION").to_string(),
            git_commit: commit,
            git_dirty: dirty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_numbers_are_bounded_before_expansion() {
        let e = parse_cpu_list("1-4294967295").unwrap_err();
        assert!(e.contains("CPU 4294967295 is above 8191"), "{e}");
        let e = parse_cpu_list("0-99999999999999999999").unwrap_err();
        assert!(e.contains("CPU 99999999999999999999 is above 8191"), "{e}");
        assert_eq!(parse_cpu_list("0-3,8191").unwrap(), [0, 1, 2, 3, 8191]);
        assert_eq!(parse_cpu_list("3,1-2,2-3,0").unwrap(), [3, 1, 2, 0]);
        let many = vec!["0-8191"; 1000].join(",");
        assert_eq!(parse_cpu_list(&many).unwrap().len(), 8192);
        assert!(
            parse_cpu_list("x")
                .unwrap_err()
                .contains("not a CPU number")
        );
    }

    #[test]
    fn parses_proc_texts() {
        assert_eq!(
            parse_cpu_model("processor\t: 0\nmodel name\t: AMD EPYC\n").as_deref(),
            Some("AMD EPYC")
        );
        assert_eq!(
            parse_mem_total("MemTotal:       1024 kB\nMemFree: 1 kB\n"),
            Some(1024 * 1024)
        );
        assert_eq!(
            parse_os_release("ID=debian\nPRETTY_NAME=\"Debian 12\"\n").as_deref(),
            Some("Debian 12")
        );
    }

    #[test]
    fn detects_cgroup_layout() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(cgroup_version_at(d.path()), CgroupVersion::Unknown);
        std::fs::create_dir(d.path().join("cpuacct")).unwrap();
        assert_eq!(cgroup_version_at(d.path()), CgroupVersion::V1);
        std::fs::write(d.path().join("cgroup.controllers"), "cpu io").unwrap();
        assert_eq!(cgroup_version_at(d.path()), CgroupVersion::V2);
    }
}
