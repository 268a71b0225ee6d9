//! One round of one experiment as a session: run directory and manifest, stack up, warm-up,
//! the measured load (generators ready, aligned start, measure and sample, collect), the stack's
//! logs, teardown and report, whatever happened before. Breaking the system is a successful
//! run; only the harness failing (or an interrupt) is not, and the status names the phase.
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::engine::{Engine, RoundContext};
use super::load_phase::Stage;
use super::measurement::Measurement;
use super::records::Records;
use super::signals::Interrupt;
use super::trail::{Stop, Trail};
use crate::experiment::Experiment;
use crate::plan::{CpuLayout, Plan};
use crate::rundir::phase::Phase;
use crate::rundir::{Manifest, RunDir, RunState};

/// What one round needs besides the engine.
pub struct RoundSpec<'a> {
    pub experiment: &'a Experiment,
    pub plan: &'a Plan,
    pub round: u32,
    pub out_root: &'a Path,
    pub overrides: &'a [String],
    pub layout: &'a CpuLayout,
    pub quiet: bool,
    /// A matrix cell's run-directory name (`--run-name`); `None`: `<now>-r<round>`.
    pub name: Option<&'a crate::rundir::cell::CellName>,
    /// The round taking turns with this one on the same host (`perflab compare`'s step design).
    pub twin: Option<&'a super::twin::Twin<'a>>,
}

/// How a round ended.
#[derive(Debug, Clone)]
pub struct RoundOutcome {
    pub dir: PathBuf,
    pub state: RunState,
    pub reason: Option<String>,
    /// The phase the round stopped in, when it did not complete.
    pub phase: Option<Phase>,
    /// The report's one-line verdict, when a report was written.
    pub verdict: Option<String>,
}

/// The run id of a round's Docker objects: `run-<experiment>-<dir name>`.
pub(crate) fn run_id(experiment_id: &str, dir: &RunDir) -> String {
    format!(
        "{}{experiment_id}-{}",
        super::sweep::RUN_ID_PREFIX,
        dir.name()
    )
    .to_lowercase()
}

/// Run one round. Returns Err only when the run directory itself could not be created.
pub async fn run_round<E: Engine>(
    engine: &mut E,
    spec: &RoundSpec<'_>,
    measurement: &mut impl Measurement,
    interrupt: &Interrupt,
) -> Result<RoundOutcome> {
    let exp = spec.experiment;
    let dir = match spec.name {
        Some(n) => RunDir::create_cell(spec.out_root, &exp.id, n)?,
        None => RunDir::create(spec.out_root, &exp.id, spec.round)?,
    };
    let run_id = run_id(&exp.id, &dir);
    let mut manifest = Manifest::new(
        &dir,
        exp.clone(),
        spec.overrides.to_vec(),
        spec.plan.clone(),
        spec.layout.clone(),
    );
    manifest.measurements.stack.run_id = Some(run_id.clone());
    manifest.measurements.cell = spec
        .name
        .map(|n| crate::rundir::cell::CellRecord::here(&n.to_string()));
    let mut trail = Trail::default();
    let ctx = RoundContext {
        dir: &dir,
        run_id: &run_id,
        experiment: exp,
    };
    let mut rec = Records::default();
    let begun = trail
        .run(interrupt, Phase::RunDir, None, engine.begin(&ctx, &mut rec))
        .await;
    rec.apply(&mut manifest);
    dir.write_manifest(&manifest)?;
    if !spec.quiet {
        crate::say!("run {} -> {}", exp.id, dir.path.display());
    }
    let mut stage = Stage {
        engine,
        trail: &mut trail,
        interrupt,
        dir: &dir,
        manifest: &mut manifest,
        quiet: spec.quiet,
        twin: spec.twin,
    };
    let result = match begun {
        Ok(()) => measure(&mut stage, measurement).await,
        Err(e) => Err(e),
    };
    if let Some(twin) = spec.twin {
        twin.leave();
    }
    let stopped_in = result.as_ref().err().and(stage.trail.current());
    wind_down(&mut stage).await;
    stage.manifest.measurements.phases = stage.trail.records.clone();
    dir.write_manifest(&manifest)?;
    finish(&dir, result, stopped_in)
}

