//! CLI commands for the lab area: `build`, `up`, `down`, `cleanup`, `smoke`, `status`: their
//! flags, and what they print. The stack's life (the host lock, Ctrl-C, what is removed) is
//! `run::lifecycle`'s, the images' build `run::build`'s, their text `run::stack_text`'s.
use crate::experiment::Experiment;
use crate::images::Suite;
use crate::run::lifecycle::{self, StackRequest};
use crate::run::stack_text as text;
use crate::stack::Pinning;
use anyhow::Result;
use clap::Args;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Debian suite, or `all` (every suite, one after the other: prepare a workshop host
    /// before the participants arrive).
    #[arg(long, default_value = "trixie", value_parser = super::catalog::suites(true))]
    pub suite: String,
    /// Print the image set (tags, ids, sizes, versions) as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Ask Debian for newer packages in the existing images; rebuild only those with some.
    #[arg(long)]
    pub refresh: bool,
}

pub(crate) fn build(args: BuildArgs, quiet: bool) -> Result<ExitCode> {
    crate::run::build::build(&args.suite, args.json, quiet, args.refresh)
}

/// Options shared by `up` and `smoke`.
#[derive(Debug, Args)]
pub struct StackArgs {
    /// A lab (the registry's: the article's default settings) or a catalog experiment id
    #[arg(value_name = "LAB|EXPERIMENT", help = format!(
        "A lab ({}: the article's default settings) or a catalog experiment id (exp3-n5, 1c, ...: \
         that experiment's stack settings)",
        crate::lab::Lab::ALL.map(crate::lab::Lab::as_str).join(", ")
    ))]
    pub lab: String,
    /// Debian suite of the images.
    #[arg(long, default_value = "trixie", value_parser = super::catalog::suites(false))]
    pub suite: String,
    /// Take the stack settings from this experiment file (its lab must match LAB).
    #[arg(long, value_name = "FILE")]
    pub experiment: Option<std::path::PathBuf>,
    /// Override a setting (repeatable), as `perflab run` takes it: `max_children=5`,
    /// `stack.php.listen=unix`, `php.max_children=5`, `node.processes=2`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// CPU pinning, e.g. `loadgen=0,db=1,app=2-3` [default: from the host's online CPUs].
    #[arg(long, value_name = "ROLE=CPUS,...")]
    pub cpus: Option<String>,
    /// Allow the app's CPUs to overlap the load generator's or the database's.
    #[arg(long)]
    pub force_cpus: bool,
    #[command(flatten)]
    pub catalog: super::catalog::CatalogArg,
}

impl StackArgs {
    fn resolve(&self) -> Result<(Experiment, Pinning, Suite)> {
        let req = StackRequest {
            lab: &self.lab,
            suite: &self.suite,
            file: self.experiment.as_deref(),
            set: &self.set,
            cpus: self.cpus.as_deref(),
            force_cpus: self.force_cpus,
        };
        req.resolve(|| self.catalog.load())
    }
}

#[derive(Debug, Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// Also publish the entry point on this fixed port (bound to 127.0.0.1 only).
    #[arg(long, value_name = "PORT")]
    pub publish: Option<u16>,
}

pub(crate) fn up(args: UpArgs, quiet: bool) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    let up = lifecycle::up(&exp, &pinning, suite, args.publish, quiet);
    match lifecycle::runtime()?.block_on(up)? {
        Ok(s) => crate::output::emit(&text::stack(&s)),
        Err(code) => return Ok(code),
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct DownArgs {
    /// Run id printed by `perflab up` (default: every stack you started with `up`).
    pub run_id: Option<String>,
    /// Also other users' stacks (a shared host: without it `down` touches only yours).
    #[arg(long)]
    pub all: bool,
}

pub(crate) fn down(args: DownArgs) -> Result<ExitCode> {
    lifecycle::runtime()?.block_on(lifecycle::down(args.run_id.as_deref(), args.all))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct CleanupArgs {
    /// List what would be removed, remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Only the objects of this run id (default: every perflab stack whose owner is gone; a
    /// live perflab's and another host's are listed, never removed).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also other users' stacks whose owner is gone or that they kept (a shared host: without
    /// it `cleanup` removes only yours; a live perflab's objects are never removed).
    #[arg(long)]
    pub all: bool,
}

pub(crate) fn cleanup(args: CleanupArgs) -> Result<ExitCode> {
    lifecycle::runtime()?.block_on(lifecycle::cleanup(
        args.dry_run,
        args.run.as_deref(),
        args.all,
    ))?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct SmokeArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// Leave the stack running afterwards (remove it with `perflab down <run id>`).
    #[arg(long)]
    pub keep: bool,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn smoke(args: SmokeArgs, quiet: bool) -> Result<ExitCode> {
    let (exp, pinning, suite) = args.stack.resolve()?;
    let smoked = lifecycle::runtime()?
        .block_on(lifecycle::smoke(&exp, &pinning, suite, args.keep, quiet))?;
    let (report, s) = match smoked {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    text::print_smoke(&report, args.json, args.keep.then_some(&s))?;
    Ok(text::smoke_verdict(&report, exp.lab, suite))
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print `{"lock": {...}, "stacks": [...]}` as JSON on stdout
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub room: crate::live::args::RoomArgs,
}

pub(crate) fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    if let Some(o) = a.room.options()? {
        crate::live::serve_room(&o)?;
        return Ok(ExitCode::SUCCESS);
    }
    crate::output::emit(&crate::run::status::render(a.json)?);
    Ok(ExitCode::SUCCESS)
}
