//! The fast sampler: every fast tick (1 s), one pass over the host so its lines share `t`:
//! each container's cgroup CPU, memory, throttling and PSI (`cgroup.jsonl`), the host's
//! per-CPU busy and PSI with dockerd's and perflab's own CPU (`host.jsonl`), and the host's
//! other processes by source with irq and softirq (`hostprocs.jsonl`, local runs only). The
//! sample agent runs it too, to stdout.
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::cgroup::{self, CgroupPaths, CgroupReading};
use super::files::SampleFile;
use super::host::{self, CpuTimes};
use super::memory;
use super::procs;
use super::records::{CgroupSample, HostSample};
use super::sampler::{Shared, next_tick, now_ms, record_error, ticker};
use super::summary::SamplerSummary;
use super::targets::ContainerTarget;
use super::writer::JsonlWriter;
use crate::lab::Slot;

/// The files whose lines the fast sampler counts.
pub(super) const FILES: [SampleFile; 3] =
    [SampleFile::Cgroup, SampleFile::Host, SampleFile::HostProcs];

/// Where the fast sampler writes: cgroup and host lines, the host's processes (the local
/// samplers only, not the agent) and errors.
pub(super) struct FastOut {
    cgroup: JsonlWriter,
    host: JsonlWriter,
    procs: Option<JsonlWriter>,
    errors: JsonlWriter,
}

impl FastOut {
    /// The run's files, in `shared`'s folder.
    pub(super) fn files(shared: &Shared) -> std::io::Result<FastOut> {
        Ok(FastOut {
            cgroup: shared.create(SampleFile::Cgroup)?,
            host: shared.create(SampleFile::Host)?,
            procs: Some(shared.create(SampleFile::HostProcs)?),
            errors: shared.errors.clone(),
        })
    }

    /// Everything but the processes to stdout (the sample agent).
    pub(super) fn stdout() -> FastOut {
        let out = JsonlWriter::stdout();
        FastOut {
            cgroup: out.clone(),
            host: out.clone(),
            procs: None,
            errors: out,
        }
    }
}

/// Run the fast sampler on `containers` every `period` until `stop`.
pub(super) fn spawn(
    out: FastOut,
    containers: Vec<ContainerTarget>,
    period: Duration,
    stop: watch::Receiver<bool>,
) -> JoinHandle<SamplerSummary> {
    tokio::spawn(run(out, containers, period, stop))
}

struct ProcCounter {
    pid: Option<u32>,
    last_ns: u64,
    sum_cores: f64,
    n: u64,
}

impl ProcCounter {
    fn new(pid: Option<u32>) -> Self {
        let last_ns = pid.and_then(host::process_cpu_ns).unwrap_or(0);
        ProcCounter {
            pid,
            last_ns,
            sum_cores: 0.0,
            n: 0,
        }
    }
    fn sample(&mut self, dt_ns: u64) -> Option<f64> {
        let now = host::process_cpu_ns(self.pid?)?;
        let cores = now.saturating_sub(self.last_ns) as f64 / dt_ns.max(1) as f64;
        self.last_ns = now;
        self.sum_cores += cores;
        self.n += 1;
        Some(cores)
    }
    fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_cores / self.n as f64)
    }
}

/// What the fast sampler carries from one tick to the next.
struct Fast {
    out: FastOut,
    /// The containers whose cgroup could be read, with their last reading.
    tracked: Vec<(ContainerTarget, CgroupPaths, CgroupReading)>,
    procs: Option<procs::ProcScanner>,
    stat_prev: Vec<(u32, CpuTimes)>,
    dockerd: ProcCounter,
    me: ProcCounter,
    summary: SamplerSummary,
}

