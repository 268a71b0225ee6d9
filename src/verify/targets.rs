//! What `perflab verify` judges: the experiments a target names that carry claims, each with
//! its rounds (the newest configuration's complete runs), the experiments their claims compare
//! against, and the rounds `--run-missing` still has to run. Reads run directories through
//! `load`.
use std::path::{Path, PathBuf};

use super::load::{self, LoadedRun};
use super::rounds;
use crate::experiment::{Catalog, CatalogEntry, Experiment};

/// An experiment to verify and its rounds, newest first (empty: no complete run).
pub(crate) type Target<'c> = (&'c Experiment, Vec<LoadedRun>);

/// Which recorded runs verify reads: under which out root, of which suite (`--suite`), fitted
/// to this host or as published (`--fit`, for the experiments with a `fit:` section).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recorded<'a> {
    pub(crate) out_root: &'a Path,
    pub(crate) suite: Option<&'a str>,
    pub(crate) fit: bool,
}

impl Recorded<'_> {
    /// The rounds of `e` (fitted ones when `--fit` and `e` has a `fit:` section).
    pub(crate) fn rounds(&self, e: &Experiment, skipped: &mut Vec<String>) -> Vec<LoadedRun> {
        let fitted = self.fit && e.fit.is_some();
        load::rounds(self.out_root, &e.id, self.suite, fitted, skipped)
    }
}

/// The experiments `id` names that carry claims (a group: its members, once each).
pub(crate) fn experiments_with_claims<'c>(
    cat: &'c Catalog,
    id: &str,
) -> anyhow::Result<Vec<&'c Experiment>> {
    let mut out: Vec<&Experiment> = Vec::new();
    if id == "all" {
        for f in cat.files.values() {
            if let CatalogEntry::Experiment(e) = &f.entry
                && !e.expect.is_empty()
            {
                out.push(e);
            }
        }
        return Ok(out);
    }
    for e in cat.expand(id)? {
        if !out.iter().any(|x| x.id == e.id) {
            out.push(e);
        }
    }
    Ok(out)
}

/// Root of the run directories: `--out`, else a run directory's out root, else `out`.
pub(crate) fn out_root(
    out: Option<&Path>,
    as_dir: &Path,
    single_run: bool,
) -> anyhow::Result<PathBuf> {
    Ok(match (out, single_run) {
        (Some(o), _) => o.to_path_buf(),
        (None, true) => as_dir
            .canonicalize()?
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        (None, false) => PathBuf::from("out"),
    })
}

/// The run directory `dir` and its experiment.
pub(crate) fn single_target<'c>(cat: &'c Catalog, dir: &Path) -> anyhow::Result<Target<'c>> {
    let run = load::load_run(dir)?;
    let f = cat
        .lookup(&run.experiment_id)
        .map_err(|e| load::invalid(format!("{}: {e}", dir.display())))?;
    let CatalogEntry::Experiment(e) = &f.entry else {
        return Err(load::invalid(format!("`{}` is a group", run.experiment_id)));
    };
    Ok((e, vec![run]))
}

/// The experiments `id` names that carry claims, with their recorded rounds.
pub(crate) fn targets<'c>(
    cat: &'c Catalog,
    id: &str,
    rec: &Recorded<'_>,
    skipped: &mut Vec<String>,
) -> anyhow::Result<Vec<Target<'c>>> {
    let mut targets: Vec<Target<'c>> = Vec::new();
    for e in experiments_with_claims(cat, id)? {
        let runs = rec.rounds(e, skipped);
        targets.push((e, runs));
    }
    Ok(targets)
}

