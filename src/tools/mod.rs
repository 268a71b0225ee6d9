//! The article's methodology tools: `noise-check` (late wake-ups of a pinned 1 ms sleep loop),
//! `calib` (a fixed CPU loop repeated on an app CPU) and `cpu-per-request` (cgroup CPU delta of
//! N sequential requests per endpoint). Each writes a fresh run directory `out/<tool>/<ts>-r1/`
//! (tool manifest, raw data, report.txt/md/json, status.json) under the host lock, and honours
//! Ctrl-C/SIGTERM like `perflab run`. Pure parts (`*_report.rs`, and `analyze::stats`) do no I/O;
//! `start` checks each tool's input before anything starts.
pub mod calib;
pub(crate) mod calib_report;
pub(crate) mod cpr;
pub(crate) mod cpr_report;
pub mod noise;
pub(crate) mod noise_report;
pub mod render;
pub(crate) mod start;
pub(crate) use crate::analyze::stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::docker::{self, Docker};
use crate::error::InvalidInput;
use crate::host::{HostFacts, PerflabVersion};
use crate::lock::Wait;
use crate::plan::{CpuLayout, layout};
use crate::rundir::tool::ToolArgs;
use crate::rundir::{
    self, RunDir, RunState, TOOL_MANIFEST_SCHEMA_VERSION, ToolManifest, ToolMeasurements,
};
use crate::session::Session;
use crate::session::signals::Interrupt;

/// Options every tool shares.
#[derive(Debug, Clone)]
pub(crate) struct Common {
    pub out_root: PathBuf,
    pub wait: Wait,
    pub quiet: bool,
    pub json: bool,
}

impl Common {
    /// From the flags: `--out`, `--no-wait` (fail at once on a held lock), `--json`.
    pub(crate) fn new(out_root: PathBuf, no_wait: bool, quiet: bool, json: bool) -> Common {
        let wait = if no_wait { Wait::NoWait } else { Wait::Block };
        Common {
            out_root,
            wait,
            quiet,
            json,
        }
    }
}

/// A tool run in progress: its directory, manifest and the host lock it holds.
pub(crate) struct ToolRun {
    pub dir: RunDir,
    pub manifest: ToolManifest,
    /// The session: the host lock, the interrupt and the phases so far.
    pub session: Session,
}

impl ToolRun {
    /// Take the host lock (waiting like `perflab run`, or failing fast with `--no-wait`), then
    /// create the run directory `out/<tool_dir>/<ts>-r1/` and write a first manifest.
    pub(crate) async fn begin(
        tool: &str,
        tool_dir: &str,
        args: ToolArgs,
        cpu_layout: CpuLayout,
        common: &Common,
        interrupt: &Interrupt,
    ) -> Result<ToolRun> {
        let session =
            Session::begin(tool_dir, common.wait, common.quiet, interrupt.clone()).await?;
        // leftovers of killed runs (still `running`, owner gone) become `aborted`
        rundir::mark_stale_runs(&common.out_root);
        let dir = RunDir::create(&common.out_root, tool_dir, 1)?;
        let host = HostFacts::collect();
        let mut caveats = cpu_layout.caveats.clone();
        caveats.extend(host.caveats());
        let mut components = BTreeMap::new();
        if let Some(k) = &host.kernel {
            components.insert("kernel".to_string(), k.clone());
        }
        let manifest = ToolManifest {
            schema_version: TOOL_MANIFEST_SCHEMA_VERSION,
            kind: "tool".into(),
            tool: tool.into(),
            run_id: dir.name(),
            created: dir.created,
            args,
            perflab: PerflabVersion::current(),
            host,
            cpu_layout,
            pinning: BTreeMap::new(),
            caveats,
            components,
            images: BTreeMap::new(),
            measurements: ToolMeasurements::default(),
        };
        let mut run = ToolRun {
            dir,
            manifest,
            session,
        };
        // The host's speed before anything of the tool runs (the probe's wall time sees steal).
        run.manifest.measurements.host_speed = Some(crate::host::speed::HostSpeed {
            before: crate::host::speed::measure_online().await?,
            after: None,
        });
        run.write_manifest()?;
        if !common.quiet {
            crate::say!("{tool} -> {}", run.dir.path.display());
        }
        Ok(run)
    }

