//! The procs sampler: every process on the host from `/proc/<pid>/stat`, its CPU over the
//! interval grouped into sources (docker-proxy, containerd, cargo/rustc, kernel threads...),
//! the processes of the run's containers set apart (their cgroup already counts them), plus
//! per-CPU irq and softirq time. Bounded: one small entry per live pid, and per line only the
//! sources and the busiest names.
mod table;

use std::fs;
use std::time::Instant;

use super::cgroup::parse_proc_cgroup;
use super::host::{self, CpuTimes};
use super::records::HostProcsSample;
use crate::lab::Role;
use table::round4;
pub(crate) use table::{Delta, PidStat, Placement, ProcTable, parse_pid_stat, summarize};

/// The run's containers as the host sees them: their cgroup paths, keyed as in
/// `/proc/<pid>/cgroup` (the cpuacct controller's on cgroup v1, where the cgroup samples read
/// CPU; the unified one on v2), and the devices (`maj:min`) of their root file systems.
#[derive(Debug, Clone, Default)]
pub(crate) struct LabContainers {
    paths: Vec<(String, String)>,
    root_devices: Vec<(Role, String)>,
}

/// The device (`maj:min`) mounted at `mount_point` in a `mountinfo` text (the last mount
/// there wins, as the kernel shows it).
pub(crate) fn mount_device(mountinfo: &str, mount_point: &str) -> Option<String> {
    mountinfo.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.len() > 4 && f[4] == mount_point).then(|| f[2].to_owned())
    })
}

