//! `perflab run`: validate and plan, build missing images, take the host lock, sweep leftovers
//! of killed runs, then run every experiment of the target (a group runs its members in order)
//! for each round on a fresh stack, and print each round's verdict. `compare`: the same rounds
//! for two configurations, interleaved until the verdict is decided (`target`: `compare TARGET`
//! from its typed options to the matrix; `recorded`: `compare RUN_A RUN_B`). `resolve`: an id
//! and the planning flags to planned experiments and a CPU layout, `run`'s input checked in
//! order into its `RunRequest`; `missing`: `verify`'s findings and `--run-missing`;
//! `lifecycle`: `up`, `smoke`, `down` and `cleanup`, and what they print (`stack_text`);
//! `build`: `perflab build`; `status`: `perflab status`.

pub(crate) mod build;
pub(crate) mod calibration;
pub mod compare;
pub mod design;
pub(crate) mod lifecycle;
pub(crate) mod map;
pub(crate) mod missing;
pub(crate) mod outline;
pub(crate) mod recorded;
pub(crate) mod resolve;
pub(crate) mod stack_text;
pub(crate) mod status;
pub(crate) mod target;
pub(crate) mod twin_fit;

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::docker::Docker;
use crate::docker::placement;
use crate::images::{self, Suite};
use crate::lock::Wait;
use crate::plan::CpuLayout;
use crate::plan::Resolved;
use crate::rig::generators;
use crate::rig::{DockerEngine, DockerEnv};
use crate::rundir::RunState;
use crate::rundir::batch::CompareTag;
use crate::session::Session;
use crate::session::fit::Fitted;
use crate::session::interleave::Tagged;
use crate::session::measurement::Stepped;
use crate::session::pause::PauseContrast;
use crate::session::refine::{Analysis, Refine};
use crate::session::round::{RoundOutcome, RoundSpec};
use crate::session::signals::Interrupt;
use crate::session::sweep;
use crate::session::twin::Twin;

/// A validated, planned request (nothing has been started yet).
pub(crate) struct RunRequest {
    pub target: String,
    pub resolved: Vec<Resolved>,
    pub overrides: Vec<String>,
    pub layout: CpuLayout,
    pub rounds: u32,
    pub suite: Suite,
    pub align: bool,
    pub wait: Wait,
    pub out_root: PathBuf,
    pub quiet: bool,
    pub no_samplers: bool,
    /// Load generators per round (k6 execution segments).
    pub generators: u32,
    /// Engines of the roles and the published entry address.
    pub placement: placement::Placement,
    /// `--refine`: probe for the max sustainable rate after the steps.
    pub refine: Option<Refining>,
    /// `--fit`: calibrate, then fit the published numbers to this host (experiments with a
    /// `fit:` section; the others run as published).
    pub fit: bool,
    /// `--k6-dashboard`: k6's own web dashboard exported per generator (`k6/dashboard.html`).
    pub k6_dashboard: bool,
    /// `--run-name`: this one round is a matrix cell, in the directory the name gives (one
    /// experiment, its round number from the name).
    pub run_name: Option<crate::rundir::cell::CellName>,
    /// `--live`, `--prometheus`: the live page's servers.
    pub live: Option<crate::live::LiveOptions>,
}

/// How `--refine` plans its probes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refining {
    /// The probes use the `--quick` profile, as the steps.
    pub quick: bool,
}

/// How the whole command ended.
#[derive(Debug)]
pub(crate) struct RunSummary {
    pub rounds: Vec<RoundOutcome>,
    pub interrupted: bool,
    pub harness_failed: bool,
}

/// What every round of a request shares once built: the stack's engine and images, and the
/// load generators' engine.
pub(crate) struct Prepared {
    pub docker: Docker,
    pub images: images::ImageSet,
    pub loadgen: generators::LoadgenEngine,
}

