//! From an experiment or group id and the planning flags to what a run takes: the catalog, its
//! experiments with `--set` applied and planned, and the CPU layout on this host; `perflab
//! run`'s input checked in order, before anything starts (the target first, then the flags,
//! `--out` last: it creates the directory), into a `RunRequest`.
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::experiment::{self, Catalog};
use crate::lock::Wait;
use crate::plan::planning::Planning;
use crate::plan::{self, CpuLayout, PlanOptions, Resolved};
use crate::run::{Refining, RunRequest};
use crate::rundir::cell::CellName;
use crate::verify::quantities::Quantities;

/// The catalog of `dir`; invalid files are bad input (exit 2).
pub(crate) fn catalog(dir: &Path) -> anyhow::Result<Catalog> {
    Catalog::load(dir, &Quantities).map_err(|d| anyhow::Error::new(experiment::invalid(&d)))
}

/// `perflab run`'s input as given, before any check.
pub(crate) struct RunInput {
    pub target: String,
    pub rounds: u32,
    pub suite: String,
    pub no_wait: bool,
    pub no_samplers: bool,
    pub out: PathBuf,
    pub generators: u32,
    pub hosts: Vec<String>,
    pub publish_on: Option<String>,
    pub refine: bool,
    pub fit: bool,
    pub k6_dashboard: bool,
    pub run_name: Option<String>,
    pub planning: Planning,
    /// `--live`, `--prometheus` (checked by `live::args`).
    pub live: Option<crate::live::LiveOptions>,
}

/// What checked input asks for: a run, or nothing (`--run-name` names a complete cell: its
/// directory).
pub(crate) enum Checked {
    Run(Box<RunRequest>),
    Complete(CellName, PathBuf),
}

/// Everything that can be wrong with `perflab run`'s input, found before anything starts,
/// the target first (the first real problem), then the flags; a group's warnings are said.
pub(crate) fn run_request(i: RunInput, quiet: bool) -> anyhow::Result<Checked> {
    let p = &i.planning;
    let resolved = experiments(&catalog(&p.catalog_dir)?, &i.target, &p.set, p.options())?;
    if i.rounds == 0 {
        return Err(crate::error::InvalidInput("--rounds 0: give at least 1 round".into()).into());
    }
    let suite: crate::images::Suite = i.suite.parse()?;
    let generators =
        crate::load::segments::check_count(i.generators).map_err(crate::error::InvalidInput)?;
    let placement = crate::docker::placement::parse(
        &i.hosts,
        i.publish_on.as_deref(),
        &crate::docker::endpoint::default_contexts_dir(),
    )?;
    let layout = layout(p.cpus.as_deref(), p.force_cpus)?;
    if i.fit {
        check_fittable(&i.target, &resolved, quiet)?;
    }
    let run_name = check_run_name(&i, &resolved)?;
    if let Some(n) = &run_name
        && let Some(done) = super::complete_cell(&i.out, &resolved[0].experiment.id, n)
    {
        return Ok(Checked::Complete(n.clone(), done));
    }
    // last of the checks: it creates the directory, which bad input elsewhere must not leave
    check_out_root(&i.out)?;
    // out/<experiment>/ of each, where it exists: a real directory, never a link out of --out
    for r in &resolved {
        crate::atomic::check_dirs_under(&i.out, &[&r.experiment.id])?;
    }
    for w in resolved.iter().flat_map(|r| &r.warnings) {
        if !quiet {
            crate::say!("{w}");
        }
    }
    Ok(Checked::Run(Box::new(RunRequest {
        target: i.target.clone(),
        resolved,
        overrides: p.set.clone(),
        layout,
        rounds: i.rounds,
        suite,
        align: !p.no_align,
        wait: if i.no_wait { Wait::NoWait } else { Wait::Block },
        out_root: i.out.clone(),
        quiet,
        no_samplers: i.no_samplers,
        generators,
        placement,
        refine: i.refine.then_some(Refining { quick: p.quick }),
        fit: i.fit,
        k6_dashboard: i.k6_dashboard,
        run_name,
        live: i.live.clone(),
    })))
}

