//! From an experiment or group id and the planning flags to what a run takes: its
//! experiments with `--set` applied and planned, and the CPU layout on this host.
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
