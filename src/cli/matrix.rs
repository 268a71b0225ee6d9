//! `perflab matrix plan|run|status`: arguments and output; the checks (bad input: exit 2,
//! nothing started) and the work are `crate::matrix`'s (`matrix::run`).
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::catalog::{CatalogArg, PlanArgs};
use crate::matrix::{self, Flags};

#[derive(Debug, Args)]
pub struct MatrixArgs {
    #[command(subcommand)]
    pub command: MatrixCommand,
}

#[derive(Debug, Subcommand)]
pub enum MatrixCommand {
    /// Write the job list of TARGETS x --suites x --rounds: one `perflab run` command per cell
    /// not complete under --out yet
    #[command(
        after_help = "Example:\n  perflab matrix plan php node --suites trixie,forky --rounds 3 --plan out/forky.plan --quick"
    )]
    Plan(PlanCmd),
    /// Run a plan's cells: here one at a time (--local), over ssh with GNU parallel (--hosts),
    /// or as a Slurm job array (--slurm)
    #[command(after_help = "Example:\n  perflab matrix run out/forky.plan --hosts hosts.txt")]
    Run(RunCmd),
    /// Each cell of a plan: done, running, failed or remaining, and its host
    #[command(after_help = "Example:\n  perflab matrix status out/forky.plan")]
    Status(StatusCmd),
}

#[derive(Debug, Args)]
pub struct PlanCmd {
    /// Experiment or group ids (`perflab list`), space- or comma-separated
    #[arg(required = true, num_args = 1..)]
    pub targets: Vec<String>,
    /// Debian suites, comma-separated: trixie, forky, bookworm
    #[arg(long, default_value = "trixie")]
    pub suites: String,
    /// Rounds per experiment and suite (complete ones under --out count)
    #[arg(long, default_value_t = 1)]
    pub rounds: u32,
    /// The plan file to write
    #[arg(long, value_name = "FILE")]
    pub plan: PathBuf,
    /// The out/ root whose complete rounds are skipped
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: PathBuf,
    /// Calibrate and fit each cell to its host (experiments with a `fit:` section), as `run --fit`
    #[arg(long)]
    pub fit: bool,
    #[command(flatten)]
    pub flags: PlanArgs,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

#[derive(Debug, Args)]
pub struct RunCmd {
    /// The plan file (`perflab matrix plan --plan FILE`)
    pub plan: PathBuf,
    /// The out/ root the cells' run directories go to (one index.html over them)
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: PathBuf,
    /// Run the cells on this host, one at a time under the host lock
    #[arg(long, conflicts_with_all = ["hosts", "slurm"])]
    pub local: bool,
    /// GNU parallel over ssh: one ssh login a line; one cell per host at a time, run
    /// directories copied back
    #[arg(long, value_name = "FILE", conflicts_with = "slurm")]
    pub hosts: Option<PathBuf>,
    /// Write an sbatch job-array script (one --exclusive task per cell, into the shared --out)
    #[arg(long)]
    pub slurm: bool,
    /// With --slurm: submit the script with sbatch
    #[arg(long, requires = "slurm")]
    pub submit: bool,
    /// The perflab program the cells run [default: this one; with --hosts: `perflab` on the hosts' PATH]
    #[arg(long, value_name = "PATH")]
    pub perflab: Option<String>,
    /// With --hosts: the folder under each login's home the cells run in
    #[arg(long, default_value = "perflab-matrix", value_name = "DIR")]
    pub remote_dir: String,
}

#[derive(Debug, Args)]
pub struct StatusCmd {
    /// The plan file
    pub plan: PathBuf,
    /// The out/ root the cells go to
    #[arg(long, default_value = "out", env = "PERFLAB_OUT")]
    pub out: PathBuf,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn matrix(a: MatrixArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    match a.command {
        MatrixCommand::Plan(p) => plan(p, quiet),
        MatrixCommand::Run(r) => run(r, quiet),
        MatrixCommand::Status(s) => show_status(s),
    }
}

fn plan(p: PlanCmd, quiet: bool) -> anyhow::Result<ExitCode> {
    let catalog = p.catalog.load()?;
    let req = matrix::plan::Request {
        targets: matrix::plan::split_targets(&p.targets),
        suites: matrix::plan::parse_suites(&p.suites)?,
        rounds: p.rounds,
        flags: Flags::of(&p.flags.planning(&p.catalog), p.fit),
        out: p.out.clone(),
        made_by: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
    };
    matrix::run::write_plan(&req, &catalog, &p.plan, quiet)?;
    crate::out!("{}", p.plan.display());
    Ok(ExitCode::SUCCESS)
}

fn run(r: RunCmd, quiet: bool) -> anyhow::Result<ExitCode> {
    matrix::run::run(&matrix::run::RunInput {
        plan: r.plan,
        out: r.out,
        local: r.local,
        hosts: r.hosts,
        slurm: r.slurm,
        submit: r.submit,
        perflab: r.perflab,
        remote_dir: r.remote_dir,
        quiet,
    })
}

fn show_status(s: StatusCmd) -> anyhow::Result<ExitCode> {
    crate::output::emit(&matrix::run::plan_status(&s.plan, &s.out, s.json)?);
    Ok(ExitCode::SUCCESS)
}
