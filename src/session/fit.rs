//! `perflab run --fit`: before the measured steps, a calibration load on the same warm stack
//! (`loads/calibration/`) screens this host's quantities (CPU per request of the app and of
//! PostgreSQL, the service time W) and a second one at half the lowest ceiling they give
//! (`loads/working-point/`) measures them where the app works as in the steps; the
//! experiment's `fit:` rules turn the published numbers into fitted ones (`plan::fit`); a rule on a stack setting restarts the stack with it; then
//! the fitted steps run (and `--refine`'s probes, when asked). The manifest keeps the
//! calibration, the published and the fitted plan, and every rule with both values.
use std::time::Duration;

use anyhow::{Result, anyhow};

use super::engine::Engine;
use super::load_phase::Stage;
use super::measurement::{Measurement, Stepped};
pub use super::refine::calibration_of;
use super::refine::{Judge, Refine};
use super::trail::Stop;
use crate::experiment::fit::{self, Fit, FitQ, Inputs, Measured, Published};
use crate::experiment::{Experiment, Model, Script};
use crate::plan::fit::{self as fitting, Quantities};
use crate::plan::{self, PlanOptions};
use crate::rundir::fit::{Calibration, FitRecord};
use crate::rundir::phase::Phase;

/// Share of the lowest screened ceiling the working-point calibration offers.
pub(crate) const WORKING_SHARE: f64 = 0.5;

/// The working point after a low-rate calibration at `rate`: half the lowest ceiling it
/// measured (the app's or the database's CPU, the pool's N/W), when that is at least 1.5x
/// `rate` (else the low rate already is the working point).
pub fn working_rate(q: &Quantities, rate: u32) -> Option<u32> {
    let lowest = [FitQ::AppCeiling, FitQ::DbCeiling, FitQ::PoolRps]
        .iter()
        .filter_map(|k| q.get(k.name()).copied())
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let w = (lowest * WORKING_SHARE).floor();
    let well_above = w.is_finite() && w >= f64::from(rate) * 1.5;
    well_above.then(|| w.min(f64::from(MAX_WORKING_RATE)) as u32)
}

/// How many times the working point is read: its medians feed the rules (one reading of 1a's
/// database ceiling moved 217 -> 349 rps between two runs on a noisy 2-CPU host).
pub(crate) const READINGS: usize = 3;

/// The highest working-point rate (the calibration's VUs stay bounded).
const MAX_WORKING_RATE: u32 = 5000;

/// The lowest calibration rate: below it a second of samples holds too few requests.
pub(crate) const MIN_RATE: u32 = 5;

/// The experiment's calibration load: one open-model step at `rate` held `hold_s`.
pub(crate) fn calibration_experiment(e: &Experiment, rate: u32, hold_s: u32) -> Experiment {
    let mut c = e.clone();
    c.load.model = Model::Open;
    c.load.think_time_s = None;
    c.load.steps = vec![rate];
    c.load.hold_s = hold_s;
    c.load.ramp_s = 0;
    c.load.warmup_s = 0;
    c.load.abort = false;
    // Enough VUs for the rate at the client timeout; it is far under any knee.
    let vus = (rate.saturating_mul(c.load.timeout_s.max(1))).clamp(10, 2000);
    c.load.pre_vus = vus.min(100);
    c.load.max_vus = vus;
    c.load.vu_cap_reason = None;
    if c.load.script == Script::Breakpoint {
        c.load.warmup_rps = c.load.warmup_rps.min(rate);
    }
    c
}

/// The peak probe's load (`fit.calibrate.peak`): one open-model step at `rate` held `hold_s`
/// with the published VUs, so a VU cap the experiment relies on (1c's 400) caps it too.
pub(crate) fn peak_experiment(e: &Experiment, rate: u32, hold_s: u32) -> Experiment {
    let mut c = calibration_experiment(e, rate, hold_s);
    c.load.max_vus = e.load.max_vus.max(1);
    c.load.pre_vus = c.load.max_vus.min(100);
    c
}

