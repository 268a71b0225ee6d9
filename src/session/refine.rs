//! `perflab run --refine`: after the published steps, probes on the same warm stack find the
//! max sustainable rate. Each probe is a one-step load (`loads/probe-N/`) judged by the same
//! criteria as the steps; the bracket is bisected to within 5 % of the rate, or extended x1.25
//! when no step failed (`analyze::refine`), with a recovery pause after a failing probe so
//! in-flight work drains before the next one.
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};

use super::engine::Engine;
use super::load_phase::Stage;
use super::measurement::{Measurement, Stepped};
use super::trail::Stop;
use crate::analyze::refine::{Bisection, Next, Probe, RefineLimits};
use crate::analyze::{Report, Verdict};
use crate::experiment::{Experiment, Model};
use crate::plan::{self, Plan, PlanOptions};
use crate::rundir::fit::Calibration;

/// How a load is judged: the analysis of its k6 data by the step criteria.
pub trait Judge {
    /// The published steps' verdicts in `dir`: (last passing step, knee).
    fn steps(&self, dir: &Path) -> Result<(Option<u32>, Option<u32>)>;
    /// One probe's verdict, from its load's outputs in `dir`.
    fn probe(&self, dir: &Path, target: u32) -> Result<Probe>;
    /// A calibration load's numbers (`--fit`), from its outputs in `dir`.
    fn calibration(&self, dir: &Path, rate: u32, hold_s: u32) -> Result<Calibration> {
        analysed_calibration(dir, rate, hold_s)
    }
}

/// The calibration's analysis (the real judge's default).
pub(crate) fn analysed_calibration(dir: &Path, rate: u32, hold_s: u32) -> Result<Calibration> {
    let inputs = crate::rundir::inputs::run_dir(dir)?;
    let r = crate::analyze::analyze_run(inputs)
        .map_err(|e| anyhow!("analysing the calibration in {}: {e}", dir.display()))?;
    calibration_of(&r, rate, hold_s)
}

/// The calibration's numbers from its analysed load (one step).
pub fn calibration_of(r: &Report, rate: u32, hold_s: u32) -> Result<Calibration> {
    let s = r
        .steps
        .first()
        .context("the calibration load left no step in its data")?;
    let db_ms = s
        .server
        .as_ref()
        .and_then(|w| w.cpu_pct.get("pg"))
        .filter(|_| s.ok_per_s > 0.0)
        .map(|pct| pct * 10.0 / s.ok_per_s);
    // Under its knee means latency within the SLO and the generator on schedule (criteria 1
    // and 4). Errors and the goodput they cost (2, 3) do not disqualify it: an experiment whose
    // mechanism is a refused share (exp2-pgconn) fails them at any rate, and the CPU per
    // *successful* request is still measured.
    let saturated = |c: u8| c == 1 || c == 4;
    let pass = !s.failures.iter().any(|f| saturated(f.criterion));
    let why: Vec<String> = s.failures.iter().map(|f| f.text.clone()).collect();
    Ok(Calibration {
        rate,
        hold_s,
        ok_per_s: s.ok_per_s,
        w_ms: s.avg_ms,
        p95_ms: s.p95_ms,
        p99_ms: Some(s.p99_ms),
        app_ms: s.ms_cpu_per_ok,
        db_ms,
        pass,
        why: why.join("; "),
        failed_attempts: Vec::new(),
        screening: None,
        readings: Vec::new(),
    })
}

/// The real judge: `perflab analyze` on the load's directory (its k6 CSV, samples, plan.json).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Analysis;

fn analyze(dir: &Path) -> Result<Report> {
    let inputs = crate::rundir::inputs::run_dir(dir)?;
    crate::analyze::analyze_run(inputs)
        .map_err(|e| anyhow::anyhow!("analysing {}: {e}", dir.display()))
}

impl Judge for Analysis {
    fn steps(&self, dir: &Path) -> Result<(Option<u32>, Option<u32>)> {
        let r = analyze(dir)?;
        Ok((r.last_passing, r.knee))
    }

    fn probe(&self, dir: &Path, target: u32) -> Result<Probe> {
        let r = analyze(dir)?;
        let s = r
            .steps
            .iter()
            .find(|s| s.target == target)
            .with_context(|| format!("the probe at {target} left no step in its data"))?;
        let why: Vec<String> = s.failures.iter().map(|f| f.text.clone()).collect();
        Ok(Probe {
            generator_cpu_pct: s.server.as_ref().and_then(|w| w.k6_cpu_max_pct),
            target,
            pass: s.verdict == Verdict::Pass,
            why: why.join("; "),
            ok_per_s: s.ok_per_s,
            p95_ms: s.p95_ms,
        })
    }
}

/// How long in-flight work may take to drain after a failing load: the client timeout, 2 to
/// 30 s (after a failing probe, or a calibration that did not pass).
pub(crate) fn drain_pause(e: &Experiment) -> Duration {
    Duration::from_secs(u64::from(e.load.timeout_s.clamp(2, 30)))
}

/// The published steps, then the probes.
pub struct Refine<J: Judge> {
    pub steps: Stepped,
    pub experiment: Experiment,
    pub quick: bool,
    pub judge: J,
}

impl<J: Judge> Refine<J> {
    /// A one-step plan at `target`, otherwise the experiment's own.
    fn probe_plan(&self, target: u32) -> Plan {
        let mut e = self.experiment.clone();
        e.load.steps = vec![target];
        plan::build(&e, PlanOptions { quick: self.quick })
    }

    fn recovery(&self) -> Duration {
        drain_pause(&self.experiment)
    }

    fn unit(&self) -> &'static str {
        match self.experiment.load.model {
            Model::Closed => "vus",
            Model::Open => "rps",
        }
    }

    /// One probe: its plan written where the analysis finds it, its load, its verdict.
    async fn probe<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        i: usize,
        target: u32,
    ) -> Result<Probe, Stop> {
        let out_dir = stage
            .run_extra_load(&format!("probe {i}"), self.probe_plan(target))
            .await?;
        Ok(self.judge.probe(&out_dir, target)?)
    }
}

impl<J: Judge> Measurement for Refine<J> {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        self.steps.run(stage).await?;
        let (last_passing, knee) = self.judge.steps(&stage.dir.path)?;
        let top = self.experiment.load.steps.last().copied().unwrap_or(1);
        let cores = stage.manifest.cpu_layout.loadgen.len();
        let limits = RefineLimits::for_top(top).with_generator_cores(cores);
        let mut b = Bisection::new(last_passing, knee, limits);
        let stopped = loop {
            let target = match b.next() {
                Next::Probe(t) => t,
                Next::Done(why) => break why,
            };
            if !stage.quiet {
                crate::say!(
                    "refine: probe {} at {target} {}",
                    b.probes.len() + 1,
                    self.unit()
                );
            }
            let p = self.probe(stage, b.probes.len() + 1, target).await?;
            let failed = !p.pass;
            b.record(p);
            stage.manifest.measurements.refine = Some(b.result(self.unit(), "in progress".into()));
            if failed {
                stage
                    .recover(self.recovery(), "after a failing probe")
                    .await?;
            }
        };
        stage.manifest.measurements.refine = Some(b.result(self.unit(), stopped));
        Ok(())
    }
}
