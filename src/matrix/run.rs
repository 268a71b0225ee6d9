//! `perflab matrix plan|run|status` past their arguments: the plan written (its cells, the
//! complete ones skipped), a plan's cells handed to a runner (here, GNU parallel over ssh, or
//! a Slurm job array) and the out/ root's index and the plan's status after them, and the
//! plan's status on its own. Bad input (exit 2) is found before anything starts.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::{Plan, hosts, planfile, status};
use crate::error::invalid;
use crate::experiment::Catalog;

/// `perflab matrix plan`: plan the cells of `req` not complete under its out/ root and write
/// them to `plan_file` (the layout flags checked as `run` checks them).
pub(crate) fn write_plan(
    req: &super::plan::Request,
    catalog: &Catalog,
    plan_file: &Path,
    quiet: bool,
) -> anyhow::Result<()> {
    crate::run::resolve::layout(req.flags.cpus.as_deref(), req.flags.force_cpus)?;
    let mut skipped_runs = Vec::new();
    let plan = super::plan::build(req, catalog, chrono::Utc::now(), &mut skipped_runs)?;
    plan_path(plan_file)?;
    crate::rundir::output_path::write_file(
        "--plan",
        plan_file,
        planfile::render(&plan).as_bytes(),
    )?;
    if !quiet {
        for s in &skipped_runs {
            crate::say!("skipped {s}");
        }
        crate::say!(
            "plan {}: {} cell(s) to run, {} already complete under {} skipped",
            plan.id_str(),
            plan.cells.len(),
            plan.skipped,
            req.out.display()
        );
    }
    Ok(())
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
fn open(plan_file: &Path, out: &Path) -> anyhow::Result<(Plan, PathBuf)> {
    let plan_file = &plan_path(plan_file)?;
    let plan = planfile::read(plan_file)?;
    let catalog = crate::run::resolve::catalog(&crate::experiment::catalog::default_dir())?;
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
    let work = super::work_dir(plan_file, &plan);
    Ok((plan, work))
}

/// `perflab matrix run`'s input as given.
pub(crate) struct RunInput {
    pub plan: PathBuf,
    pub out: PathBuf,
    pub local: bool,
    pub hosts: Option<PathBuf>,
    pub slurm: bool,
    pub submit: bool,
    pub perflab: Option<String>,
    pub remote_dir: String,
    pub quiet: bool,
}

/// `perflab matrix run`: the plan's cells on the runner asked for, then the out/ root's
/// index and the plan's status; exit 1 when a cell failed or is left, 130 when interrupted.
pub(crate) fn run(r: &RunInput) -> anyhow::Result<ExitCode> {
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
    if hosts.is_none() && r.slurm {
        return slurm(r, &plan, &work, &out);
    }
    status::mark_controller(&work)?;
    let code = match &hosts {
        Some(h) => over_ssh(r, &plan, &work, &out, h)?,
        None => {
            let here = std::env::current_exe()?.display().to_string();
            let program = PathBuf::from(r.perflab.clone().unwrap_or(here));
            let s = super::local::run(&plan, &program, &out, r.quiet)?;
            if s.interrupted {
                130
            } else {
                i32::from(s.ran.iter().any(|c| c.exit != Some(0)))
            }
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

/// GNU parallel over ssh, then the cells' run directories collected into `out`: parallel's
/// exit code.
fn over_ssh(
    r: &RunInput,
    plan: &Plan,
    work: &Path,
    out: &Path,
    hosts: &[String],
) -> anyhow::Result<i32> {
    let program = r.perflab.clone().unwrap_or_else(|| "perflab".into());
    let h = hosts::HostsRun {
        plan,
        work,
        out,
        hosts,
        program: &program,
        remote_dir: &r.remote_dir,
    };
    let code = hosts::run(&h)?;
    let moved = super::collect::collect(plan, work, out, &r.remote_dir)?;
    if !r.quiet {
        crate::say!(
            "matrix: parallel exit {code}; {} cell(s) collected into {}",
            moved.len(),
            out.display()
        );
    }
    Ok(code)
}

/// The sbatch script written (its path on stdout), and submitted with `--submit`.
fn slurm(r: &RunInput, plan: &Plan, work: &Path, out: &Path) -> anyhow::Result<ExitCode> {
    let here = std::env::current_exe()?.display().to_string();
    let program = r.perflab.clone().unwrap_or(here);
    let (text, n) = super::slurm::script(plan, out, &program);
    let path = work.join("matrix.sbatch");
    crate::atomic::write_atomic(&path, text.as_bytes())?;
    crate::out!("{}", path.display());
    if n == 0 {
        crate::say!("matrix: every cell is complete; nothing to submit");
    } else if r.submit {
        let id = super::slurm::submit(&path, work)?;
        crate::say!(
            "matrix: submitted job array {id} ({n} task(s)); `perflab matrix status {}` follows it",
            r.plan.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `perflab matrix status`: where each cell of the plan stands, as text or JSON.
pub(crate) fn plan_status(plan_file: &Path, out: &Path, json: bool) -> anyhow::Result<String> {
    let plan_file = plan_path(plan_file)?;
    let plan = planfile::read(&plan_file)?;
    let work = super::work_dir(&plan_file, &plan);
    let st = status::status(&plan, &status::Where { work: &work, out });
    Ok(if json {
        serde_json::to_string_pretty(&st)? + "\n"
    } else {
        status::render(&st)
    })
}
