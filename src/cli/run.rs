//! `perflab run` arguments; `run::resolve` checks and plans them first (exit 2 on bad input,
//! nothing started), then `crate::run` runs.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::catalog::{CatalogArg, PlanArgs};
use crate::run::resolve::{self, Checked, RunInput};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Experiment or group id (`perflab list`)
    pub target: String,
    /// Rounds per experiment (r1..rN), each on a fresh stack
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// Debian suite of the images
    #[arg(long, default_value = "trixie", value_parser = super::catalog::suites(false))]
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
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

pub(crate) fn run(a: RunArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    let input = RunInput {
        target: a.target.clone(),
        rounds: a.rounds,
        suite: a.suite,
        no_wait: a.no_wait,
        no_samplers: a.no_samplers,
        out: a.out,
        generators: a.generators,
        hosts: a.hosts,
        publish_on: a.publish_on,
        refine: a.refine,
        fit: a.fit,
        k6_dashboard: a.k6_dashboard,
        run_name: a.run_name,
        planning: a.plan.planning(&a.catalog),
        live: a.live.options()?,
    };
    match resolve::run_request(input, quiet)? {
        Checked::Complete(n, done) => {
            crate::out!("{:<14} {n} already complete  {}", a.target, done.display());
            Ok(ExitCode::SUCCESS)
        }
        Checked::Run(req) => crate::run::execute_blocking(*req),
    }
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
