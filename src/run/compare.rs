//! `perflab compare TARGET --a ... --b ...` on the engine: each side's images built (a side's
//! suite is its own), the host lock taken once for every experiment, leftovers of killed runs
//! swept, then each experiment's rounds interleaved on fresh stacks (`session::interleave`)
//! until its verdict is decided or both sides reach the cap. Also where a side's recorded
//! rounds are found (the same experiment and configuration under `--out`).
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{RunRequest, docker_env, prepare, round_line, run_one, sweep_leftovers};
use crate::experiment::Experiment;
use crate::images;
use crate::lock::Wait;
use crate::plan::Resolved;
use crate::rig::DockerEnv;
use crate::rundir::Manifest;
use crate::rundir::batch::{CompareSide, Design};
use crate::session::Session;
use crate::session::interleave::{
    self, Batch, CompareTag, End, Interleaved, RecordedReferee, Schedule, SideRunner,
};
use crate::session::round::RoundOutcome;
use crate::session::signals::Interrupt;
use crate::session::twin::Twins;
use crate::verify::compare::Settings;
use crate::verify::config::Config;
use crate::verify::load::{self, LoadedRun};
use crate::verify::side::SideSpec;

/// One experiment of the target: the batch its new rounds join, and the complete rounds each
/// side already has (oldest first).
pub(crate) struct ExperimentPlan {
    pub id: String,
    pub batch: Batch,
    pub recorded_a: Vec<PathBuf>,
    pub recorded_b: Vec<PathBuf>,
    /// How the pairs are made, and why whole rounds when they are.
    pub design: (Design, Option<String>),
}

/// A validated comparison (nothing started yet). `a.resolved[i]` and `b.resolved[i]` are the
/// two sides' configurations of `experiments[i]`.
pub(crate) struct CompareRequest {
    pub target: String,
    pub a: RunRequest,
    pub b: RunRequest,
    pub experiments: Vec<ExperimentPlan>,
    /// The verdict's settings; `settings.max_rounds` is the cap of the rounds a side too.
    pub settings: Settings,
    /// Run every pair of the plan, decided or not (`--run-out`).
    pub run_out: bool,
    pub wait: Wait,
    pub quiet: bool,
    /// The sides as declared (`SideSpec::describe`), for the lines told as the rounds go.
    pub labels: [String; 2],
}

/// How the command ended: each experiment's rounds as far as they went.
pub(crate) struct CompareSummary {
    pub experiments: Vec<(String, Interleaved)>,
    pub interrupted: bool,
    pub harness_failed: bool,
}

/// Which recorded rounds of a side's configuration join a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Joining<'b> {
    /// None: a new batch starts from no rounds (the default).
    Fresh,
    /// The rounds of one batch run for this side (`--resume`, `--no-run`): the rounds of an A/A
    /// batch, one configuration on both sides, are told apart by their side.
    Batch(&'b str),
    /// Every complete round of the configuration, whoever ran it (`--reuse`).
    All,
}

impl Joining<'_> {
    fn admits(&self, m: &Manifest, side: CompareSide) -> bool {
        let tag = m.measurements.compare.as_ref();
        match self {
            Joining::Fresh => false,
            Joining::All => true,
            Joining::Batch(b) => tag.is_some_and(|t| t.batch == *b && t.side == side),
        }
    }
}