    /// Take the host speed reading after the measurement: the report's `host speed` lines, and
    /// a caveat when the host's speed moved or its CPUs were stolen. Returns the lines.
    pub(crate) async fn speed_after(&mut self) -> Vec<String> {
        let after = crate::host::speed::measure_online().await;
        let m = &mut self.manifest;
        let Some(s) = m.measurements.host_speed.as_mut() else {
            return Vec::new();
        };
        match after {
            Ok(r) => s.after = Some(r),
            Err(e) => m.caveats.push(format!(
                "the host speed reading after the measurement failed: {e:#}"
            )),
        }
        m.caveats.extend(s.caveats());
        s.lines()
    }

    pub(crate) fn write_manifest(&self) -> Result<()> {
        rundir::write_tool_manifest(&self.dir.path, &self.manifest)
    }

    /// Write `report.txt`, `report.md` and `report.json`.
    pub(crate) fn write_reports<T: Serialize>(&self, txt: &str, md: &str, json: &T) -> Result<()> {
        let l = rundir::Layout::new(&self.dir.path);
        write_text(&l.report_txt(), &crate::output::plain(txt))?;
        write_text(&l.report_md(), &crate::report::table::md_text(md))?;
        rundir::write_json_atomic(&l.report_json(), json)
    }

    /// Record the final state (naming the phase it stopped in, unless complete); returns the
    /// exit code the command should end with.
    pub(crate) fn finish(
        &self,
        state: RunState,
        reason: Option<&str>,
    ) -> Result<std::process::ExitCode> {
        self.write_manifest()?;
        let phase = (state != RunState::Complete)
            .then(|| self.session.trail.current())
            .flatten();
        self.dir
            .mark_in(state, reason, phase.map(crate::session::Phase::as_str))?;
        Ok(match state {
            RunState::Aborted => std::process::ExitCode::from(130),
            RunState::Failed => std::process::ExitCode::from(crate::error::EXIT_FAILURE),
            _ => std::process::ExitCode::SUCCESS,
        })
    }
}

/// Write a text file atomically with a context message.
pub(crate) fn write_text(path: &Path, text: &str) -> Result<()> {
    rundir::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// The CPU a single-threaded tool measures on: `--cpu N` (must be online), else the first CPU
/// of the layout's app set. Returns the CPU and the host's layout.
pub(crate) fn measured_cpu(cpu: Option<u32>) -> Result<(u32, CpuLayout)> {
    let online = layout::online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
    let l = layout::resolve(&online, None, false)?;
    let cpu = match cpu {
        Some(c) if !online.contains(c) => {
            return Err(InvalidInput(format!(
                "--cpu {c}: cpu {c} is not online (online: {online}); pick one of those"
            ))
            .into());
        }
        Some(c) => c,
        None => *l.app.cpus().first().context("the layout has no app CPU")?,
    };
    Ok((cpu, l))
}

/// Every online CPU but `cpu` (where the tool's other threads go); all of them if none is left.
pub(crate) fn other_cpus(l: &CpuLayout, cpu: u32) -> Vec<usize> {
    let others: Vec<usize> = l
        .online
        .cpus()
        .iter()
        .filter(|c| **c != cpu)
        .map(|c| *c as usize)
        .collect();
    if others.is_empty() {
        l.online.indices()
    } else {
        others
    }
}

pub(crate) use crate::host::speed::pin_current_thread;

/// The perflab containers running now (name and run id), for "is the lab idle?" checks.
pub(crate) async fn running_lab_containers(d: &Docker) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for o in d.list_labelled(&[]).await? {
        if o.kind != docker::ObjectKind::Container {
            continue;
        }
        if let Ok(info) = d.inspect_container(&o.id).await
            && info.running
        {
            let run = o.labels.get(docker::LABEL_RUN).cloned().unwrap_or_default();
            out.push(format!("{} (run {run})", o.name));
        }
    }
    Ok(out)
}

