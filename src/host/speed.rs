//! The host's CPU speed, measured: a fixed workload timed on each online CPU in turn, before the
//! steps and after them, so a run says whether its host was as fast as usual and stayed so.
//! A VM whose neighbours load the same physical cores (hyper-threads, caches, memory) or whose
//! clock drops runs every request slower without any steal; CPU per request rises and knees
//! fall, and a comparison would call that a regression. The workload is timed in the thread's
//! own CPU time, so sharing the CPU with the lab's (idle or draining) processes does not count,
//! only how fast the CPU runs when it runs this thread. The compute kernel's change is judged
//! (`COMPUTE_DRIFT_PCT`); the memory kernel is recorded and shown only.
//!
//! Thread CPU time cannot see the hypervisor's steal (a stolen tick is not the thread's), so
//! the compute kernel is also timed in wall time, pinned: wall speed over CPU speed is the
//! share of the time the CPU ran the probe at all. Below `1 - COMPUTE_DRIFT_PCT` the CPU was
//! stolen or taken by another process, and the reading says so.
//!
//! Two kernels: `compute` (a dependent chain of multiplies and shifts: the core's clock and
//! its sharing with a sibling hyper-thread) and `memory` (a pointer chase through a random
//! cycle over 8 MiB: cache and memory latency, which a neighbour's traffic raises).
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::hint::black_box;

/// Iterations of the compute kernel per repetition (about 30-60 ms on a 2020s x86 core).
pub(crate) const COMPUTE_OPS: u64 = 12_000_000;
/// Entries of the memory kernel's cycle (u32: 8 MiB, past most per-core caches).
pub(crate) const MEMORY_ENTRIES: usize = 2 << 20;
/// Steps of the memory kernel per repetition.
pub(crate) const MEMORY_STEPS: u64 = 400_000;
/// Repetitions per kernel and CPU; the median is the reading.
pub(crate) const REPS: usize = 5;
/// A host whose compute speed moved more than this between two readings (%), or a reading
/// whose repetitions on a CPU spread more than this, is called out. On this project's 2-CPU VM
/// (about 40 readings over an hour) the repetitions spread under 2 % (at most 9.6 %), and
/// readings ranged 316-395 Mops/s: mostly 340-358, one CPU dipping to 278-295 for a reading,
/// and once both CPUs at 385-404 (docs/methodology.md, "Host speed"). The memory kernel is recorded and
/// shown but judges nothing: on the same VM its repetitions spread up to 72 % and its readings
/// ranged 7-16 M loads/s.
pub(crate) const COMPUTE_DRIFT_PCT: f64 = 15.0;

/// One CPU's speed: the medians of the repetitions, and their spread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuSpeed {
    pub cpu: u32,
    /// Compute kernel, million iterations per second of the thread's CPU time.
    pub compute_mops: f64,
    /// Memory kernel, million dependent loads per second of the thread's CPU time.
    pub memory_msteps: f64,
    /// `(max - min) / median` of the compute repetitions, in %.
    pub compute_spread_pct: f64,
    /// `(max - min) / median` of the memory repetitions, in %.
    pub memory_spread_pct: f64,
    /// Compute kernel per second of wall time (absent in runs before it was read): below
    /// `compute_mops` when the hypervisor stole the CPU or another process ran on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_wall_mops: Option<f64>,
}

impl CpuSpeed {
    /// The share of the wall time the CPU ran the probe (1.0 = all of it), when read.
    pub(crate) fn ran_share(&self) -> Option<f64> {
        let w = self.compute_wall_mops?;
        (self.compute_mops > 0.0).then(|| (w / self.compute_mops).min(1.0))
    }

    /// The CPU lost more than `COMPUTE_DRIFT_PCT` of the wall time to steal or another process.
    pub(crate) fn lost_pct(&self) -> Option<f64> {
        let lost = (1.0 - self.ran_share()?) * 100.0;
        (lost > COMPUTE_DRIFT_PCT).then_some(lost)
    }
}

/// One reading: every online CPU, one after the other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedReading {
    pub at: DateTime<Utc>,
    pub cpus: Vec<CpuSpeed>,
    /// CPUs the probe could not pin itself to (with why), measured nowhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
}

/// The run's readings: on the warm, idle stack before the first load, and after the last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostSpeed {
    pub before: SpeedReading,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<SpeedReading>,
}

