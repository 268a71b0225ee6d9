//! `perflab run` arguments: validate and plan first (exit 2 on bad input, nothing started),
//! then hand over to `crate::run`.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::catalog::{CatalogArg, PlanArgs};
use crate::images::Suite;
use crate::lock::Wait;
use crate::run::{self, RunRequest};
use crate::rundir::cell::CellName;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment or group id (`perflab list`)
    pub target: String,
    /// Rounds per experiment (r1..rN), each on a fresh stack
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// Debian suite of the images
    #[arg(long, default_value = "trixie", value_parser = super::suite::values(false))]
    pub suite: String,
    /// Fail at once when another perflab run holds the host lock
    #[arg(long)]
    pub no_wait: bool,
    /// Sample only the host (CPU, PSI, dockerd), not the containers: for the sampler-overhead benchmark
    #[arg(long)]
    pub no_samplers: bool,
    /// Where run directories go
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: PathBuf,
    /// Load generators: N k6 processes splitting the schedule with execution segments, started on the same aligned instant
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub generators: u32,
    /// Place a role on another Docker engine: loadgen=tcp://HOST:PORT | unix:///PATH | ssh://USER@HOST | CONTEXT (repeatable)
    #[arg(long = "host", value_name = "ROLE=ENDPOINT")]
    pub hosts: Vec<String>,
    /// Address the app's entry point is published on for a generator on another engine [default: 127.0.0.1]
    #[arg(long, value_name = "IP")]
    pub publish_on: Option<String>,
    /// After the steps, probe the same stack to find the max sustainable rate within 5 %
    #[arg(long)]
    pub refine: bool,
    /// Calibrate on the stack first, then fit the published numbers to this host by the experiment's `fit:` rules (`perflab show EXP --fit`)
    #[arg(long)]
    pub fit: bool,
    /// Also save k6's own web dashboard as k6/dashboard.html (one per generator); off by default (its CPU cost: docs/methodology.md)
    #[arg(long)]
    pub k6_dashboard: bool,
    /// Run one round as a matrix cell into out/<experiment>/NAME (<UTC stamp>-r<round>-<label>;
    /// NAME-2, ... after a failed attempt); a cell already complete there runs nothing (exit 0)
    #[arg(long, value_name = "NAME")]
    pub run_name: Option<String>,
    #[command(flatten)]
    pub plan: PlanArgs,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

/// `--run-name NAME`: a cell name, for one round of one experiment.
fn check_run_name(
    a: &RunArgs,
    resolved: &[crate::plan::Resolved],
) -> anyhow::Result<Option<CellName>> {
    let Some(name) = &a.run_name else {
        return Ok(None);
    };
    let bad = |m: String| crate::error::invalid(format!("--run-name: {m}"));
    let n = CellName::parse(name).map_err(bad)?;
    if resolved.len() != 1 || a.rounds != 1 {
        return Err(bad(format!(
            "{name} names one round of one experiment, but {} runs {} experiment(s) x {} round(s); give one experiment and no --rounds (the round is the name's r{})",
            a.target,
            resolved.len(),
            a.rounds,
            n.round
        )));
    }
    Ok(Some(n))
}

pub(crate) fn run(a: RunArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    // Everything that can be wrong with the input is found before anything starts, the
    // target first (the first real problem), then the flags.
    let catalog = a.catalog.load()?;
    let resolved = a.plan.resolve(&catalog, &a.target)?;
    if a.rounds == 0 {
        return Err(crate::error::InvalidInput("--rounds 0: give at least 1 round".into()).into());
    }
    let suite: Suite = a.suite.parse()?;
    let generators =
        crate::load::segments::check_count(a.generators).map_err(crate::error::InvalidInput)?;
    let placement = crate::docker::placement::parse(
        &a.hosts,
        a.publish_on.as_deref(),
        &crate::docker::endpoint::default_contexts_dir(),
    )?;
    let layout = a.plan.layout()?;
    if a.fit {
        crate::run::resolve::check_fittable(&a.target, &resolved, quiet)?;
    }
    let run_name = check_run_name(&a, &resolved)?;
    if let Some(n) = &run_name
        && let Some(done) = run::complete_cell(&a.out, &resolved[0].experiment.id, n)
    {
        crate::out!("{:<14} {n} already complete  {}", a.target, done.display());
        return Ok(ExitCode::SUCCESS);
    }
    // last of the checks: it creates the directory, which bad input elsewhere must not leave
    crate::run::resolve::check_out_root(&a.out)?;
    // out/<experiment>/ of each, where it exists: a real directory, never a link out of --out
    for r in &resolved {
        crate::atomic::check_dirs_under(&a.out, &[&r.experiment.id])?;
    }
    for r in &resolved {
        for w in &r.warnings {
            if !quiet {
                crate::say!("{w}");
            }
        }
    }
    let req = RunRequest {
        target: a.target.clone(),
        resolved,
        overrides: a.plan.set.clone(),
        layout,
        rounds: a.rounds,
        suite,
        align: !a.plan.no_align,
        wait: if a.no_wait { Wait::NoWait } else { Wait::Block },
        out_root: a.out.clone(),
        quiet,
        no_samplers: a.no_samplers,
        generators,
        placement,
        refine: a.refine.then_some(crate::run::Refining {
            quick: a.plan.quick,
        }),
        fit: a.fit,
        k6_dashboard: a.k6_dashboard,
        run_name: run_name.clone(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut progress = crate::images::build_progress(quiet);
    let summary = rt.block_on(run::execute(req, &mut progress))?;
    Ok(if summary.interrupted {
        ExitCode::from(130)
    } else if summary.harness_failed {
        ExitCode::from(crate::error::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

/// `perflab sample-agent` (hidden): the sampler that runs in a container on another engine.
#[derive(Debug, Args)]
pub struct SampleAgentArgs {
    /// JSON list of {role, name, pid} to sample
    #[arg(long)]
    pub targets: PathBuf,
    /// Sampling period in milliseconds
    #[arg(long, default_value_t = 1000)]
    pub period_ms: u64,
}

pub(crate) fn sample_agent(a: SampleAgentArgs) -> anyhow::Result<ExitCode> {
    crate::sample::agent::run(&a.targets, std::time::Duration::from_millis(a.period_ms))?;
    Ok(ExitCode::SUCCESS)
}