/// The complete rounds of `spec`'s configuration of `e` under `out_root` (`SideSpec::config`:
/// the same suite, `--set` overrides, profile, fit and resolved stack and load) that join side
/// `spec.side` as `joining` says, the newest `max`, oldest first, each run once (`load::scan`:
/// streaming, stopping at `max`). Unreadable runs and copies are noted in `skipped`.
pub(crate) fn joining_rounds(
    out_root: &Path,
    (e, spec): (&Experiment, &SideSpec),
    (quick, fitted): (bool, bool),
    (joining, max): (Joining<'_>, usize),
    skipped: &mut Vec<String>,
) -> Vec<LoadedRun> {
    if joining == Joining::Fresh {
        return Vec::new();
    }
    let side = spec.config(e, (quick, fitted));
    let want = load::Want {
        suite: Some(spec.suite.as_str()),
        admits: &mut |m| joining.admits(m, spec.side) && side.admits(&Config::of(m)),
        limit: max,
        together: matches!(joining, Joining::Batch(_)),
    };
    let mut runs = load::scan_noting(out_root, &e.id, want, skipped);
    runs.reverse();
    runs
}

/// Every complete round of `spec`'s configuration of `e` under `out_root`, the newest `max`,
/// oldest first (what `--reuse` joins; what `matrix plan` counts as done).
pub fn recorded_rounds(
    out_root: &Path,
    e: &Experiment,
    spec: &SideSpec,
    profile: (bool, bool),
    max: usize,
    skipped: &mut Vec<String>,
) -> Vec<LoadedRun> {
    joining_rounds(out_root, (e, spec), profile, (Joining::All, max), skipped)
}

/// The newest batch in which `spec`'s configuration of `e` ran as `spec.side` (the batch of its
/// newest tagged round of that side: a batch where the configuration was the other side
/// belongs to another comparison).
pub(crate) fn newest_batch_of(
    out_root: &Path,
    (e, spec): (&Experiment, &SideSpec),
    profile: (bool, bool),
) -> Option<String> {
    let side = spec.config(e, profile);
    let tagged = |m: &Manifest| {
        m.measurements
            .compare
            .as_ref()
            .is_some_and(|t| t.side == spec.side)
    };
    let want = load::Want {
        suite: Some(spec.suite.as_str()),
        admits: &mut |m| tagged(m) && side.admits(&Config::of(m)),
        limit: 1,
        together: true,
    };
    let (runs, _) = load::scan(out_root, &e.id, want);
    runs.first()
        .and_then(|r| r.manifest.measurements.compare.as_ref())
        .map(|t| t.batch.clone())
}

/// The newest comparison batch among `rounds` (for `--resume`).
pub fn newest_batch<'r>(rounds: impl IntoIterator<Item = &'r LoadedRun>) -> Option<String> {
    rounds
        .into_iter()
        .filter_map(|r| r.manifest.measurements.compare.as_ref())
        .map(|t| t.batch.clone())
        .max()
}

/// Run every experiment's rounds, interleaved, under one host lock.
pub(crate) async fn execute(
    req: CompareRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
) -> Result<CompareSummary> {
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let mut summary = CompareSummary {
        experiments: Vec::new(),
        interrupted: true,
        harness_failed: false,
    };
    let Some(prepared_a) = prepare(&req.a, progress_build, &interrupt).await? else {
        return Ok(summary);
    };
    let own_b = match req.b.suite == req.a.suite {
        true => None,
        false => match prepare(&req.b, progress_build, &interrupt).await? {
            Some(p) => Some(p),
            None => return Ok(summary),
        },
    };
    let prepared_b = own_b.as_ref().unwrap_or(&prepared_a);
    let session = Session::begin(&req.target, req.wait, req.quiet, interrupt).await?;
    let interrupt = session.interrupt.clone();
    sweep_leftovers(&req.a, &prepared_a).await?;
    let env_a = docker_env(&req.a, &prepared_a).await;
    let env_b = docker_env(&req.b, prepared_b).await;
    summary.interrupted = false;
    for (i, plan) in req.experiments.iter().enumerate() {
        let mut runner = DockerSides {
            reqs: [&req.a, &req.b],
            envs: [&env_a, &env_b],
            experiment: i,
        };
        let done = one_experiment(&req, plan, &mut runner, &interrupt).await?;
        let end = done.end;
        summary.experiments.push((plan.id.clone(), done));
        match end {
            End::Interrupted => {
                summary.interrupted = true;
                break;
            }
            End::HarnessFailed => {
                summary.harness_failed = true;
                break;
            }
            End::Decided | End::Cap => {}
        }
    }
    drop(session);
    Ok(summary)
}