/// Median of `v` (None when empty).
fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}

/// `(max - min) / median` in %, 0 for fewer than two values.
fn spread_pct(v: &[f64]) -> f64 {
    let Some(m) = median(v).filter(|m| *m > 0.0) else {
        return 0.0;
    };
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    (hi - lo) / m * 100.0
}

impl SpeedReading {
    /// The median over the CPUs of the compute kernel (None without a measured CPU).
    pub(crate) fn compute(&self) -> Option<f64> {
        median(&self.cpus.iter().map(|c| c.compute_mops).collect::<Vec<_>>())
    }

    /// The median over the CPUs of the memory kernel.
    pub(crate) fn memory(&self) -> Option<f64> {
        median(
            &self
                .cpus
                .iter()
                .map(|c| c.memory_msteps)
                .collect::<Vec<_>>(),
        )
    }

    /// One line: `compute 412 Mops/s, memory 9.8 M loads/s (CPU 0: 410/9.7, CPU 1: 414/9.9)`.
    pub(crate) fn text(&self) -> String {
        let per: Vec<String> = self
            .cpus
            .iter()
            .map(|c| {
                let lost = c
                    .lost_pct()
                    .map(|l| format!(" (ran {:.0} % of the wall time)", 100.0 - l))
                    .unwrap_or_default();
                format!(
                    "CPU {}: {:.0}/{:.1}{lost}",
                    c.cpu, c.compute_mops, c.memory_msteps
                )
            })
            .collect();
        let mut t = format!(
            "compute {} Mops/s, memory {} M loads/s ({})",
            self.compute().map_or("?".into(), |v| format!("{v:.0}")),
            self.memory().map_or("?".into(), |v| format!("{v:.1}")),
            per.join(", ")
        );
        for n in &self.not_measured {
            t.push_str(&format!("; not measured: {n}"));
        }
        t
    }
}

/// `perflab host-speed`: `repeats` readings of `cpus` (every online CPU when not given), one a
/// line on stdout (`json`: JSON lines).
pub(crate) fn print_readings(cpus: Option<&str>, repeats: u32, json: bool) -> anyhow::Result<()> {
    let cpus = cpus_to_probe(cpus, repeats)?;
    for _ in 0..repeats {
        let r = measure(&cpus);
        if json {
            println!("{}", serde_json::to_string(&r)?);
        } else {
            println!("{}  {}", r.at.format("%H:%M:%S"), r.text());
        }
    }
    Ok(())
}

/// `perflab host-speed`'s CPUs: `--cpus` (a list such as 0-1), else every online CPU; and its
/// `--repeats`, 1 to 100 (bad input: exit 2).
fn cpus_to_probe(cpus: Option<&str>, repeats: u32) -> anyhow::Result<Vec<u32>> {
    use crate::error::InvalidInput;
    let cpus = match cpus {
        Some(s) => {
            super::parse_cpu_list(s).map_err(|e| InvalidInput(format!("--cpus {s}: {e}")))?
        }
        None => super::online_cpus().map_err(anyhow::Error::msg)?,
    };
    if !(1..=100).contains(&repeats) {
        return Err(InvalidInput(format!("--repeats {repeats}: between 1 and 100")).into());
    }
    Ok(cpus)
}

/// `b / a - 1` in %, when both are known and positive.
pub(crate) fn change_pct(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b.is_finite() => Some((b / a - 1.0) * 100.0),
        _ => None,
    }
}

impl HostSpeed {
    /// How much the host's speed moved from before to after, per kernel, in % (negative:
    /// slower after).
    pub(crate) fn drift_pct(&self) -> (Option<f64>, Option<f64>) {
        let Some(after) = &self.after else {
            return (None, None);
        };
        (
            change_pct(self.before.compute(), after.compute()),
            change_pct(self.before.memory(), after.memory()),
        )
    }

