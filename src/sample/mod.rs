//! Server-side samplers that run beside k6: per-container cgroup CPU/memory/throttling/PSI
//! (every 1 s), host per-CPU busy and PSI with dockerd's and perflab's own CPU (every 1 s),
//! the host's other processes by source with irq/softirq (every 1 s, same `t`), php-fpm status
//! through the hidden pool and `pg_stat_activity` (every 2 s).
//! Each writes JSON lines (`t` = unix ms, UTC) under the run's `samples/` folder, flushed per
//! line so an aborted run keeps what was sampled. The periodic one-source samplers (fpm, pg)
//! are `sampler::Sampler`s run by one loop; the fast sampler reads cgroups, `/proc/stat` and
//! the host's processes in one tick so their lines share `t`.
pub mod agent;
pub mod cgroup;
mod fpm;
pub mod host;
mod pg;
pub mod procs;
pub mod records;
mod sampler;
pub mod stack;
mod writer;

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::lab::Role;
use records::{CgroupSample, HostSample};
pub(crate) use sampler::SamplerSummary;
use sampler::{next_tick, now_ms, record_error, ticker};
use writer::JsonlWriter;

/// A container to sample: its role in the lab, its name and the pid of its init process.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub(crate) struct ContainerTarget {
    pub role: Role,
    pub name: String,
    pub pid: u32,
}

/// What to sample. Absent parts are skipped.
#[derive(Default)]
pub(crate) struct SamplerTargets {
    pub containers: Vec<ContainerTarget>,
    /// e.g. `http://127.0.0.1:PORT/fpm-status?json` (through nginx to the hidden status pool).
    pub fpm_status_url: Option<String>,
    /// A connection opened by the caller before the lab's workers take every slot
    /// (exp2-pgconn fills `max_connections` on purpose).
    pub pg: Option<std::sync::Arc<tokio_postgres::Client>>,
}

/// Sampling periods.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SamplerOptions {
    pub fast: Duration,
    pub slow: Duration,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            fast: Duration::from_secs(1),
            slow: Duration::from_secs(2),
        }
    }
}

/// Running samplers; `stop` ends them and returns the summary.
pub(crate) struct Samplers {
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<SamplerSummary>>,
}

/// Where the samplers write: the run directory's `samples/` files, named by the layout that
/// owns them (`rundir::layout::Layout::sample_files`, above this module, passes them down).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SampleFiles {
    /// The folder, created if missing.
    pub dir: PathBuf,
    pub cgroup: PathBuf,
    pub host: PathBuf,
    pub hostprocs: PathBuf,
    pub fpm: PathBuf,
    pub pg: PathBuf,
    pub errors: PathBuf,
}

impl Samplers {
    /// Start every sampler the targets allow, writing to `files` (their folder created if
    /// missing).
    pub(crate) fn start(
        files: &SampleFiles,
        targets: SamplerTargets,
        opts: SamplerOptions,
    ) -> std::io::Result<Samplers> {
        std::fs::create_dir_all(&files.dir)?;
        let (stop, rx) = watch::channel(false);
        let errors = JsonlWriter::create(&files.errors)?;
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(run_fast(
            FastOut {
                cgroup: JsonlWriter::create(&files.cgroup)?,
                host: JsonlWriter::create(&files.host)?,
                procs: Some(JsonlWriter::create(&files.hostprocs)?),
                errors: errors.clone(),
            },
            targets.containers,
            opts.fast,
            rx.clone(),
        )));
        if let Some(url) = targets.fpm_status_url {
            let out = JsonlWriter::create(&files.fpm)?;
            let s = fpm::FpmSampler::new(url);
            tasks.push(sampler::spawn(
                s,
                out,
                opts.slow,
                rx.clone(),
                errors.clone(),
            ));
        }
        if let Some(client) = targets.pg {
            let out = JsonlWriter::create(&files.pg)?;
            let s = Ok(pg::PgSampler(client));
            tasks.push(sampler::spawn(
                s,
                out,
                opts.slow,
                rx.clone(),
                errors.clone(),
            ));
        }
        Ok(Samplers { stop, tasks })
    }

    /// The sample agent's samplers (`perflab sample-agent`, in a container on another engine):
    /// cgroup and host lines, and errors, all to stdout in the files' JSON-lines format.
    pub(crate) fn start_stdout(containers: Vec<ContainerTarget>, period: Duration) -> Samplers {
        let (stop, rx) = watch::channel(false);
        let out = JsonlWriter::stdout();
        let task = tokio::spawn(run_fast(
            FastOut {
                cgroup: out.clone(),
                host: out.clone(),
                procs: None,
                errors: out,
            },
            containers,
            period,
            rx,
        ));
        Samplers {
            stop,
            tasks: vec![task],
        }
    }

    /// Stop all samplers and merge their summaries.
    pub(crate) async fn stop(self) -> SamplerSummary {
        let _ = self.stop.send(true);
        let mut total = SamplerSummary::default();
        for t in self.tasks {
            if let Ok(s) = t.await {
                total.add(&s);
            }
        }
        total
    }
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