/// What `--run-missing` runs: each target, and each experiment its claims compare against
/// (exp2-mc80 against exp1), with the rounds it lacks to reach `want` (`have` counts them).
pub(crate) fn missing_rounds(
    cat: &Catalog,
    targets: &[Target<'_>],
    want: usize,
    have: &mut dyn FnMut(&Experiment) -> usize,
) -> Vec<(String, u32)> {
    let mut ids = Vec::new();
    for e in targets.iter().map(|t| t.0).chain(againsts(cat, targets)) {
        let n = match targets.iter().find(|t| t.0.id == e.id) {
            Some(t) => t.1.len(),
            None => have(e),
        };
        if n < want {
            ids.push((e.id.clone(), (want - n) as u32));
        }
    }
    // a twin lends its calibration (`fit.twin`): it runs before the experiments that borrow it
    let lends = |id: &str| targets.iter().any(|t| twin_of(t.0) == Some(id));
    ids.sort_by_key(|(id, _)| !lends(id));
    ids
}

/// The experiment `e`'s fit borrows its calibration from (`fit.twin`).
fn twin_of(e: &Experiment) -> Option<&str> {
    e.fit.as_ref()?.twin.as_deref()
}

/// The experiments the targets' claims name in `against:`, and the twins their fits borrow
/// from, that are not targets themselves.
fn againsts<'c>(cat: &'c Catalog, targets: &[Target<'c>]) -> Vec<&'c Experiment> {
    let mut out: Vec<&Experiment> = Vec::new();
    let ids = targets.iter().flat_map(|t| {
        let claims = t.0.expect.iter().filter_map(|c| c.against.as_deref());
        claims.chain(twin_of(t.0))
    });
    for id in ids {
        for e in cat.expand(id).unwrap_or_default() {
            let known = targets.iter().any(|t| t.0.id == e.id) || out.iter().any(|x| x.id == e.id);
            if !known {
                out.push(e);
            }
        }
    }
    out
}

/// The run a claim compares against: the median round of the other experiment (by max
/// sustainable rate); with `--fit`, of its fitted rounds when there are any.
pub(crate) fn against_run(
    out_root: &Path,
    id: &str,
    suite: Option<&str>,
    fit: bool,
    skipped: &mut Vec<String>,
) -> Option<LoadedRun> {
    let mut runs = Vec::new();
    if fit {
        runs = load::rounds(out_root, id, suite, true, skipped);
    }
    if runs.is_empty() {
        runs = load::rounds(out_root, id, suite, false, skipped);
    }
    rounds::median_run(runs, |r| &r.report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_missing_tops_up_the_experiments_claims_compare_against() {
        let cat = Catalog::load(
            Path::new("experiments"),
            &crate::verify::quantities::Quantities,
        )
        .unwrap();
        let e = cat.expand("exp2-mc80").unwrap()[0];
        let targets: Vec<Target<'_>> = vec![(e, Vec::new())];
        // No round of anything yet: exp2-mc80 and exp1 (its `against:`) need 3 each.
        let ids = missing_rounds(&cat, &targets, 3, &mut |_| 0);
        assert_eq!(ids, vec![("exp2-mc80".into(), 3), ("exp1".into(), 3)]);
        // exp1 already has 3 rounds: only the target runs.
        let ids = missing_rounds(&cat, &targets, 3, &mut |x| {
            if x.id == "exp1" { 3 } else { 0 }
        });
        assert_eq!(ids, vec![("exp2-mc80".into(), 3)]);
        // An experiment that is a target is counted once, from its loaded rounds; exp1's own
        // `against:` (2a, its CPU per request's yardstick) is read.
        let exp1 = cat.expand("exp1").unwrap()[0];
        let both: Vec<Target<'_>> = vec![(e, Vec::new()), (exp1, Vec::new())];
        let ids = missing_rounds(&cat, &both, 1, &mut |x| {
            assert_eq!(x.id, "2a", "targets are not re-read");
            0
        });
        assert_eq!(
            ids,
            vec![
                ("exp2-mc80".into(), 1),
                ("exp1".into(), 1),
                ("2a".into(), 1)
            ]
        );
    }

    /// diag-unix borrows diag-tcp's calibration (`fit.twin`): diag-tcp runs first, whether it
    /// comes in as a target after it or only as the twin.
    #[test]
    fn a_twin_runs_before_the_experiment_that_borrows_its_calibration() {
        let cat = Catalog::load(
            Path::new("experiments"),
            &crate::verify::quantities::Quantities,
        )
        .unwrap();
        let unix = cat.expand("diag-unix").unwrap()[0];
        let tcp = cat.expand("diag-tcp").unwrap()[0];
        let alone: Vec<Target<'_>> = vec![(unix, Vec::new())];
        let ids = missing_rounds(&cat, &alone, 1, &mut |_| 0);
        assert_eq!(ids, vec![("diag-tcp".into(), 1), ("diag-unix".into(), 1)]);
        let both: Vec<Target<'_>> = vec![(unix, Vec::new()), (tcp, Vec::new())];
        let ids = missing_rounds(&cat, &both, 1, &mut |_| 0);
        assert_eq!(ids, vec![("diag-tcp".into(), 1), ("diag-unix".into(), 1)]);
    }
}
