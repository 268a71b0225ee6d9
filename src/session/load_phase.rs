//! One load on the stack as four phases (generators ready, aligned start, measure and sample,
//! collect), then the generators' exit codes decide whether the load was a measurement. The
//! measured steps are one such load; calibration and probe loads reuse it on the same stack.
use std::time::Duration;

use anyhow::anyhow;

use super::engine::{Engine, GeneratorEnd, LoadSpec};
use super::records::Records;
use super::signals::Interrupt;
use super::trail::{Stop, Trail};
use crate::docker::ExitStatus;
use crate::load;
use crate::plan::{self, Alignment, Plan};
use crate::rundir::phase::Phase;
use crate::rundir::{Manifest, RunDir};

/// With `--no-align`, gated generators' test clock starts this long from now (room to start N
/// containers); paused generators are resumed at once.
const NO_ALIGN_LEAD: Duration = Duration::from_millis(3500);

/// Where a session's phases run: the engine, the trail of phases, the interrupt and the run.
pub struct Stage<'a, E: Engine> {
    pub engine: &'a mut E,
    pub trail: &'a mut Trail,
    pub interrupt: &'a Interrupt,
    pub dir: &'a RunDir,
    pub manifest: &'a mut Manifest,
    pub quiet: bool,
    /// The round taking turns with this one (`perflab compare`'s step design): the measured
    /// load starts on the instant both reach.
    pub twin: Option<&'a super::twin::Twin<'a>>,
}

/// The aligned instants of `plan` from `now`: paused generators start on the next boundary (or
/// at once without alignment); gated ones need a lead without alignment to get into their gates.
pub(crate) fn alignment(
    now: chrono::DateTime<chrono::Utc>,
    plan: &Plan,
    align: bool,
    paused: bool,
) -> Alignment {
    if paused || align {
        plan::align(now, plan, align)
    } else {
        let lead = chrono::Duration::from_std(NO_ALIGN_LEAD).unwrap_or_default();
        plan::align(now + lead, plan, false)
    }
}

impl<E: Engine> Stage<'_, E> {
    /// Start the stack and warm it up, two phases named `label` (`fitted` for a restack); what
    /// each recorded reaches the manifest however it ended.
    pub(crate) async fn stack_up(&mut self, label: Option<&str>) -> Result<(), Stop> {
        let mut rec = Records::default();
        let up = self.engine.stack_up(&mut rec);
        let up = (self.trail)
            .run(self.interrupt, Phase::StackUp, label, up)
            .await;
        rec.apply(self.manifest);
        up?;
        let warm = self.engine.warm_up(&mut rec);
        let warm = (self.trail)
            .run(self.interrupt, Phase::WarmUp, label, warm)
            .await;
        rec.apply(self.manifest);
        warm
    }

    /// Run one load through its four phases. `Ok` when every generator ended with an outcome
    /// (0, or 99 for crossed thresholds: breaking the system is a measurement).
    pub async fn run_load(&mut self, load: &LoadSpec) -> Result<(), Stop> {
        let label = Some(load.label.as_str());
        let mut rec = Records::default();
        let paused = self
            .trail
            .run(
                self.interrupt,
                Phase::GeneratorsReady,
                label,
                self.engine.generators_ready(load, &mut rec),
            )
            .await;
        rec.apply_load(load.measured, self.manifest);
        let paused = paused?;
        let now = match self.twin.filter(|_| load.measured) {
            None => self.engine.now(),
            Some(twin) => {
                let meet = twin.meet(self.engine.now());
                (self.trail)
                    .run(self.interrupt, Phase::AlignedStart, Some("twin"), meet)
                    .await?
            }
        };
        let al = alignment(now, &load.plan, load.align, paused);
        if load.measured {
            self.manifest.measurements.alignment = Some(al.clone());
            self.dir.write_manifest(self.manifest)?;
        }
        let (engine, quiet) = (&mut *self.engine, self.quiet);
        let recs = &mut rec;
        let start = async {
            let wake = engine.arm(&al, recs).await?;
            let wait = (wake - engine.now()).to_std().unwrap_or_default();
            if !quiet && wait > Duration::from_secs(1) {
                crate::say!(
                    "waiting {:.0} s so the first step starts at {} UTC (--no-align to skip)",
                    wait.as_secs_f64(),
                    al.first_step_at.format("%H:%M:%S")
                );
            }
            engine.sleep_until(wake).await?;
            engine.start_load(load, &al, recs).await
        };
        let started = (self.trail)
            .run(self.interrupt, Phase::AlignedStart, label, start)
            .await;
        rec.apply_load(load.measured, self.manifest);
        started?;
        let statuses = self
            .trail
            .record(
                Phase::Measure,
                label,
                self.engine.wait_load(self.interrupt.clone()),
            )
            .await?;
        let cancelled = statuses.contains(&ExitStatus::Cancelled);
        let ends = self
            .trail
            .record(
                Phase::Collect,
                label,
                self.engine.collect_load(load, statuses, &mut rec),
            )
            .await;
        rec.apply_load(load.measured, self.manifest);
        let ends = ends?;
        if cancelled {
            self.trail.blame(Phase::Measure, label);
        }
        let measured = load.measured.then_some(&mut *self.manifest);
        judge_exits(&ends, measured, self.interrupt)
    }
}

/// One code for the load: a harness failure first, else 99 when any instance crossed a
/// threshold; a cancelled generator means the load was interrupted. The measured load's codes
/// go into its `manifest`.
fn judge_exits(
    ends: &[GeneratorEnd],
    manifest: Option<&mut Manifest>,
    interrupt: &Interrupt,
) -> Result<(), Stop> {
    let mut codes = Vec::new();
    for e in ends {
        match e.status {
            ExitStatus::Cancelled => {
                return Err(Stop::Interrupted(interrupt.reason().unwrap_or("a signal")));
            }
            ExitStatus::Exited(code) => codes.push(code),
        }
    }
    // A signal during the collection still ends the round as aborted: the user asked to stop.
    if let Some(sig) = interrupt.reason() {
        return Err(Stop::Interrupted(sig));
    }
    let code = codes
        .iter()
        .copied()
        .find(|c| !load::exit_is_outcome(*c))
        .or_else(|| codes.iter().copied().find(|c| *c == 99))
        .unwrap_or(0);
    if let Some(manifest) = manifest {
        let m = &mut manifest.measurements;
        m.k6_exit_code = Some(code);
        if codes.len() > 1 {
            m.k6_exit_codes = Some(codes.clone());
        }
        if code == 99 {
            m.k6_thresholds_crossed = Some(true);
        }
    }
    if load::exit_is_outcome(code) {
        return Ok(());
    }
    let i = codes.iter().position(|c| *c == code).unwrap_or(0);
    let tail: Vec<&str> = ends[i].log.lines().rev().take(8).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(Stop::Failed(anyhow!(
        "k6 ({}) exited with code {code} (not a threshold outcome); last lines of its k6.log:\n{}",
        ends[i].name,
        tail.join("\n")
    )))
}