impl Fast {
    /// The baseline: each container's first cgroup reading (a container whose cgroup cannot
    /// be read is an error, then left out), `/proc/stat`, the processes' CPU.
    fn new(out: FastOut, containers: Vec<ContainerTarget>) -> Fast {
        let mut summary = SamplerSummary::default();
        let mut tracked = Vec::new();
        for c in containers {
            match cgroup::paths_for_pid(c.pid).and_then(|p| p.read().map(|r| (p, r))) {
                Ok((paths, first)) => tracked.push((c, paths, first)),
                Err(e) => {
                    summary.errors += 1;
                    let name = SampleFile::Cgroup.name();
                    record_error(&out.errors, name, format!("{}: {e}", c.name));
                }
            }
        }
        let procs = out.procs.as_ref().map(|_| {
            let lab: Vec<_> = tracked.iter().map(|(c, _, _)| (c.role, c.pid)).collect();
            procs::ProcScanner::new(&lab)
        });
        Fast {
            out,
            tracked,
            procs,
            stat_prev: host::read_proc_stat(),
            dockerd: ProcCounter::new(host::find_process("dockerd")),
            me: ProcCounter::new(Some(std::process::id())),
            summary,
        }
    }

    /// One tick: a cgroup line per container, a host line, a processes line, all at `ts`.
    fn tick(&mut self, ts: i64, dt_ns: u64) {
        self.cgroups(ts, dt_ns);
        let stat_now = host::read_proc_stat();
        let per_cpu = host::busy_pct(&self.stat_prev, &stat_now);
        let line = HostSample {
            t: ts,
            cpu_busy_pct: per_cpu.iter().map(|c| c.1).collect(),
            cpu_steal_pct: per_cpu.iter().map(|c| c.2).collect(),
            cpus: per_cpu.iter().map(|c| c.0).collect(),
            psi_some_avg10: host::host_psi(),
            dockerd_cores: self.dockerd.sample(dt_ns),
            perflab_cores: self.me.sample(dt_ns),
        };
        if self.out.host.write(&line).is_ok() {
            self.summary.count_line(SampleFile::Host);
        }
        if let (Some(scanner), Some(w)) = (self.procs.as_mut(), self.out.procs.as_ref()) {
            let line = scanner.sample(ts, dt_ns as f64 / 1e9, &self.stat_prev, &stat_now);
            if w.write(&line).is_ok() {
                self.summary.count_line(SampleFile::HostProcs);
            }
        }
        self.stat_prev = stat_now;
    }

    /// Each tracked container's cgroup line at `ts`.
    fn cgroups(&mut self, ts: i64, dt_ns: u64) {
        for (c, paths, prev) in self.tracked.iter_mut() {
            match paths.read() {
                Ok(r) => {
                    let line = CgroupSample {
                        t: ts,
                        role: c.role,
                        container: c.name.clone(),
                        cpu_cores: cgroup::cores_between(prev, &r, dt_ns),
                        mem_bytes: r.mem_bytes,
                        throttled_ms: r.throttled_ns.saturating_sub(prev.throttled_ns) as f64 / 1e6,
                        psi_some_avg10: r.psi_some_avg10,
                        // the processes' PSS, on the boxes that serve (not the generator's)
                        mem: (c.role.slot() != Slot::Loadgen)
                            .then(|| memory::read(paths))
                            .flatten(),
                    };
                    *prev = r;
                    if self.out.cgroup.write(&line).is_ok() {
                        self.summary.count_line(SampleFile::Cgroup);
                    }
                }
                Err(e) => {
                    self.summary.errors += 1;
                    let name = SampleFile::Cgroup.name();
                    record_error(&self.out.errors, name, format!("{}: {e}", c.name));
                }
            }
        }
    }
}

async fn run(
    out: FastOut,
    containers: Vec<ContainerTarget>,
    period: Duration,
    mut rx: watch::Receiver<bool>,
) -> SamplerSummary {
    let mut fast = Fast::new(out, containers);
    let mut t = ticker(period);
    t.tick().await; // the first tick is immediate: it only sets the baseline
    let mut last = Instant::now();
    while next_tick(&mut t, &mut rx).await {
        let now = Instant::now();
        let dt_ns = now.duration_since(last).as_nanos() as u64;
        last = now;
        fast.tick(now_ms(), dt_ns);
    }
    let mut summary = fast.summary;
    summary.dockerd_cores_mean = fast.dockerd.mean();
    summary.perflab_cores_mean = fast.me.mean();
    summary
}