/// One experiment's interleaved rounds, told as they go (stderr).
pub(crate) async fn one_experiment(
    req: &CompareRequest,
    plan: &ExperimentPlan,
    runner: &mut impl SideRunner,
    interrupt: &Interrupt,
) -> Result<Interleaved> {
    let quiet = req.quiet;
    if !quiet {
        crate::say!(
            "compare {}: {} against {}; {} and {} complete round(s) recorded, up to {} a side, batch {}",
            plan.id,
            req.labels[1],
            req.labels[0],
            plan.recorded_a.len(),
            plan.recorded_b.len(),
            req.settings.max_rounds,
            plan.batch.id
        );
        let (design, why) = (&plan.design.0, plan.design.1.as_deref());
        match why {
            None => crate::say!("{}: pairs by {}", plan.id, design.describe()),
            Some(why) => crate::say!("{}: pairs by {} ({why})", plan.id, design.describe()),
        }
    }
    let mut say = |line: &str| {
        if !quiet {
            crate::say!("{}: {line}", plan.id);
        }
    };
    let done = interleave::interleave(
        runner,
        &mut RecordedReferee::new(req.settings),
        &plan.batch,
        (plan.recorded_a.clone(), plan.recorded_b.clone()),
        Schedule {
            max_rounds: req.settings.max_rounds,
            run_out: req.run_out,
            design: plan.design.0,
        },
        interrupt,
        &mut say,
    )
    .await?;
    match done.end {
        End::Interrupted => crate::say!(
            "{}: interrupted; {}",
            plan.id,
            interleave::kept_note(&done.a, &done.b)
        ),
        End::Cap if !quiet => crate::say!(
            "{}: {} rounds a side without a decided verdict",
            plan.id,
            req.settings.max_rounds
        ),
        _ => {}
    }
    Ok(done)
}

/// The real rounds: each side's request and engines, one experiment of them.
struct DockerSides<'r, 'e> {
    reqs: [&'r RunRequest; 2],
    envs: [&'e DockerEnv<'e>; 2],
    experiment: usize,
}

impl SideRunner for DockerSides<'_, '_> {
    async fn round(&mut self, tag: CompareTag, interrupt: &Interrupt) -> Result<RoundOutcome> {
        let i = match tag.side {
            CompareSide::A => 0,
            CompareSide::B => 1,
        };
        let (req, env) = (self.reqs[i], self.envs[i]);
        let r = &req.resolved[self.experiment];
        let (side, round) = (tag.side, tag.pair);
        let o = run_one(req, env, r, round, interrupt, (Some(tag), None)).await?;
        if !req.quiet {
            crate::say!("{side} {}", round_line(&r.experiment.id, round, &o));
        }
        crate::html::index::rebuild_after_round(&req.out_root);
        Ok(o)
    }

    async fn pair(
        &mut self,
        [ta, tb]: [CompareTag; 2],
        interrupt: &Interrupt,
    ) -> Result<[RoundOutcome; 2]> {
        let (ra, rb) = (
            &self.reqs[0].resolved[self.experiment],
            &self.reqs[1].resolved[self.experiment],
        );
        let (pa, pb) = match ta.design {
            Design::Together => (ra.plan.clone(), rb.plan.clone()),
            _ => crate::plan::turns::for_pair(&ra.plan, &rb.plan, ta.pair),
        };
        let with = |r: &Resolved, plan| Resolved { plan, ..r.clone() };
        let (ra, rb) = (with(ra, pa), with(rb, pb));
        let twins = Twins::default();
        let (twin_a, twin_b) = (twins.side(0), twins.side(1));
        let round = ta.pair;
        // one progress line on the terminal: A's (B's would interleave with it)
        let env_b = DockerEnv {
            quiet: true,
            live: None,
            ..self.envs[1].clone()
        };
        let (oa, ob) = tokio::join!(
            run_one(
                self.reqs[0],
                self.envs[0],
                &ra,
                round,
                interrupt,
                (Some(ta), Some(&twin_a))
            ),
            run_one(
                self.reqs[1],
                &env_b,
                &rb,
                round,
                interrupt,
                (Some(tb), Some(&twin_b))
            ),
        );
        let (oa, ob) = (oa?, ob?);
        if !self.reqs[0].quiet {
            let id = &ra.experiment.id;
            crate::say!("A {}", round_line(id, round, &oa));
            crate::say!("B {}", round_line(id, round, &ob));
        }
        crate::html::index::rebuild_after_round(&self.reqs[0].out_root);
        Ok([oa, ob])
    }
}
