//! `perflab run`: validate and plan, build missing images, take the host lock, sweep leftovers
//! of killed runs, then run every experiment of the target (a group runs its members in order)
//! for each round on a fresh stack, and print each round's verdict.
pub mod progress;
pub mod round;
pub mod signals;
pub mod sweep;

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::cli::catalog::Resolved;
use crate::docker::Docker;
use crate::images::{self, Suite};
use crate::lock::{self, Wait};
use crate::plan::CpuLayout;
use crate::rundir::RunState;
use round::{RoundEnv, RoundOutcome};
use signals::Interrupt;

/// A validated, planned request (nothing has been started yet).
pub struct RunRequest {
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
}

/// How the whole command ended.
#[derive(Debug)]
pub struct RunSummary {
    pub rounds: Vec<RoundOutcome>,
    pub interrupted: bool,
    pub harness_failed: bool,
}

/// Execute a request. Image builds happen before the lock (they do not disturb measurements
/// of another lab much less than waiting would); everything that measures holds the lock.
pub async fn execute(
    req: RunRequest,
    progress_build: &mut (dyn FnMut(images::BuildProgress) + Send),
) -> Result<RunSummary> {
    let interrupt = Interrupt::install().context("installing signal handlers")?;
    let docker = Docker::connect().await?;
    let set = images::ensure_built(&docker, req.suite, progress_build).await?;

    let quiet = req.quiet;
    let held = acquire_lock(&req.target, req.wait, quiet, &interrupt).await?;

    let swept = sweep::sweep(&docker, &req.out_root, &BTreeSet::new()).await?;
    if !quiet && (swept.removed_objects > 0 || !swept.aborted_dirs.is_empty()) {
        eprintln!(
            "swept leftovers of killed runs: {} Docker objects of {} run(s) removed, {} run folder(s) marked aborted",
            swept.removed_objects,
            swept.removed_runs.len(),
            swept.aborted_dirs.len()
        );
    }

    let env = RoundEnv {
        docker: &docker,
        images: &set,
        layout: &req.layout,
        out_root: &req.out_root,
        overrides: &req.overrides,
        align: req.align,
        quiet,
        no_samplers: req.no_samplers,
        interrupt: interrupt.clone(),
        repo_root: images::recipe::repo_root(),
    };
    let mut summary = RunSummary {
        rounds: Vec::new(),
        interrupted: false,
        harness_failed: false,
    };
    'outer: for r in &req.resolved {
        for round in 1..=req.rounds {
            let o = round::run_round(&env, r, round).await?;
            println!(
                "{:<14} r{round} {:<9} {}  {}",
                r.experiment.id,
                state_word(o.state),
                o.verdict.as_deref().or(o.reason.as_deref()).unwrap_or(""),
                o.dir.display()
            );
            let state = o.state;
            summary.rounds.push(o);
            match state {
                RunState::Aborted => {
                    summary.interrupted = true;
                    break 'outer;
                }
                RunState::Failed => {
                    summary.harness_failed = true;
                    break 'outer;
                }
                _ => {}
            }
        }
    }
    drop(held);
    Ok(summary)
}

/// Take the host lock for `target` (printing "waiting for ..." unless quiet), giving up when
/// a signal arrives first (nothing has been started then).
pub async fn acquire_lock(
    target: &str,
    wait: Wait,
    quiet: bool,
    interrupt: &Interrupt,
) -> Result<lock::HostLock> {
    let lock_path = lock::lock_path();
    let mut waiting = {
        let target = target.to_string();
        let path = lock_path.clone();
        tokio::task::spawn_blocking(move || {
            lock::acquire(&path, &target, wait, |h| {
                if !quiet {
                    eprintln!("{}", lock::waiting_message(h));
                }
            })
        })
    };
    let mut i = interrupt.clone();
    tokio::select! {
        r = &mut waiting => Ok(r.context("waiting for the host lock")?.with_context(|| format!("taking the host lock {}", lock_path.display()))?),
        sig = i.wait() => {
            waiting.abort();
            anyhow::bail!("interrupted by {sig} while waiting for the host lock; nothing was started");
        }
    }
}

fn state_word(s: RunState) -> &'static str {
    match s {
        RunState::Running => "running",
        RunState::Complete => "complete",
        RunState::Failed => "FAILED",
        RunState::Aborted => "aborted",
    }
}