/// Where the fast sampler writes: cgroup and host lines, the host's processes (the local
/// samplers only, not the agent) and errors.
struct FastOut {
    cgroup: JsonlWriter,
    host: JsonlWriter,
    procs: Option<JsonlWriter>,
    errors: JsonlWriter,
}

async fn run_fast(
    out: FastOut,
    containers: Vec<ContainerTarget>,
    period: Duration,
    mut rx: watch::Receiver<bool>,
) -> SamplerSummary {
    let mut summary = SamplerSummary::default();
    let mut tracked = Vec::new();
    for c in containers {
        match cgroup::paths_for_pid(c.pid).and_then(|p| p.read().map(|r| (p, r))) {
            Ok((paths, first)) => tracked.push((c, paths, first)),
            Err(e) => {
                summary.errors += 1;
                record_error(&out.errors, "cgroup", format!("{}: {e}", c.name));
            }
        }
    }
    let mut procs = out.procs.as_ref().map(|_| {
        let lab: Vec<_> = tracked.iter().map(|(c, _, _)| (c.role, c.pid)).collect();
        procs::ProcScanner::new(&lab)
    });
    let mut stat_prev = host::read_proc_stat();
    let mut dockerd = ProcCounter::new(host::find_process("dockerd"));
    let mut me = ProcCounter::new(Some(std::process::id()));
    let mut t = ticker(period);
    t.tick().await; // the first tick is immediate: it only sets the baseline
    let mut last = Instant::now();
    while next_tick(&mut t, &mut rx).await {
        let now = Instant::now();
        let dt_ns = now.duration_since(last).as_nanos() as u64;
        last = now;
        let ts = now_ms();
        for (c, paths, prev) in tracked.iter_mut() {
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
                    };
                    *prev = r;
                    if out.cgroup.write(&line).is_ok() {
                        summary.cgroup_samples += 1;
                    }
                }
                Err(e) => {
                    summary.errors += 1;
                    record_error(&out.errors, "cgroup", format!("{}: {e}", c.name));
                }
            }
        }
        let stat_now = host::read_proc_stat();
        let per_cpu = host::busy_pct(&stat_prev, &stat_now);
        let line = HostSample {
            t: ts,
            cpu_busy_pct: per_cpu.iter().map(|c| c.1).collect(),
            cpu_steal_pct: per_cpu.iter().map(|c| c.2).collect(),
            cpus: per_cpu.iter().map(|c| c.0).collect(),
            psi_some_avg10: host::host_psi(),
            dockerd_cores: dockerd.sample(dt_ns),
            perflab_cores: me.sample(dt_ns),
        };
        if out.host.write(&line).is_ok() {
            summary.host_samples += 1;
        }
        if let (Some(scanner), Some(w)) = (procs.as_mut(), out.procs.as_ref()) {
            let line = scanner.sample(ts, dt_ns as f64 / 1e9, &stat_prev, &stat_now);
            if w.write(&line).is_ok() {
                summary.procs_samples += 1;
            }
        }
        stat_prev = stat_now;
    }
    summary.dockerd_cores_mean = dockerd.mean();
    summary.perflab_cores_mean = me.mean();
    summary
}

/// Pin every thread of this process to `cpus` (the load generator's CPUs during measurement),
/// so the samplers do not steal the app's CPU. Returns the number of threads pinned.
pub(crate) fn pin_process_to(cpus: &[usize]) -> std::io::Result<usize> {
    // SAFETY: cpu_set_t is plain data; CPU_SET writes inside it; sched_setaffinity reads it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let mut n = 0;
    for entry in std::fs::read_dir("/proc/self/task")? {
        let Some(tid) = entry?
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let rc =
            unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        n += 1;
    }
    Ok(n)
}