/// The images and engines of `req` (built before the lock: builds disturb another lab's
/// measurements less than waiting would). `None` when Ctrl-C stopped an image build (said;
/// its intermediate container removed, nothing else was started).
pub(crate) async fn prepare(
    req: &RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
    interrupt: &Interrupt,
) -> Result<Option<Prepared>> {
    let prepared = async {
        let (docker, set) = prepare_stack(req, progress_build, interrupt).await?;
        let loadgen = prepare_loadgen(&docker, &set, req, progress_build, interrupt).await?;
        anyhow::Ok(Prepared {
            docker,
            images: set,
            loadgen,
        })
    }
    .await;
    match (prepared, interrupt.reason()) {
        (Ok(p), _) => Ok(Some(p)),
        (Err(e), Some(sig)) => {
            crate::say!("interrupted by {sig} during the image build: {e:#}; nothing was started");
            Ok(None)
        }
        (Err(e), None) => Err(e),
    }
}

/// The sweep of leftovers of killed runs under the lock: run directories, the stack's engine,
/// and the load generators' when it is another one.
pub(crate) async fn sweep_leftovers(req: &RunRequest, p: &Prepared) -> Result<()> {
    sweep::sweep(&p.docker, &req.out_root, &BTreeSet::new())
        .await?
        .tell(req.quiet, p.docker.endpoint());
    if p.loadgen.remote {
        // The run directories were handled above; only the other engine's objects remain.
        sweep::sweep_engine(&p.loadgen.docker, &BTreeSet::new())
            .await?
            .tell(req.quiet, p.loadgen.docker.endpoint());
    }
    Ok(())
}

/// What the rounds of `req` share on the engines `p`.
pub(crate) async fn docker_env<'a>(req: &'a RunRequest, p: &'a Prepared) -> DockerEnv<'a> {
    let (docker, loadgen) = (&p.docker, &p.loadgen);
    DockerEnv {
        docker,
        images: &p.images,
        layout: &req.layout,
        quiet: req.quiet,
        no_samplers: req.no_samplers,
        loadgen,
        generators: req.generators,
        placement: &req.placement,
        stack_engine: docker.facts().await.ok(),
        stack_clock: if loadgen.remote {
            docker.clock_offset(5).await.ok()
        } else {
            loadgen.clock
        },
        repo_root: images::recipe::repo_root(),
        live: None,
    }
}