    /// The report header's lines: the reading before the loads, and the one after.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "host speed before the loads: {}",
            self.before.text()
        )];
        if let Some(a) = &self.after {
            lines.push(format!("host speed after the loads: {}", a.text()));
        }
        lines
    }

    /// The report's caveats: the compute kernel moved past `COMPUTE_DRIFT_PCT` during the run,
    /// or a CPU's compute repetitions spread past it (the host changed under the measurement,
    /// so its CPU per request and its knee rest on a host that was not constant).
    pub(crate) fn caveats(&self) -> Vec<String> {
        let mut caveats = Vec::new();
        if let Some(moved) = moved(self.drift_pct().0, None) {
            caveats.push(format!(
                "the host's CPU speed moved during the run ({moved}, after against before; the probe's own spread is under {COMPUTE_DRIFT_PCT:.0} %): a neighbour on the same physical cores or a clock change, not the lab; CPU per request and the knee rest on a host that changed"
            ));
        }
        let noisy: Vec<String> = std::iter::once(&self.before)
            .chain(self.after.as_ref())
            .flat_map(|r| &r.cpus)
            .filter(|c| c.compute_spread_pct > COMPUTE_DRIFT_PCT)
            .map(|c| format!("CPU {}", c.cpu))
            .collect();
        if !noisy.is_empty() {
            caveats.push(format!(
                "the host speed probe's compute repetitions spread more than {COMPUTE_DRIFT_PCT:.0} % on {}: the CPU's speed changed within a second (a noisy neighbour)",
                noisy.join(", ")
            ));
        }
        caveats.extend(self.lost_caveat());
        caveats
    }

    /// The wall-time and CPU-time readings disagree on some CPU: it ran the probe less than
    /// `1 - COMPUTE_DRIFT_PCT` of the time (steal, or another process on a pinned CPU).
    fn lost_caveat(&self) -> Option<String> {
        let lost: Vec<String> = [
            ("before", Some(&self.before)),
            ("after", self.after.as_ref()),
        ]
        .into_iter()
        .filter_map(|(when, r)| Some((when, r?)))
        .flat_map(|(when, r)| {
            r.cpus.iter().filter_map(move |c| {
                c.lost_pct()
                    .map(|l| format!("CPU {} {when} the loads ({l:.0} %)", c.cpu))
            })
        })
        .collect();
        (!lost.is_empty()).then(|| {
            format!(
                "the host speed probe ran less than {:.0} % of the wall time on {}: the hypervisor stole the CPU or another process ran on it (thread CPU time alone does not see it); the lab's CPUs were not its own",
                100.0 - COMPUTE_DRIFT_PCT,
                lost.join(", ")
            )
        })
    }
}

/// The compute kernel's change in %, as `compute -37 %`, when beyond `COMPUTE_DRIFT_PCT`:
/// either way (`sign` None), or only slower (`Some(-1.0)`) or only faster (`Some(1.0)`).
pub(crate) fn moved(compute: Option<f64>, sign: Option<f64>) -> Option<String> {
    let d = compute?;
    (sign.map_or(d.abs(), |s| d * s) > COMPUTE_DRIFT_PCT).then(|| format!("compute {d:+.0} %"))
}

/// The compute kernel: `n` iterations of a dependent multiply-xor-shift chain.
pub(crate) fn compute_kernel(n: u64) -> u64 {
    let mut x = black_box(0x9E37_79B9_7F4A_7C15u64);
    for i in 0..n {
        x = (x ^ (x >> 31))
            .wrapping_mul(0xBF58_476D_1CE4_E5B9)
            .wrapping_add(i);
    }
    black_box(x)
}

