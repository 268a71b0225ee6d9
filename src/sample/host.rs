//! Host-side readings: per-CPU busy, steal, irq and softirq time (`/proc/stat`), host CPU
//! pressure, and the CPU time of single processes (dockerd, perflab itself) from
//! `/proc/<pid>/stat`.
use std::fs;

/// Cumulative busy, steal and total jiffies of one CPU line of `/proc/stat`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    /// Everything but idle and iowait (steal included).
    pub busy: u64,
    /// Time the hypervisor ran something else while this vCPU wanted to run.
    pub steal: u64,
    /// Hard interrupts and softirqs (network receive on the bridge and veths shows here).
    pub irq: u64,
    pub softirq: u64,
    pub total: u64,
}

/// Parse the `cpuN` lines of `/proc/stat` in order (the aggregate `cpu` line is skipped).
/// Busy = everything but idle and iowait.
pub(crate) fn parse_proc_stat(text: &str) -> Vec<(u32, CpuTimes)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line
            .strip_prefix("cpu")
            .filter(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let Some(Ok(idx)) = fields.next().map(str::parse::<u32>) else {
            continue;
        };
        let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
        if v.len() < 5 {
            continue;
        }
        // user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user.
        let total: u64 = v.iter().take(8).sum();
        let idle = v[3] + v[4];
        out.push((
            idx,
            CpuTimes {
                busy: total - idle,
                steal: v.get(7).copied().unwrap_or(0),
                irq: v.get(5).copied().unwrap_or(0),
                softirq: v.get(6).copied().unwrap_or(0),
                total,
            },
        ));
    }
    out
}

/// Busy % and steal % per CPU between two `/proc/stat` snapshots (matched by CPU number).
pub(crate) fn busy_pct(prev: &[(u32, CpuTimes)], now: &[(u32, CpuTimes)]) -> Vec<(u32, f64, f64)> {
    pct_between(prev, now, |c| (c.busy, c.steal))
}

/// Hard irq % and softirq % per CPU between two `/proc/stat` snapshots.
pub(crate) fn irq_pct(prev: &[(u32, CpuTimes)], now: &[(u32, CpuTimes)]) -> Vec<(u32, f64, f64)> {
    pct_between(prev, now, |c| (c.irq, c.softirq))
}

/// Two counters picked by `f`, as % of each CPU's elapsed time between the snapshots.
fn pct_between(
    prev: &[(u32, CpuTimes)],
    now: &[(u32, CpuTimes)],
    f: impl Fn(&CpuTimes) -> (u64, u64),
) -> Vec<(u32, f64, f64)> {
    now.iter()
        .filter_map(|(i, n)| {
            let (_, p) = prev.iter().find(|(j, _)| j == i)?;
            let dt = n.total.saturating_sub(p.total);
            let pct = |a: u64, b: u64| {
                if dt == 0 {
                    0.0
                } else {
                    100.0 * a.saturating_sub(b) as f64 / dt as f64
                }
            };
            let ((na, nb), (pa, pb)) = (f(n), f(p));
            Some((*i, pct(na, pa), pct(nb, pb)))
        })
        .collect()
}

/// utime + stime (clock ticks) from the contents of `/proc/<pid>/stat`.
pub(crate) fn parse_pid_stat_ticks(text: &str) -> Option<u64> {
    // The command name is in parentheses and may contain spaces: split after the last ')'.
    let after = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // after ')' : state(0) ppid(1) ... utime is field 14 of the full line => index 11 here.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`).
pub(crate) fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// CPU time of a process in nanoseconds, or None when it is gone.
pub(crate) fn process_cpu_ns(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(parse_pid_stat_ticks(&text)? * 1_000_000_000 / clock_ticks_per_sec())
}

/// The pid of the first process whose `comm` is `name` (e.g. "dockerd").
pub(crate) fn find_process(name: &str) -> Option<u32> {
    let mut pids: Vec<u32> = fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    pids.into_iter().find(|pid| {
        fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| c.trim() == name)
            .unwrap_or(false)
    })
}

/// Read `/proc/stat` now.
pub(crate) fn read_proc_stat() -> Vec<(u32, CpuTimes)> {
    fs::read_to_string("/proc/stat")
        .map(|t| parse_proc_stat(&t))
        .unwrap_or_default()
}

/// Host CPU pressure `some avg10` (None where the kernel has no PSI).
pub(crate) fn host_psi() -> Option<f64> {
    fs::read_to_string("/proc/pressure/cpu")
        .ok()
        .and_then(|t| super::cgroup::psi_some_avg10(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_A: &str = "cpu  200 0 100 1000 0 0 0 0 0 0\ncpu0 100 0 50 500 0 0 0 0 0 0\ncpu1 100 0 50 500 0 0 0 0 0 0\nintr 1\n";
    const STAT_B: &str = "cpu  500 0 100 1200 0 0 0 0 0 0\ncpu0 400 0 50 500 0 0 0 0 0 0\ncpu1 100 0 50 700 0 0 0 0 0 0\nintr 2\n";
    // cpu1 ran 100 jiffies of its own work and lost 100 to steal over 400
    const STAT_C: &str = "cpu  700 0 100 1400 0 0 0 100 0 0\ncpu0 400 0 50 700 0 0 0 0 0 0\ncpu1 200 0 50 900 0 0 0 100 0 0\nintr 3\n";

    #[test]
    fn per_cpu_busy_percent() {
        let a = parse_proc_stat(STAT_A);
        let b = parse_proc_stat(STAT_B);
        assert_eq!(a.len(), 2);
        let pct = busy_pct(&a, &b);
        assert_eq!(pct, vec![(0, 100.0, 0.0), (1, 0.0, 0.0)]);
        let c = parse_proc_stat(STAT_C);
        assert_eq!(
            busy_pct(&b, &c),
            vec![(0, 0.0, 0.0), (1, 50.0, 25.0)],
            "steal counts as busy and is also reported on its own"
        );
        // cpu0: 200 jiffies, 100 busy of which 20 in hard irq and 50 in softirq
        let d = parse_proc_stat("cpu0 400 0 50 700 0 0 0 0 0 0\n");
        let e = parse_proc_stat("cpu0 430 0 50 800 0 20 50 0 0 0\n");
        assert_eq!(irq_pct(&d, &e), vec![(0, 10.0, 25.0)]);
        assert_eq!(busy_pct(&d, &e), vec![(0, 50.0, 0.0)], "irq time is busy");
    }

    #[test]
    fn pid_stat_with_spaces_in_comm() {
        let line =
            "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 4 0 100 0 0";
        assert_eq!(parse_pid_stat_ticks(line), Some(300));
        assert_eq!(parse_pid_stat_ticks("garbage"), None);
    }

    #[test]
    fn own_process_has_cpu_time_and_is_found_by_name() {
        // Burn a little CPU so the counter is above zero even at 100 Hz ticks.
        let mut x = 0u64;
        for i in 0..30_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        assert!(process_cpu_ns(std::process::id()).unwrap() > 0);
        let comm = fs::read_to_string("/proc/self/comm").unwrap();
        assert!(find_process(comm.trim()).is_some());
    }
}