/// The quantities of a calibration (measured and published) with the ceilings derived, and
/// the peak probe's (`peak_*`) when one ran: every row of the fit's registry it has.
pub fn quantities(
    e: &Experiment,
    c: &Calibration,
    peak: Option<&Calibration>,
    app_cpus: usize,
    db_cpus: usize,
) -> Quantities {
    let measured = |c: &Calibration| Measured {
        rate: f64::from(c.rate),
        ok_per_s: c.ok_per_s,
        w_ms: c.w_ms,
        p95_ms: c.p95_ms,
        p99_ms: c.p99_ms,
        app_ms: c.app_ms,
        db_ms: c.db_ms,
    };
    fit::values(&Inputs {
        published: Published::of(e, app_cpus, db_cpus),
        calibration: Some(measured(c)),
        peak: peak.map(measured),
    })
}

/// The peak probe's rate: `expr` over the calibration's quantities, rounded, at least
/// [`MIN_RATE`] and at most [`MAX_WORKING_RATE`] (its VUs stay bounded).
pub(crate) fn peak_rate(expr: &str, q: &Quantities) -> Result<u32> {
    let v = fitting::evaluate(expr, q).map_err(|m| anyhow!("fit.calibrate.peak ({expr}): {m}"))?;
    Ok((v.round() as u32).clamp(MIN_RATE, MAX_WORKING_RATE))
}

/// A twin's calibration (`fit.twin`): its run's calibration and peak probe, read by this
/// run's rules in place of its own.
#[derive(Debug, Clone)]
pub struct Lent {
    /// `diag-tcp/20261207T...-r1`.
    pub run: String,
    pub calibration: Calibration,
    pub peak: Option<Calibration>,
}

/// The fitted run: calibration, fitting, then the steps (and probes) of the fitted plan.
pub struct Fitted<J: Judge> {
    /// The experiment as published (after `--set`).
    pub experiment: Experiment,
    pub align: bool,
    pub quick: bool,
    /// Probe for the max sustainable rate after the fitted steps.
    pub refine: bool,
    pub judge: J,
    /// The twin's calibration (`fit.twin`): no calibration load runs here.
    pub lent: Option<Lent>,
}

impl<J: Judge + Clone> Fitted<J> {
    fn fit(&self) -> Result<&Fit> {
        self.experiment
            .fit
            .as_ref()
            .ok_or_else(|| anyhow!("experiment {} has no `fit:` section", self.experiment.id))
    }

    /// The calibration the rules read: the low-rate one ([`Self::screen`]), then one at the
    /// working point ([`working_rate`]) when that is well above it. A working point that does
    /// not pass leaves the low-rate numbers, with its failure among `failed_attempts`.
    async fn calibrate<E: Engine>(&self, stage: &mut Stage<'_, E>) -> Result<Calibration, Stop> {
        let mut low = self.screen(stage).await?;
        let layout = &stage.manifest.cpu_layout;
        let q = quantities(
            &self.experiment,
            &low,
            None,
            layout.app.len(),
            layout.db.len(),
        );
        let Some(rate) = working_rate(&q, low.rate) else {
            return Ok(low);
        };
        stage
            .recover(Duration::from_secs(2), "before the working point")
            .await?;
        let c = self.load(stage, "working point", rate, low.hold_s).await?;
        if c.pass {
            let mut c = self.repeat(stage, c, &mut low.failed_attempts).await?;
            c.failed_attempts = std::mem::take(&mut low.failed_attempts);
            c.screening = Some(Box::new(low));
            return Ok(c);
        }
        low.failed_attempts
            .push(format!("{rate} rps (working point): {}", c.why));
        let pause = super::refine::drain_pause(&self.experiment);
        stage.recover(pause, "after a failed calibration").await?;
        Ok(low)
    }

