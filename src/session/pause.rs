//! A round of an experiment with `load.pause` (`demo-pause`): the open load with the app frozen
//! in its step, a recovery pause, the closed twin with the same freeze (`loads/closed/`), then
//! the three p99s side by side (`analyze::omission`) in the manifest, where the report finds them.
use std::path::Path;

use anyhow::{Context, Result, anyhow};

use super::engine::Engine;
use super::load_phase::Stage;
use super::measurement::{Measurement, Stepped};
use super::trail::Stop;
use crate::analyze::omission::{self, ClosedTwin, Omission};
use crate::experiment::Experiment;
use crate::plan::{self, PlanOptions};

/// The open steps, then the closed twin.
pub(crate) struct PauseContrast {
    pub steps: Stepped,
    pub experiment: Experiment,
    pub quick: bool,
}

impl Measurement for PauseContrast {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        self.steps.run(stage).await?;
        let twin = plan::pause::closed_twin(&self.experiment)
            .context("the experiment has no `load.pause`")?;
        let pause = super::refine::drain_pause(&self.experiment);
        stage.recover(pause, "before the closed twin").await?;
        let closed_plan = plan::build(&twin, PlanOptions { quick: self.quick });
        let dir = stage.run_extra_load("closed", closed_plan).await?;
        let freezes = stage.manifest.measurements.freezes.clone();
        let hold_s = stage.manifest.plan.hold_s;
        let o = side_by_side(&stage.dir.path, &dir, &twin, hold_s, freezes)?;
        stage.manifest.measurements.omission = Some(o);
        stage.dir.write_manifest(stage.manifest)?;
        Ok(())
    }
}

/// The open load's first step (in `open_dir`), the closed twin's (in `closed_dir`, with its
/// latencies for the correction), P and the step's planned D (`hold_s`).
pub(crate) fn side_by_side(
    open_dir: &Path,
    closed_dir: &Path,
    twin: &Experiment,
    hold_s: u32,
    freezes: Vec<omission::Freeze>,
) -> Result<Omission> {
    let analyse = |dir: &Path| -> Result<_> {
        let inputs = crate::rundir::inputs::run_dir(dir)?;
        let hist = inputs.k6.steps.first().map(|s| s.all.clone());
        let r = crate::analyze::analyze_run(inputs)
            .map_err(|e| anyhow!("analysing {}: {e}", dir.display()))?;
        Ok((r, hist))
    };
    let (open, _) = analyse(open_dir)?;
    let (closed, hist) = analyse(closed_dir)?;
    let (Some(o), Some(c), Some(hist)) = (open.steps.first(), closed.steps.first(), hist) else {
        anyhow::bail!("the open load or its closed twin left no step in its data");
    };
    let p = twin.load.pause.as_ref().context("no `load.pause`")?;
    let twin_side = ClosedTwin {
        step: c,
        hist: &hist,
        vus: p.closed_vus,
        think_time_s: p.closed_think_time_s,
    };
    Ok(omission::compare(o, twin_side, p.for_s, hold_s, freezes))
}