/// A FUSE storage process's mount point: the last argument of its command line.
pub(crate) fn fuse_mount_point(cmdline: &[u8]) -> Option<String> {
    cmdline
        .split(|b| *b == 0)
        .rfind(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
}

impl LabContainers {
    /// From the contents of the containers' init processes' `/proc/<pid>/cgroup`.
    pub(crate) fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> LabContainers {
        let mut paths = Vec::new();
        for text in texts {
            let cg = parse_proc_cgroup(text);
            if let Some((k, p)) = ["cpuacct", ""]
                .iter()
                .find_map(|k| cg.get(*k).map(|p| (k.to_string(), p.clone())))
                .filter(|(_, p)| p != "/")
            {
                paths.push((k, p));
            }
        }
        LabContainers {
            paths,
            root_devices: Vec::new(),
        }
    }

    /// Add the root file systems' devices from the containers' `/proc/<pid>/mountinfo`.
    pub(crate) fn with_roots<'a>(
        mut self,
        mountinfos: impl IntoIterator<Item = (Role, &'a str)>,
    ) -> Self {
        self.root_devices = mountinfos
            .into_iter()
            .filter_map(|(role, m)| Some((role, mount_device(m, "/")?)))
            .collect();
        self
    }

    /// Where a FUSE storage process works: for the run when its mount (looked up in the host's
    /// `mountinfo`) is a lab container's root.
    pub(crate) fn place_fuse(&self, host_mountinfo: &str, cmdline: &[u8]) -> Placement {
        let dev = fuse_mount_point(cmdline).and_then(|m| mount_device(host_mountinfo, &m));
        let role = dev.and_then(|d| self.root_devices.iter().find(|(_, r)| *r == d));
        role.map_or(Placement::Container, |(role, _)| {
            Placement::LabStorage(*role)
        })
    }

    /// Where a process runs, from its `/proc/<pid>/cgroup`.
    pub(crate) fn place(&self, proc_cgroup: &str) -> Placement {
        let cg = parse_proc_cgroup(proc_cgroup);
        let inside = |p: &str, lab: &str| p == lab || p.starts_with(&format!("{lab}/"));
        if self
            .paths
            .iter()
            .any(|(k, lab)| cg.get(k).is_some_and(|p| inside(p, lab)))
        {
            return Placement::Lab;
        }
        let in_container = cg
            .values()
            .any(|p| p.contains("/docker/") || p.contains("/docker-") || p.contains("/libpod-"));
        if in_container {
            Placement::Container
        } else {
            Placement::Host
        }
    }
}

/// The live sampler: the process table, the run's cgroups and the clock rate.
pub(crate) struct ProcScanner {
    table: ProcTable,
    lab: LabContainers,
    ticks_per_s: u64,
}

impl ProcScanner {
    /// Scan once for the baseline. `lab` are the run's containers (their init processes).
    pub(crate) fn new(lab: &[(Role, u32)]) -> ProcScanner {
        let read = |what: &str| -> Vec<(Role, String)> {
            lab.iter()
                .filter_map(|(r, p)| {
                    Some((*r, fs::read_to_string(format!("/proc/{p}/{what}")).ok()?))
                })
                .collect()
        };
        let (cgroups, mounts) = (read("cgroup"), read("mountinfo"));
        let lab = LabContainers::from_texts(cgroups.iter().map(|(_, t)| t.as_str()))
            .with_roots(mounts.iter().map(|(r, t)| (*r, t.as_str())));
        let mut s = ProcScanner {
            table: ProcTable::new(std::process::id()),
            lab,
            ticks_per_s: host::clock_ticks_per_sec(),
        };
        s.scan_deltas();
        s
    }

    fn scan_deltas(&mut self) -> Vec<Delta> {
        let lab = &self.lab;
        self.table.advance(read_all(), |pid, st| {
            if st.kthread {
                return Placement::Host;
            }
            if st.comm == "fuse-overlayfs" {
                let host = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
                let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                return lab.place_fuse(&host, &cmdline);
            }
            fs::read_to_string(format!("/proc/{pid}/cgroup"))
                .map(|t| lab.place(&t))
                .unwrap_or_default()
        })
    }

    /// The line for the interval of `dt_s` seconds that ends now, with irq and softirq from the
    /// `/proc/stat` snapshots that bound it.
    pub(crate) fn sample(
        &mut self,
        t: i64,
        dt_s: f64,
        stat_prev: &[(u32, CpuTimes)],
        stat_now: &[(u32, CpuTimes)],
    ) -> HostProcsSample {
        let started = Instant::now();
        let deltas = self.scan_deltas();
        let mut line = summarize(&deltas, self.ticks_per_s, dt_s);
        let irq = host::irq_pct(stat_prev, stat_now);
        line.t = t;
        line.irq_pct = irq.iter().map(|c| round4(c.1)).collect();
        line.softirq_pct = irq.iter().map(|c| round4(c.2)).collect();
        line.procs = deltas.len() as u32;
        line.scan_us = started.elapsed().as_micros() as u64;
        line
    }
}

/// Every process's `/proc/<pid>/stat` now (those gone while reading are skipped).
fn read_all() -> Vec<(u32, PidStat)> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parse_pid_stat(&text)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::procs::table::classify;
    use crate::sample::procs::table::tests::{st, ticks_of_pid};
    use crate::sample::records::ProcSource;

    #[test]
    fn lab_cgroups_v1_and_v2() {
        let lab = LabContainers::from_texts([
            "2:cpuacct:/docker/abc\n1:cpu:/docker/abc\n0::/docker/abc\n",
            "0::/system.slice/docker-def.scope\n",
            "2:cpuacct:/\n0::/\n",
        ]);
        assert_eq!(
            lab.place("2:cpuacct:/docker/abc\n0::/docker/abc\n"),
            Placement::Lab
        );
        assert_eq!(lab.place("2:cpuacct:/docker/abc/sub\n"), Placement::Lab);
        assert_eq!(
            lab.place("0::/system.slice/docker-def.scope\n"),
            Placement::Lab
        );
        assert_eq!(lab.place("2:cpuacct:/docker/abcd\n"), Placement::Container);
        assert_eq!(
            lab.place("2:cpuacct:/\n4:memory:/process_api/ff\n0::/\n"),
            Placement::Host,
            "a root cgroup is not a lab container"
        );
    }

    #[test]
    fn fuse_storage_of_the_lab_by_its_root_device() {
        let container = "104 55 0:49 / / rw,nodev,noatime master:3 - fuse.fuse-overlayfs fuse-overlayfs rw\n\
                         105 104 0:51 / /proc rw - proc proc rw\n";
        let host = "60 30 0:39 / /var/lib/docker/fuse-overlayfs/b0/merged rw - fuse.fuse-overlayfs fuse-overlayfs rw\n\
                    61 30 0:49 / /var/lib/docker/fuse-overlayfs/99/merged rw - fuse.fuse-overlayfs fuse-overlayfs rw\n";
        let lab =
            LabContainers::from_texts(["0::/docker/abc\n"]).with_roots([(Role::PG, container)]);
        let args = |m: &str| format!("fuse-overlayfs\0-o\0lowerdir=/l/A:/l/B\0{m}\0").into_bytes();
        let mine = args("/var/lib/docker/fuse-overlayfs/99/merged");
        let other = args("/var/lib/docker/fuse-overlayfs/b0/merged");
        assert_eq!(lab.place_fuse(host, &mine), Placement::LabStorage(Role::PG));
        assert_eq!(lab.place_fuse(host, &other), Placement::Container);
        assert_eq!(lab.place_fuse(host, b""), Placement::Container);
        assert_eq!(
            classify(
                "fuse-overlayfs",
                false,
                false,
                Placement::LabStorage(Role::PG)
            ),
            ProcSource::LabStorage
        );
        // listed under the role it serves
        let mut t = ProcTable::new(0);
        let fuse = |own| vec![(9, st("fuse-overlayfs", 1, own, 0, 3))];
        t.advance(fuse(10), |_, _| Placement::LabStorage(Role::PG));
        let d = t.advance(fuse(25), |_, _| Placement::Host);
        assert_eq!((d[0].name.as_str(), d[0].ticks), ("fuse-overlayfs:pg", 15));
        assert_eq!(d[0].source, ProcSource::LabStorage);
        assert_eq!(
            classify("fuse-overlayfs", false, false, Placement::Container),
            ProcSource::Containers
        );
    }

    /// Spin this thread until it has used `ms` of CPU (however busy the host is).
    fn burn_thread_cpu(ms: u64) {
        let cpu_ns = || {
            let mut ts = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: ts is a valid timespec for clock_gettime to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
        };
        let start = cpu_ns();
        let mut x = 0u64;
        while cpu_ns() - start < ms * 1_000_000 {
            for i in 0..10_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
        }
        assert!(x != 1);
    }

    #[test]
    fn live_proc_busy_thread_and_reaped_child_are_attributed_by_name() {
        // pid 0 as "own": this test binary is listed under its own name, not as perflab
        let mut t = ProcTable::new(0);
        let host = |_: u32, _: &PidStat| Placement::Host;
        t.advance(read_all(), host);
        std::thread::spawn(|| burn_thread_cpu(300)).join().unwrap();
        let my_pid = std::process::id();
        let d = t.advance(read_all(), host);
        let me = d.iter().find(|d| d.pid == my_pid).unwrap();
        let comm = fs::read_to_string("/proc/self/comm").unwrap();
        assert_eq!(
            (me.name.as_str(), me.source),
            (comm.trim(), ProcSource::Other)
        );
        let mine = me.ticks;
        let hz = host::clock_ticks_per_sec();
        assert!(
            mine * 1000 >= 280 * hz,
            "{mine} ticks for 300 ms of a busy thread"
        );
        // a child seen busy, then reaped by this process: counted once, under its name. It
        // spins until it has been seen using 300 ms of CPU and is then killed, so the test does
        // not depend on how fast this machine runs a shell loop (a fixed 400,000 iterations
        // took only 190 ms on one CI machine)
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let pid = child.id();
        let mine_in =
            |v: &[(u32, PidStat)]| v.iter().find(|(p, _)| *p == my_pid).unwrap().1.clone();
        let now = read_all();
        let mut me_before = mine_in(&now);
        t.advance(now, host);
        let children_at_start = me_before.children;
        let (mut child_ticks, mut counted_on_me) = (0, 0);
        loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            if child_ticks * 1000 >= 300 * hz || std::time::Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
            }
            let done = child.try_wait().unwrap().is_some();
            let now = read_all();
            let me_now = mine_in(&now);
            let d = t.advance(now, host);
            if let Some(c) = d.iter().find(|d| d.pid == pid) {
                assert_eq!((c.name.as_str(), c.source), ("sh", ProcSource::Other));
                child_ticks += c.ticks;
            }
            // other tests run threads in this process: look at its children time only
            counted_on_me += ticks_of_pid(&d, my_pid) - (me_now.own - me_before.own);
            if done {
                // everything the child used came back in this process's children time; it
                // must be counted once: partly on the child while seen, the rest on the parent
                let reaped = me_now.children - children_at_start;
                assert!(
                    child_ticks * 1000 >= 300 * hz,
                    "the child was seen busy: {child_ticks} ticks"
                );
                assert!(
                    (child_ticks + counted_on_me).abs_diff(reaped) <= 2,
                    "child {child_ticks} + on its parent {counted_on_me} vs {reaped} reaped"
                );
                break;
            }
            assert_eq!(counted_on_me, 0, "no child reaped yet");
            me_before = me_now;
        }
    }
}
