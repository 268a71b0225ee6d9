//! `perflab history`: the findings over time. Per experiment × suite × configuration, a series
//! of points (one per run, or per `compare` batch side: their median), each with the CPU per
//! ok request over the steps every point passed, the max sustainable rate, the knee, p95 at
//! the busiest such step, each claim's value and verdict, and what it ran on (package
//! versions, host, speed reading, steal); change points on each numeric series
//! (`analyze::changepoint`: Apache Otava's E-divisive means) with the versions that changed
//! around them; the claims whose verdict flipped; acknowledgements (`ack`) and the alert
//! (`check`). `gather` reads out/ through `verify::load::scan` (the bounded reader, each run
//! once); everything else is pure. Runs are never written; `ack` writes `out/history-ack.json`.
pub mod ack;
pub mod args;
pub mod model;
pub mod points;
pub mod render;
pub mod series;

use crate::experiment::Catalog;
use crate::verify::load::{self, Want};
use std::path::Path;

pub use model::{Ack, Change, Flip, History, Metric, Request, Series};
pub use points::{ClaimPoint, Point};

/// The experiments a history argument names: an experiment or a group of the catalog, else an
/// experiment folder of out/; none: every experiment folder of out/.
pub fn experiments(
    arg: Option<&str>,
    catalog: Option<&Catalog>,
    out_root: &Path,
) -> anyhow::Result<Vec<String>> {
    let in_out = crate::rundir::experiments(out_root);
    let Some(id) = arg else {
        return Ok(in_out);
    };
    if let Some(cat) = catalog
        && cat.get(id).is_some()
    {
        return Ok(cat.expand(id)?.into_iter().map(|e| e.id.clone()).collect());
    }
    if in_out.iter().any(|e| e == id) {
        return Ok(vec![id.to_string()]);
    }
    Err(crate::error::invalid(format!(
        "`{id}` is neither an experiment or group of the catalog nor a folder of {} (see `perflab list`)",
        out_root.display()
    )))
}

/// Read the series of `req` from `out_root` (complete runs only, each run once, through the
/// bounded reader), with their change points; claims from the catalog's experiment when it is
/// there, else from the run's own recorded experiment.
pub fn gather(out_root: &Path, req: &Request, catalog: Option<&Catalog>) -> History {
    let mut all = Vec::new();
    let mut skipped = Vec::new();
    for id in &req.experiments {
        let since = req.since;
        let mut admits = |m: &crate::rundir::Manifest| since.is_none_or(|s| m.created >= s);
        let want = Want::all(req.suite.as_deref(), &mut admits);
        let mut runs = load::scan_noting(out_root, id, want, &mut skipped);
        runs.reverse(); // oldest first
        let claims = catalog
            .and_then(|c| c.expand(id).ok())
            .and_then(|v| v.into_iter().find(|e| e.id == *id).cloned());
        all.extend(series::build(id, &runs, claims.as_ref(), req));
    }
    History {
        out_root: out_root.display().to_string(),
        options: req.options,
        series: all,
        skipped,
        acks: ack::read(out_root).unwrap_or_default(),
    }
}