/// Check that no lab container runs (say so on stderr and in the caveats otherwise) and record
/// the Docker engine's version.
pub(crate) async fn note_idle_lab(run: &mut ToolRun, quiet: bool) {
    let found = match Docker::connect().await {
        Ok(d) => {
            if let Ok(v) = d.engine_version().await {
                run.manifest.components.insert("docker-engine".into(), v);
            }
            running_lab_containers(&d).await
        }
        Err(e) => Err(e.into()),
    };
    match found {
        Ok(v) if v.is_empty() => {
            run.manifest.measurements.lab_containers_running = Some(Vec::new());
        }
        Ok(v) => {
            let msg = format!(
                "the lab was not idle: {} perflab container(s) running: {}",
                v.len(),
                v.join(", ")
            );
            if !quiet {
                crate::say!("warning: {msg}");
            }
            run.manifest.caveats.push(msg);
            run.manifest.measurements.lab_containers_running = Some(v);
        }
        Err(e) => run.manifest.caveats.push(format!(
            "could not ask Docker whether lab containers were running ({e:#}); idle not checked"
        )),
    }
}

/// Move perflab's threads off `cpu` (the measuring thread pins itself there) and record it.
pub(crate) fn pin_others_away(run: &mut ToolRun, cpu: u32, thread: &str) {
    let others = other_cpus(&run.manifest.cpu_layout, cpu);
    if let Err(e) = crate::sample::pin_process_to(&others) {
        run.manifest.caveats.push(format!(
            "could not move perflab's other threads off cpu {cpu}: {e}"
        ));
    }
    run.manifest.pinning.insert(thread.into(), cpu.to_string());
    let list: Vec<String> = others.iter().map(|c| c.to_string()).collect();
    run.manifest
        .pinning
        .insert("other_threads".into(), list.join(","));
}

/// Run `f` in a thread of its own; when a signal comes first, set `stop` (which `f` polls) and
/// wait for `f` to return. Returns `f`'s result and the signal, if any.
pub(crate) async fn run_in_thread<T: Send + 'static>(
    name: &str,
    interrupt: &Interrupt,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<(T, Option<&'static str>)> {
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .with_context(|| format!("starting the {name} thread"))?;
    let mut i = interrupt.clone();
    let died = || format!("the {name} thread died");
    Ok(tokio::select! {
        r = &mut rx => (r.with_context(died)?, None),
        sig = i.wait() => {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            (rx.await.with_context(died)?, Some(sig))
        }
    })
}

/// Busy % per CPU since a `/proc/stat` snapshot, rounded to 0.1.
pub(crate) fn busy_since(before: &[(u32, crate::sample::host::CpuTimes)]) -> BTreeMap<u32, f64> {
    let now = crate::sample::host::read_proc_stat();
    crate::sample::host::busy_pct(before, &now)
        .into_iter()
        .map(|(c, p, _steal)| (c, stats::round(p, 1)))
        .collect()
}

/// Print the report (JSON with `--json`, else the text table) and record the final state.
pub(crate) fn print_and_finish<T: Serialize>(
    run: &ToolRun,
    common: &Common,
    text: &str,
    report: &T,
    signal: Option<&'static str>,
) -> Result<std::process::ExitCode> {
    if common.json {
        crate::out!("{}", serde_json::to_string_pretty(report)?);
    } else {
        crate::output::emit(text);
    }
    match signal {
        Some(sig) => {
            let v = crate::session::verdict(
                &Err(crate::session::Stop::Interrupted(sig)),
                run.session.trail.current(),
            );
            run.finish(v.state, v.reason.as_deref())
        }
        None => run.finish(RunState::Complete, None),
    }
}