    /// The working point `first` read [`READINGS`] times in all (a short rest between), as
    /// the medians of the passing readings; a repeat that does not pass is noted in `failed`.
    async fn repeat<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        first: Calibration,
        failed: &mut Vec<String>,
    ) -> Result<Calibration, Stop> {
        let (rate, hold_s) = (first.rate, first.hold_s);
        let fallback = first.clone();
        let mut passing = vec![first];
        for n in 2..=READINGS {
            stage
                .recover(Duration::from_secs(2), "between working-point readings")
                .await?;
            let label = format!("working point {n}");
            let c = self.load(stage, &label, rate, hold_s).await?;
            if c.pass {
                passing.push(c);
            } else {
                failed.push(format!("{rate} rps ({label}): {}", c.why));
            }
        }
        Ok(Calibration::median_of(passing).unwrap_or(fallback))
    }

    /// One calibration load labelled `label` (its directory `loads/<label>/`) at `rate` for
    /// `hold_s`, judged in the fit phase.
    async fn load<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        label: &str,
        rate: u32,
        hold_s: u32,
    ) -> Result<Calibration, Stop> {
        let cal = calibration_experiment(&self.experiment, rate, hold_s);
        self.run_load(stage, label, cal).await
    }

    /// Run `cal` (one open step) as the extra load `label` and judge it in the fit phase.
    async fn run_load<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        label: &str,
        cal: Experiment,
    ) -> Result<Calibration, Stop> {
        let (rate, hold_s) = (cal.load.steps[0], cal.load.hold_s);
        let plan = plan::build(&cal, PlanOptions { quick: false });
        if !stage.quiet {
            crate::say!("fit: {label} at {rate} rps for {hold_s} s");
        }
        let dir = stage.run_extra_load(label, plan).await?;
        let judged = async { self.judge.calibration(&dir, rate, hold_s) };
        stage.trail.record(Phase::Fit, Some(label), judged).await
    }

    /// The low-rate calibration load and its numbers: at `fit.calibrate.rate`, then, while it
    /// does not pass (the host breaks below that rate), at half the rate, down to [`MIN_RATE`].
    async fn screen<E: Engine>(&self, stage: &mut Stage<'_, E>) -> Result<Calibration, Stop> {
        let fit = self.fit()?;
        let hold_s = fit.calibrate.hold_s;
        let mut rate = fit.calibrate.rate;
        let mut failed = Vec::new();
        for attempt in 1.. {
            let label = match attempt {
                1 => "calibration".to_string(),
                n => format!("calibration {n}"),
            };
            let mut c = self.load(stage, &label, rate, hold_s).await?;
            if c.pass {
                c.failed_attempts = failed;
                return Ok(c);
            }
            failed.push(format!("{rate} rps: {}", c.why));
            if rate <= MIN_RATE {
                break;
            }
            rate = (rate / 2).max(MIN_RATE);
            let pause = super::refine::drain_pause(&self.experiment);
            stage.recover(pause, "after a failed calibration").await?;
        }
        let why = failed.join("; ");
        let e = anyhow!(
            "no calibration passed on this host ({why}): it breaks below {MIN_RATE} rps, so nothing can be fitted; run it as published (without --fit), or on a host with fewer other processes"
        );
        // Recorded as the fit phase's failure; the round stops with it.
        stage
            .trail
            .record(Phase::Fit, None, async { Err::<Calibration, _>(e) })
            .await
    }

    /// Restart the stack with the fitted settings (a rule set a `stack.` field).
    async fn restack<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        fitted: &Experiment,
    ) -> Result<(), Stop> {
        stage
            .trail
            .record(
                Phase::Teardown,
                Some("calibration stack"),
                stage.engine.teardown(),
            )
            .await?;
        stage.engine.set_experiment(fitted);
        stage.stack_up(Some("fitted")).await
    }

    /// The peak probe, when the experiment declares one: at `calibrate.peak`'s rate over the
    /// calibration's quantities `q`, with the published VUs, then a pause until in-flight
    /// work drains. Its verdict does not matter (it is meant to reach a ceiling); a rule that
    /// reads a number it did not measure fails the fit, naming the quantity.
    async fn peak<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
        q: &Quantities,
        hold_s: u32,
    ) -> Result<Option<Calibration>, Stop> {
        let Some(expr) = self.fit()?.calibrate.peak.as_deref() else {
            return Ok(None);
        };
        let rate = match peak_rate(expr, q) {
            Ok(r) => r,
            // Recorded as the fit phase's failure; the round stops with it.
            Err(e) => {
                let failed = async { Err::<Option<Calibration>, _>(e) };
                return stage.trail.record(Phase::Fit, Some("peak"), failed).await;
            }
        };
        stage
            .recover(Duration::from_secs(2), "before the peak probe")
            .await?;
        let probe = peak_experiment(&self.experiment, rate, hold_s);
        let p = self.run_load(stage, "peak", probe).await?;
        let pause = super::refine::drain_pause(&self.experiment);
        stage.recover(pause, "after the peak probe").await?;
        Ok(Some(p))
    }

    /// This run's calibration and peak probe, measured or lent by its twin.
    async fn measure<E: Engine>(
        &self,
        stage: &mut Stage<'_, E>,
    ) -> Result<(Calibration, Option<Calibration>), Stop> {
        if let Some(l) = &self.lent {
            if !stage.quiet {
                crate::say!("fit: the calibration of {} (fit.twin)", l.run);
            }
            return Ok((l.calibration.clone(), l.peak.clone()));
        }
        let c = self.calibrate(stage).await?;
        let layout = &stage.manifest.cpu_layout;
        let (app, db) = (layout.app.len(), layout.db.len());
        let q = quantities(&self.experiment, &c, None, app, db);
        let peak = self.peak(stage, &q, c.hold_s).await?;
        Ok((c, peak))
    }

    /// Calibrate (or take the twin's calibration), fit, record; the fitted experiment.
    async fn fit_to_host<E: Engine>(&self, stage: &mut Stage<'_, E>) -> Result<Experiment, Stop> {
        let (c, peak) = self.measure(stage).await?;
        let layout = &stage.manifest.cpu_layout;
        let (app, db) = (layout.app.len(), layout.db.len());
        let q = quantities(&self.experiment, &c, peak.as_ref(), app, db);
        let fitting = async {
            fitting::apply(&self.experiment, self.fit()?, &q)
                .map_err(|m| anyhow!("fitting {} to this host: {m}", self.experiment.id))
        };
        let (fitted, rules) = stage.trail.record(Phase::Fit, None, fitting).await?;
        let restacked = rules.iter().any(|r| r.set.starts_with("stack."));
        if !stage.quiet {
            for r in &rules {
                crate::say!("fit: {} {} -> {} ({})", r.set, r.article, r.fitted, r.to);
            }
        }
        let article_plan = stage.manifest.plan.clone();
        stage.manifest.experiment = fitted.clone();
        stage.manifest.plan = plan::build(&fitted, PlanOptions { quick: self.quick });
        stage.manifest.measurements.fit = Some(FitRecord {
            calibration: c,
            peak,
            quantities: q,
            rules,
            article_plan,
            restacked,
            twin_run: self.lent.as_ref().map(|l| l.run.clone()),
        });
        stage.dir.write_manifest(stage.manifest)?;
        if restacked {
            self.restack(stage, &fitted).await?;
        } else {
            stage
                .recover(Duration::from_secs(2), "after the calibration")
                .await?;
        }
        Ok(fitted)
    }
}

impl<J: Judge + Clone> Measurement for Fitted<J> {
    async fn run<E: Engine>(&mut self, stage: &mut Stage<'_, E>) -> Result<(), Stop> {
        let fitted = self.fit_to_host(stage).await?;
        let steps = Stepped {
            plan: stage.manifest.plan.clone(),
            align: self.align,
        };
        if !self.refine {
            let mut s = steps;
            return s.run(stage).await;
        }
        let mut r = Refine {
            steps,
            experiment: fitted,
            quick: self.quick,
            judge: self.judge.clone(),
        };
        r.run(stage).await
    }
}