/// Stack up, warm-up, then the measurement's loads.
async fn measure<E: Engine>(
    stage: &mut Stage<'_, E>,
    measurement: &mut impl Measurement,
) -> Result<(), Stop> {
    stage.stack_up(None).await?;
    measurement.run(stage).await
}

/// Whatever happened: the stack's logs out (when it was started), every object removed. Their
/// failures become caveats; a teardown failure says how to clean up.
async fn wind_down<E: Engine>(stage: &mut Stage<'_, E>) {
    let (engine, manifest) = (&mut *stage.engine, &mut *stage.manifest);
    if stage.trail.reached(Phase::StackUp) {
        let mut rec = Records::default();
        let logs = stage
            .trail
            .record(Phase::Collect, Some("logs"), engine.collect_logs(&mut rec))
            .await;
        rec.apply(manifest);
        if let Err(Stop::Failed(e)) = logs {
            manifest
                .caveats
                .push(format!("collecting logs failed: {e:#}"));
        }
    }
    let down = stage
        .trail
        .record(Phase::Teardown, None, engine.teardown())
        .await;
    if let Err(Stop::Failed(e)) = down {
        manifest
            .caveats
            .push(format!("teardown failed: {e:#}; run `perflab cleanup`"));
    }
}

/// The Report phase and the final status: a report whenever k6 produced data, even for an
/// aborted run; the status names the phase the round stopped in.
fn finish(
    dir: &RunDir,
    result: Result<(), Stop>,
    stopped_in: Option<Phase>,
) -> Result<RoundOutcome> {
    let super::trail::Verdict {
        mut state,
        mut reason,
        phase,
        ..
    } = super::trail::verdict(&result, stopped_in);
    let mut phase = phase;
    let mut verdict = None;
    if has_k6_data(dir) {
        match write_report(&dir.path) {
            Ok(v) => verdict = Some(v),
            Err(e) if state == RunState::Complete => {
                state = RunState::Failed;
                reason = Some(format!("report: {e:#}"));
                phase = Some(Phase::Report);
            }
            Err(_) => {}
        }
    }
    dir.mark_in(state, reason.as_deref(), phase.map(Phase::as_str))?;
    Ok(RoundOutcome {
        dir: dir.path.clone(),
        state,
        reason,
        phase,
        verdict,
    })
}

fn has_k6_data(dir: &RunDir) -> bool {
    let l = crate::rundir::Layout::new(&dir.path);
    l.k6().requests_csv_gz().exists() || l.generator(0).requests_csv_gz().exists()
}

/// Analyze the run directory and write report.txt/.md/.json and the plots. Returns a verdict line.
pub(crate) fn write_report(dir: &Path) -> Result<String> {
    let report = crate::html::render_run_dir(dir)?;
    let fmt = |v: Option<u32>| v.map(|x| format!("{x}")).unwrap_or_else(|| "none".into());
    let mut line = match &report.knee_why {
        Some(why) => format!("last passing {}; {why}", fmt(report.last_passing)),
        None => format!(
            "last passing {}, no knee in the steps run",
            fmt(report.last_passing)
        ),
    };
    if let Some(f) = &report.refine {
        let (lo, hi) = f.max_sustainable_resolution;
        let goodput = f.max_sustainable_ok_per_s.map_or(String::new(), |g| {
            format!(" offered, {g:.1} ok/s sustained")
        });
        line = format!(
            "max sustainable {} {}{goodput} (passes {}, fails {}, {} probes); {line}",
            fmt(f.max_sustainable),
            f.unit,
            fmt(lo),
            fmt(hi),
            f.probes.len()
        );
    }
    Ok(line)
}