/// `--run-name NAME`: a cell name, for one round of one experiment.
fn check_run_name(i: &RunInput, resolved: &[Resolved]) -> anyhow::Result<Option<CellName>> {
    let Some(name) = &i.run_name else {
        return Ok(None);
    };
    let bad = |m: String| crate::error::invalid(format!("--run-name: {m}"));
    let n = CellName::parse(name).map_err(bad)?;
    if resolved.len() != 1 || i.rounds != 1 {
        return Err(bad(format!(
            "{name} names one round of one experiment, but {} runs {} experiment(s) x {} round(s); give one experiment and no --rounds (the round is the name's r{})",
            i.target,
            resolved.len(),
            i.rounds,
            n.round
        )));
    }
    Ok(Some(n))
}

/// The experiments `id` (experiment or group) runs, with the overrides `set` applied and
/// planned (`opts`).
pub(crate) fn experiments(
    catalog: &Catalog,
    id: &str,
    set: &[String],
    opts: PlanOptions,
) -> anyhow::Result<Vec<Resolved>> {
    let exps = catalog.expand(id)?;
    let mut out = Vec::new();
    for e in exps {
        let file = catalog
            .get(&e.id)
            .map(|f| f.warnings.clone())
            .unwrap_or_default();
        let (exp, mut warnings) = experiment::overrides::apply(e, set)
            .map_err(|d| anyhow::Error::new(experiment::invalid(&d)))
            .with_context(|| format!("applying --set to {}", e.id))?;
        if set.is_empty() {
            warnings = file;
        }
        let plan = plan::build(&exp, opts);
        out.push(Resolved {
            experiment: exp,
            plan,
            warnings,
        });
    }
    Ok(out)
}

/// The CPU layout on this host (online CPUs from sysfs, the `--cpus` override).
pub(crate) fn layout(cpus: Option<&str>, force_cpus: bool) -> anyhow::Result<CpuLayout> {
    plan::layout::on_this_host(cpus, force_cpus)
}

/// `--out` must be a directory perflab can create and write in: checked before any image,
/// lock or engine is touched (bad input, exit 2).
pub(crate) fn check_out_root(out: &std::path::Path) -> anyhow::Result<()> {
    let bad = |why: String| {
        crate::error::invalid(format!(
            "--out {}: {why}; give a directory you can write in (or set PERFLAB_OUT)",
            out.display()
        ))
    };
    std::fs::create_dir_all(out).map_err(|e| bad(format!("cannot create it ({e})")))?;
    if !out.is_dir() {
        return Err(bad("it is not a directory".into()));
    }
    let probe = out.join(format!(".perflab-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| bad(format!("cannot write in it ({e})")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// `--fit` needs a `fit:` section: an experiment without one is bad input; a group's members
/// without one run as published (said once).
pub(crate) fn check_fittable(
    target: &str,
    resolved: &[crate::plan::Resolved],
    quiet: bool,
) -> anyhow::Result<()> {
    let unfit: Vec<&str> = resolved
        .iter()
        .filter(|r| r.experiment.fit.is_none())
        .map(|r| r.experiment.id.as_str())
        .collect();
    if unfit.len() == resolved.len() {
        return Err(crate::error::InvalidInput(format!(
            "--fit: {target} has no `fit:` section, so its numbers are not fitted to a host; run it without --fit (its claims do not depend on the host's size), or add a `fit:` section (`perflab show exp1 --fit` shows one; docs/fit.md)"
        ))
        .into());
    }
    if !unfit.is_empty() && !quiet {
        crate::say!(
            "--fit: {} have no `fit:` section and run as published",
            unfit.join(", ")
        );
    }
    Ok(())
}
