//! `perflab matrix plan|run|status`: arguments, checks (bad input: exit 2, nothing started)
//! and output; the work is `crate::matrix`'s.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::catalog::{CatalogArg, PlanArgs};
use crate::error::invalid;
use crate::matrix::{self, Flags, hosts, planfile, status};

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
    let targets: Vec<String> = p
        .targets
        .iter()
        .flat_map(|t| t.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    let req = matrix::plan::Request {
        targets: targets.clone(),
        suites: matrix::plan::parse_suites(&p.suites)?,
        rounds: p.rounds,
        flags: Flags {
            quick: p.flags.quick,
            fit: p.fit,
            no_align: p.flags.no_align,
            force_cpus: p.flags.force_cpus,
            cpus: p.flags.cpus.clone(),
            sets: p.flags.set.clone(),
        },
        out: p.out.clone(),
        made_by: std::env::args().skip(1).collect::<Vec<_>>().join(" "),
    };
    // the layout flags are checked as `run` checks them
    p.flags.layout()?;
    let mut skipped_runs = Vec::new();
    let plan = matrix::plan::build(&req, &catalog, chrono::Utc::now(), &mut skipped_runs)?;
    plan_path(&p.plan)?;
    crate::rundir::output_path::write_file("--plan", &p.plan, planfile::render(&plan).as_bytes())?;
    if !quiet {
        for s in &skipped_runs {
            crate::say!("skipped {s}");
        }
        crate::say!(
            "plan {}: {} cell(s) to run, {} already complete under {} skipped",
            plan.id_str(),
            plan.cells.len(),
            plan.skipped,
            p.out.display()
        );
    }
    crate::out!("{}", p.plan.display());
    Ok(ExitCode::SUCCESS)
}

/// A plan file's path as the runners use it: absolute (parallel starts in another folder, and
/// the work folder is beside the plan), and refused with a control character (a newline in a
/// path would end a line of a generated script).
fn plan_path(plan_file: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    if plan_file
        .as_os_str()
        .as_bytes()
        .iter()
        .any(u8::is_ascii_control)
    {
        return Err(invalid(format!(
            "{}: a plan path with a control character (a newline?); move the plan to a plain path",
            plan_file.display().to_string().escape_debug()
        )));
    }
    Ok(std::path::absolute(plan_file)?)
}

/// `--perflab PATH`: a program to run, one word (quoted wherever it goes).
fn check_program(p: &str) -> anyhow::Result<()> {
    if p.is_empty() || p.chars().any(char::is_control) {
        return Err(invalid(format!(
            "--perflab `{}`: give the perflab program's path (one line, not empty), e.g. /usr/local/bin/perflab",
            p.escape_debug()
        )));
    }
    Ok(())
}

/// The plan, its work folder (created), and the out/ root (checked as `run` checks it).
fn open(plan_file: &Path, out: &Path) -> anyhow::Result<(matrix::Plan, PathBuf)> {
    let plan_file = &plan_path(plan_file)?;
    let plan = planfile::read(plan_file)?;
    let catalog = CatalogArg::default().load()?;
    for c in &plan.cells {
        catalog.get(&c.experiment).ok_or_else(|| {
            invalid(format!(
                "{}: cell {}: no experiment `{}` in the catalog (`perflab list`)",
                plan_file.display(),
                c.id(),
                c.experiment
            ))
        })?;
    }
    crate::run::resolve::check_out_root(out)?;
    let work = matrix::work_dir(plan_file, &plan);
    Ok((plan, work))
}

fn run(r: RunCmd, quiet: bool) -> anyhow::Result<ExitCode> {
    if !(r.local || r.hosts.is_some() || r.slurm) {
        return Err(invalid(
            "matrix run: say where the cells run: --local, --hosts FILE or --slurm",
        ));
    }
    let hosts = r.hosts.as_deref().map(hosts::read_hosts).transpose()?;
    hosts::check_remote_dir(&r.remote_dir)?;
    if let Some(p) = &r.perflab {
        check_program(p)?;
    }
    let (plan, work) = open(&r.plan, &r.out)?;
    let out = std::path::absolute(&r.out)?;
    std::fs::create_dir_all(&work)?;
    let here = std::env::current_exe()?.display().to_string();
    let code = if let Some(hosts) = hosts {
        status::mark_controller(&work)?;
        let program = r.perflab.clone().unwrap_or_else(|| "perflab".into());
        let h = hosts::HostsRun {
            plan: &plan,
            work: &work,
            out: &out,
            hosts: &hosts,
            program: &program,
            remote_dir: &r.remote_dir,
        };
        let code = hosts::run(&h)?;
        let moved = matrix::collect::collect(&plan, &work, &out, &r.remote_dir)?;
        if !quiet {
            crate::say!(
                "matrix: parallel exit {code}; {} cell(s) collected into {}",
                moved.len(),
                out.display()
            );
        }
        code
    } else if r.slurm {
        let program = r.perflab.clone().unwrap_or(here);
        let (text, n) = matrix::slurm::script(&plan, &out, &program);
        let path = work.join("matrix.sbatch");
        crate::atomic::write_atomic(&path, text.as_bytes())?;
        crate::out!("{}", path.display());
        if n == 0 {
            crate::say!("matrix: every cell is complete; nothing to submit");
        } else if r.submit {
            let id = matrix::slurm::submit(&path, &work)?;
            crate::say!(
                "matrix: submitted job array {id} ({n} task(s)); `perflab matrix status {}` follows it",
                r.plan.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    } else {
        status::mark_controller(&work)?;
        let program = PathBuf::from(r.perflab.clone().unwrap_or(here));
        let s = matrix::local::run(&plan, &program, &out, quiet)?;
        if s.interrupted {
            130
        } else {
            i32::from(s.ran.iter().any(|c| c.exit != Some(0)))
        }
    };
    crate::html::index::rebuild_after_round(&out);
    let st = status::status(
        &plan,
        &status::Where {
            work: &work,
            out: &out,
        },
    );
    crate::output::emit(&status::render(&st));
    Ok(ExitCode::from(match code {
        130 => 130,
        _ if st.failed > 0 || st.remaining > 0 || st.running > 0 => crate::error::EXIT_FAILURE,
        _ => 0,
    }))
}

fn show_status(s: StatusCmd) -> anyhow::Result<ExitCode> {
    let plan_file = plan_path(&s.plan)?;
    let plan = planfile::read(&plan_file)?;
    let work = matrix::work_dir(&plan_file, &plan);
    let st = status::status(
        &plan,
        &status::Where {
            work: &work,
            out: &s.out,
        },
    );
    if s.json {
        crate::out!("{}", serde_json::to_string_pretty(&st)?);
    } else {
        crate::output::emit(&status::render(&st));
    }
    Ok(ExitCode::SUCCESS)
}
