//! From an experiment or group id and the planning flags to what a run takes: its
//! experiments with `--set` applied and planned, and the CPU layout on this host; the checks of
//! a run's input that need no engine (`--out` writable, `--fit` applicable).
use anyhow::Context;

use crate::experiment::{self, Catalog};
use crate::plan::{self, CpuLayout, PlanOptions, Resolved};

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
    let online = plan::layout::online_cpus().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(plan::layout::resolve(&online, cpus, force_cpus)?)
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