/// A single random cycle through `n` entries (Sattolo's algorithm, fixed seed: every reading
/// walks the same cycle).
pub(crate) fn memory_cycle(n: usize) -> Vec<u32> {
    let mut next: Vec<u32> = (0..n as u32).collect();
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    for i in (1..n).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let j = (s % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

/// The memory kernel: `steps` dependent loads along `cycle`.
pub(crate) fn memory_kernel(cycle: &[u32], steps: u64) -> u32 {
    let mut at = black_box(0u32);
    for _ in 0..steps {
        at = cycle[at as usize];
    }
    black_box(at)
}

/// The calling thread's CPU time, in seconds.
pub(crate) fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Pin the calling thread only (not the process) to one CPU.
pub(crate) fn pin_current_thread(cpu: u32) -> std::io::Result<()> {
    if cpu as usize >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::other(format!(
            "CPU {cpu} is past CPU_SETSIZE"
        )));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it (bounded above); pid 0 = the
    // calling thread.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu as usize, &mut set) };
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `REPS` repetitions of `f`, each in millions of `ops` per second of this thread's CPU time
/// and per second of wall time.
fn reps(ops: u64, f: impl Fn()) -> (Vec<f64>, Vec<f64>) {
    (0..REPS)
        .map(|_| {
            let (t0, w0) = (thread_cpu_s(), std::time::Instant::now());
            f();
            let dt = (thread_cpu_s() - t0).max(1e-9);
            let dw = w0.elapsed().as_secs_f64().max(1e-9);
            (ops as f64 / dt / 1e6, ops as f64 / dw / 1e6)
        })
        .unzip()
}

/// Measure the calling thread's CPU (already pinned): `REPS` repetitions of each kernel.
fn measure_here(cpu: u32, cycle: &[u32]) -> CpuSpeed {
    // One untimed pass of each: the cycle into this CPU's caches, the clock out of idle.
    compute_kernel(COMPUTE_OPS / 4);
    memory_kernel(cycle, MEMORY_STEPS / 4);
    let (compute, compute_wall) = reps(COMPUTE_OPS, || {
        black_box(compute_kernel(COMPUTE_OPS));
    });
    let (memory, _) = reps(MEMORY_STEPS, || {
        black_box(memory_kernel(cycle, MEMORY_STEPS));
    });
    CpuSpeed {
        cpu,
        compute_mops: median(&compute).unwrap_or(0.0),
        memory_msteps: median(&memory).unwrap_or(0.0),
        compute_spread_pct: spread_pct(&compute),
        memory_spread_pct: spread_pct(&memory),
        compute_wall_mops: median(&compute_wall),
    }
}

/// Read the speed of each of `cpus`, one after the other, each on a thread of its own pinned
/// there (blocking: about 0.5 s per CPU; call it from `spawn_blocking`).
pub(crate) fn measure(cpus: &[u32]) -> SpeedReading {
    let at = Utc::now();
    let cycle = std::sync::Arc::new(memory_cycle(MEMORY_ENTRIES));
    let mut reading = SpeedReading {
        at,
        cpus: Vec::new(),
        not_measured: Vec::new(),
    };
    for &cpu in cpus {
        let cycle = cycle.clone();
        let r = std::thread::spawn(move || {
            pin_current_thread(cpu)
                .map(|()| measure_here(cpu, &cycle))
                .map_err(|e| format!("CPU {cpu} ({e})"))
        })
        .join()
        .unwrap_or_else(|_| Err(format!("CPU {cpu} (the probe's thread panicked)")));
        match r {
            Ok(c) => reading.cpus.push(c),
            Err(e) => reading.not_measured.push(e),
        }
    }
    reading
}

/// One reading of every online CPU, off the async runtime's threads (about 1 s per CPU).
pub(crate) async fn measure_online() -> anyhow::Result<SpeedReading> {
    let cpus = super::online_cpus().map_err(anyhow::Error::msg)?;
    tokio::task::spawn_blocking(move || measure(&cpus))
        .await
        .map_err(|e| anyhow::anyhow!("the host speed probe: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cpu: u32, compute: f64, memory: f64) -> CpuSpeed {
        CpuSpeed {
            cpu,
            compute_mops: compute,
            memory_msteps: memory,
            compute_spread_pct: 1.0,
            memory_spread_pct: 1.0,
            compute_wall_mops: None,
        }
    }

    /// A host whose hypervisor took 31 % of CPU 1 while the probe ran: thread CPU time reads
    /// the same speed on both CPUs, wall time does not; the caveat names the CPU.
    #[test]
    fn wall_time_sees_what_thread_cpu_time_does_not() {
        let mut c0 = cpu(0, 447.0, 8.0);
        c0.compute_wall_mops = Some(440.0);
        let mut c1 = cpu(1, 447.0, 8.0);
        c1.compute_wall_mops = Some(447.0 * 0.69);
        let s = HostSpeed {
            before: reading(vec![c0.clone(), c1]),
            after: Some(reading(vec![c0.clone(), c0])),
        };
        assert_eq!(s.drift_pct().0, Some(0.0), "CPU time alone sees no change");
        let c = s.caveats();
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].contains("on CPU 1 before the loads (31 %)"),
            "{}",
            c[0]
        );
        assert!(
            s.lines()[0].contains("CPU 1: 447/8.0 (ran 69 % of the wall time)"),
            "{}",
            s.lines()[0]
        );
        assert!(!s.lines()[1].contains("wall"), "{}", s.lines()[1]);
        // older readings without the wall figure: nothing said
        assert!(
            HostSpeed {
                before: reading(vec![cpu(0, 1.0, 1.0)]),
                after: None
            }
            .caveats()
            .is_empty()
        );
    }

    fn reading(cpus: Vec<CpuSpeed>) -> SpeedReading {
        SpeedReading {
            at: DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
                .unwrap()
                .with_timezone(&Utc),
            cpus,
            not_measured: vec![],
        }
    }

    #[test]
    fn the_cycle_visits_every_entry_once() {
        let c = memory_cycle(1000);
        let mut seen = vec![false; 1000];
        let mut at = 0usize;
        for _ in 0..1000 {
            assert!(!seen[at], "entry {at} visited twice");
            seen[at] = true;
            at = c[at] as usize;
        }
        assert_eq!(at, 0, "one cycle through all 1000 entries");
        assert_eq!(memory_cycle(1000), c, "the same cycle every time");
    }

    #[test]
    fn a_steady_host_has_no_caveat_and_a_slowed_one_is_named() {
        let before = reading(vec![cpu(0, 400.0, 10.0), cpu(1, 410.0, 10.2)]);
        let steady = HostSpeed {
            before: before.clone(),
            after: Some(reading(vec![cpu(0, 396.0, 9.9), cpu(1, 404.0, 10.1)])),
        };
        let (lines, caveats) = (steady.lines(), steady.caveats());
        assert_eq!(lines.len(), 2);
        assert!(
            lines[0].contains("compute 405 Mops/s, memory 10.1 M loads/s"),
            "{}",
            lines[0]
        );
        assert!(caveats.is_empty(), "{caveats:?}");
        let slowed = HostSpeed {
            before,
            after: Some(reading(vec![cpu(0, 250.0, 6.0), cpu(1, 260.0, 6.1)])),
        };
        let (c, m) = slowed.drift_pct();
        assert!((c.unwrap() - (-37.0)).abs() < 0.5, "{c:?}");
        assert!((m.unwrap() - (-40.0)).abs() < 0.5, "{m:?}");
        let caveats = slowed.caveats();
        assert_eq!(caveats.len(), 1, "{caveats:?}");
        assert!(
            caveats[0].contains("(compute -37 %, after against before"),
            "{}",
            caveats[0]
        );
        // The memory kernel alone, however far it moves, judges nothing (too noisy on a VM).
        let memory_only = HostSpeed {
            before: reading(vec![cpu(0, 400.0, 10.0)]),
            after: Some(reading(vec![cpu(0, 398.0, 5.0)])),
        };
        assert!(memory_only.caveats().is_empty());
    }

    #[test]
    fn compute_spread_within_a_reading_is_named_per_cpu_and_memory_noise_is_not() {
        let mut c0 = cpu(0, 400.0, 10.0);
        c0.memory_spread_pct = 22.0;
        let mut c1 = cpu(1, 400.0, 10.0);
        c1.compute_spread_pct = 20.0;
        let s = HostSpeed {
            before: reading(vec![c0, c1]),
            after: None,
        };
        let (lines, caveats) = (s.lines(), s.caveats());
        assert_eq!(lines.len(), 1);
        assert_eq!(caveats.len(), 1);
        assert!(
            caveats[0].contains("spread more than 15 % on CPU 1:"),
            "{}",
            caveats[0]
        );
        assert_eq!(s.drift_pct(), (None, None));
    }

    #[test]
    fn a_real_reading_measures_every_cpu_it_can_pin() {
        let online = super::super::online_cpus().unwrap();
        let r = measure(&online[..1]);
        assert_eq!(r.cpus.len() + r.not_measured.len(), 1);
        for c in &r.cpus {
            assert!(c.compute_mops > 1.0 && c.compute_mops < 1e5, "{c:?}");
            let ran = c.ran_share().unwrap();
            assert!(ran > 0.0 && ran <= 1.0, "{c:?}");
            assert!(c.memory_msteps > 0.01 && c.memory_msteps < 1e4, "{c:?}");
        }
        let bad = measure(&[8000]);
        assert_eq!(bad.cpus.len(), 0);
        assert!(
            bad.not_measured[0].starts_with("CPU 8000 ("),
            "{:?}",
            bad.not_measured
        );
    }
}