/// [`execute`] on its own runtime, with the images' build progress on stderr: the exit code
/// (130 interrupted, 1 a harness failure, else 0).
pub(crate) fn execute_blocking(req: RunRequest) -> Result<std::process::ExitCode> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut progress = images::build_progress(req.quiet);
    let summary = rt.block_on(execute(req, &mut progress))?;
    Ok(if summary.interrupted {
        std::process::ExitCode::from(130)
    } else if summary.harness_failed {
        std::process::ExitCode::from(crate::error::EXIT_FAILURE)
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// Execute a request. Image builds happen before the lock (they do not disturb measurements
/// of another lab much less than waiting would); everything that measures holds the lock.
pub(crate) async fn execute(
    req: RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
) -> Result<RunSummary> {
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let live = match &req.live {
        Some(o) => Some(crate::live::Live::start(o, &req.target).await?),
        None => None,
    };
    let outline = tell_outline(&req).await;
    // Ctrl-C during an image build stops it (its intermediate container removed): nothing
    // else was started, and the command exits as interrupted.
    let Some(prepared) = prepare(&req, progress_build, &interrupt).await? else {
        return Ok(RunSummary {
            rounds: Vec::new(),
            interrupted: true,
            harness_failed: false,
        });
    };
    let purpose = crate::lock::Purpose::new(&req.target, Some(outline.rounds_s.round() as u64))
        .with_live(live.as_ref().and_then(|l| l.page_url()));
    let session = Session::begin(purpose, req.wait, req.quiet, interrupt).await?;
    let interrupt = session.interrupt.clone();
    sweep_leftovers(&req, &prepared).await?;
    let mut env = docker_env(&req, &prepared).await;
    env.live = live.as_ref().map(|l| l.feed.clone());
    let summary = run_rounds(&req, &env, &interrupt).await?;
    drop(session);
    if let Some(live) = live {
        let report = summary
            .rounds
            .last()
            .map(|r| crate::rundir::Layout::new(&r.dir).report_html());
        let shown = report
            .filter(|p| p.is_file())
            .map(|_| crate::rundir::layout::REPORT_HTML);
        let mut stop = interrupt.clone();
        live.finish(shown, async move {
            stop.wait().await;
        })
        .await;
    }
    Ok(summary)
}

/// What the run will do and about how long each part takes here, said up front (unless
/// quiet); its rounds' total is what the lock's queue is told.
pub(crate) async fn tell_outline(req: &RunRequest) -> outline::Outline {
    let missing = match Docker::connect().await {
        Ok(d) => images::missing(&d, req.suite).await.ok(),
        Err(_) => None,
    };
    let images = missing.map(|m| (req.suite.as_str(), m.len()));
    let now = chrono::Utc::now();
    let queue = crate::lock::queue::status(&crate::lock::lock_path(), now);
    let profile = outline::Profile {
        rounds: req.rounds,
        quick: req.resolved.iter().any(|r| r.plan.quick.is_some()),
        fit: req.fit,
        refine: req.refine.is_some(),
        align: req.align,
    };
    let notes = outline::host_notes(&req.layout.caveats, &req.resolved, req.fit);
    let o = outline::outline(
        &req.resolved,
        profile,
        &req.out_root,
        images,
        &queue,
        now,
        notes,
    );
    if !req.quiet {
        crate::say!("{}", o.render(&req.target).trim_end());
    }
    o
}

/// One round of the resolved experiment `r` on a fresh stack: the published steps (with the
/// paused contrast of an experiment with `load.pause`), with `--refine`'s probes or `--fit`'s
/// calibration when asked; `tag` records the comparison batch the round belongs to in its
/// manifest.
pub(crate) async fn run_one(
    req: &RunRequest,
    env: &DockerEnv<'_>,
    r: &Resolved,
    round: u32,
    interrupt: &Interrupt,
    (tag, twin): (Option<CompareTag>, Option<&Twin<'_>>),
) -> Result<RoundOutcome> {
    let spec = RoundSpec {
        experiment: &r.experiment,
        plan: &r.plan,
        round,
        out_root: &req.out_root,
        overrides: &req.overrides,
        layout: &req.layout,
        quiet: req.quiet,
        name: req.run_name.as_ref(),
        twin,
    };
    let mut engine = DockerEngine::new(env);
    let steps = Stepped {
        plan: r.plan.clone(),
        align: req.align,
    };
    let fitted = req.fit && r.experiment.fit.is_some();
    Ok(match req.refine {
        _ if r.experiment.load.pause.is_some() => {
            let m = PauseContrast {
                steps,
                experiment: r.experiment.clone(),
                quick: r.plan.quick.is_some(),
            };
            let mut m = Tagged { inner: m, tag };
            crate::session::run_round(&mut engine, &spec, &mut m, interrupt).await?
        }
        _ if fitted => {
            let m = Fitted {
                experiment: r.experiment.clone(),
                align: req.align,
                quick: r.plan.quick.is_some(),
                refine: req.refine.is_some(),
                judge: Analysis,
                lent: twin_fit::lent(
                    &req.out_root,
                    &r.experiment,
                    req.suite.as_str(),
                    &req.layout,
                )?,
            };
            let mut m = Tagged { inner: m, tag };
            crate::session::run_round(&mut engine, &spec, &mut m, interrupt).await?
        }
        None => {
            let mut m = Tagged { inner: steps, tag };
            crate::session::run_round(&mut engine, &spec, &mut m, interrupt).await?
        }
        Some(f) => {
            let m = Refine {
                steps,
                experiment: r.experiment.clone(),
                quick: f.quick,
                judge: Analysis,
            };
            let mut m = Tagged { inner: m, tag };
            crate::session::run_round(&mut engine, &spec, &mut m, interrupt).await?
        }
    })
}

/// `2a             r1 complete  last passing 125; ...  out/2a/...`: how a round ended.
pub(crate) fn round_line(experiment_id: &str, round: u32, o: &RoundOutcome) -> String {
    format!(
        "{:<14} r{round} {:<9} {}  {}",
        experiment_id,
        state_word(o.state),
        o.verdict.as_deref().or(o.reason.as_deref()).unwrap_or(""),
        o.dir.display()
    )
}

/// Every experiment of the target, each round on a fresh stack; stops at the first round that
/// was interrupted or whose harness failed.
async fn run_rounds(
    req: &RunRequest,
    env: &DockerEnv<'_>,
    interrupt: &Interrupt,
) -> Result<RunSummary> {
    let mut summary = RunSummary {
        rounds: Vec::new(),
        interrupted: false,
        harness_failed: false,
    };
    for r in &req.resolved {
        for round in 1..=req.rounds {
            // a cell another attempt completed while this one waited for the lock runs no more
            if let Some(n) = &req.run_name
                && let Some(done) = complete_cell(&req.out_root, &r.experiment.id, n)
            {
                crate::out!(
                    "{:<14} {n} already complete  {}",
                    r.experiment.id,
                    done.display()
                );
                continue;
            }
            let round = req.run_name.as_ref().map_or(round, |n| n.round);
            let o = run_one(req, env, r, round, interrupt, (None, None)).await?;
            crate::out!("{}", round_line(&r.experiment.id, round, &o));
            record_finished(&r.experiment.id, &o);
            crate::html::index::rebuild_after_round(&req.out_root);
            let state = o.state;
            summary.rounds.push(o);
            match state {
                RunState::Aborted => {
                    summary.interrupted = true;
                    return Ok(summary);
                }
                RunState::Failed => {
                    summary.harness_failed = true;
                    return Ok(summary);
                }
                // A signal that came once the measurement was whole still ends the command.
                _ if interrupt.reason().is_some() => {
                    summary.interrupted = true;
                    return Ok(summary);
                }
                _ => {}
            }
        }
    }
    Ok(summary)
}

/// The round's end beside the host lock, for the trainer's room (`lock::done`).
fn record_finished(experiment_id: &str, o: &RoundOutcome) {
    let f = crate::lock::done::Finished {
        user: crate::owner::invoking_user(),
        experiment: experiment_id.to_owned(),
        run: o
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        state: state_word(o.state).to_lowercase(),
        // a file of at most 4 KiB is read back: the line is cut well under it
        verdict: (o
            .verdict
            .as_deref()
            .or(o.reason.as_deref())
            .unwrap_or_default())
        .chars()
        .take(1000)
        .collect(),
        ended: chrono::Utc::now(),
    };
    crate::lock::done::record(&crate::lock::lock_path(), &f);
}

/// The directory of the complete attempt of cell `name` of `experiment_id`, if any.
pub(crate) fn complete_cell(
    out_root: &std::path::Path,
    experiment_id: &str,
    name: &crate::rundir::cell::CellName,
) -> Option<PathBuf> {
    match crate::rundir::cell::cell_state(out_root, experiment_id, &name.to_string()) {
        crate::rundir::cell::CellState::Complete { dir, .. } => Some(dir),
        _ => None,
    }
}

/// An engine other than the local default, checked before anything runs.
struct CheckedEngine {
    docker: Docker,
    facts: crate::docker::EngineFacts,
    images: images::ImageSet,
    clock: crate::docker::ClockOffset,
}

/// Connect to `ep` (given as `--host <flag>=…`) and check it: reachable, Docker version, CPUs
/// holding `cpus`, cgroup version, images present (built there when missing), clock offset
/// against ours (a warning above 10 ms).
async fn open_engine(
    ep: &crate::docker::Endpoint,
    flag: &str,
    cpus: &[u32],
    req: &RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
    interrupt: &Interrupt,
) -> Result<CheckedEngine> {
    let d = Docker::connect_to(ep)
        .await
        .with_context(|| format!("connecting to the engine of --host {flag}={ep}"))?;
    let facts = d
        .facts()
        .await
        .with_context(|| format!("checking the engine at {ep}"))?;
    if let (Some(n), Some(max)) = (facts.ncpu, cpus.iter().max())
        && i64::from(*max) >= n
    {
        return Err(crate::error::InvalidInput(format!(
            "--host {flag}={ep}: that engine has {n} CPUs (0-{}), but the CPU layout uses cpu {max} there; pin within them with --cpus (e.g. --cpus loadgen=0,db=0,app=1)",
            n - 1
        ))
        .into());
    }
    if !req.quiet {
        crate::say!(
            "engine {ep} ({flag}): Docker {}, {} CPUs, cgroup v{}, {}",
            facts.server_version.as_deref().unwrap_or("?"),
            facts.ncpu.unwrap_or(0),
            facts.cgroup_version.as_deref().unwrap_or("?"),
            facts.os.as_deref().unwrap_or("?")
        );
    }
    let set = images::ensure_built_until(&d, req.suite, progress_build, interrupt)
        .await
        .with_context(|| format!("images on the engine {ep}"))?;
    let clock = d
        .clock_offset(7)
        .await
        .with_context(|| format!("measuring the clock of {ep}"))?;
    if !req.quiet && clock.offset_ms.abs() > 10.0 {
        crate::say!(
            "warning: the clock of {ep} is {:+.1} ms off this machine's (goal within 10 ms): start gates are corrected by it, timestamps written there are not; sync both with NTP/chrony",
            clock.offset_ms
        );
    }
    Ok(CheckedEngine {
        docker: d,
        facts,
        images: set,
        clock,
    })
}

/// The stack's engine (database and app): the local default, or the `--host app=`/`db=` one.
async fn prepare_stack(
    req: &RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
    interrupt: &Interrupt,
) -> Result<(Docker, images::ImageSet)> {
    if req.placement.app == crate::docker::Endpoint::Local {
        let docker = Docker::connect().await?;
        let set = images::ensure_built_until(&docker, req.suite, progress_build, interrupt).await?;
        return Ok((docker, set));
    }
    let mut cpus = Vec::new();
    for r in [
        crate::plan::Slot::Db,
        crate::plan::Slot::App,
        crate::plan::Slot::Loadgen,
    ] {
        cpus.extend_from_slice(req.layout.get(r).cpus());
    }
    let e = open_engine(
        &req.placement.app,
        "app",
        &cpus,
        req,
        progress_build,
        interrupt,
    )
    .await?;
    Ok((e.docker, e.images))
}

/// The load generators' engine: the stack's, or another endpoint (checked like the stack's).
async fn prepare_loadgen(
    stack: &Docker,
    stack_images: &images::ImageSet,
    req: &RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
    interrupt: &Interrupt,
) -> Result<generators::LoadgenEngine> {
    if !req.placement.loadgen_remote() {
        return Ok(generators::LoadgenEngine {
            docker: stack.clone(),
            remote: false,
            off_host: *stack.endpoint() != crate::docker::Endpoint::Local,
            images: stack_images.clone(),
            facts: stack.facts().await.ok(),
            clock: stack.clock_offset(5).await.ok(),
            dashboard: req.k6_dashboard,
        });
    }
    let ep = &req.placement.loadgen;
    let cpus = req.layout.get(crate::plan::Slot::Loadgen).cpus().to_vec();
    let e = open_engine(ep, "loadgen", &cpus, req, progress_build, interrupt).await?;
    Ok(generators::LoadgenEngine {
        docker: e.docker,
        remote: true,
        off_host: *ep != crate::docker::Endpoint::Local,
        images: e.images,
        facts: Some(e.facts),
        clock: Some(e.clock),
        dashboard: req.k6_dashboard,
    })
}

fn state_word(s: RunState) -> &'static str {
    match s {
        RunState::Running => "running",
        RunState::Complete => "complete",
        RunState::Failed => "FAILED",
        RunState::Aborted => "aborted",
    }
}
