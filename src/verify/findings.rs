//! Claims of experiments evaluated on their runs, gathered into one findings report (the
//! regression test of a suite): which run each experiment used, its component versions, every
//! claim's verdict, and the experiments with claims but no run. Pure.
use super::eval::{self, ClaimResult, ClaimVerdict, RunView};
use crate::experiment::Experiment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The run one experiment's claims were checked on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub experiment: String,
    /// The lab's name: which versions matter (its descriptor's `version_keys`).
    pub lab: String,
    pub run: String,
    pub suite: Option<String>,
    pub created: String,
    /// Component versions (manifest `components`).
    pub components: BTreeMap<String, String>,
}

/// Everything `perflab verify` found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Findings {
    /// UTC time the report was made (given by the caller).
    pub generated: String,
    pub out_root: String,
    /// `--suite` filter, if any.
    pub suite: Option<String>,
    pub claims: Vec<ClaimResult>,
    /// Experiments with claims but no complete run.
    pub missing: Vec<String>,
    pub runs: Vec<RunInfo>,
    /// Run directories left out: unreadable, or copies of a run counted (`load::Skipped::note`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl Findings {
    /// Every applicable claim passes (or is refuted, as the catalog records) and no experiment
    /// is missing.
    pub fn all_pass(&self) -> bool {
        self.missing.is_empty() && self.claims.iter().all(|c| c.verdict != ClaimVerdict::Fail)
    }

    pub(crate) fn count(&self, v: ClaimVerdict) -> usize {
        self.claims.iter().filter(|c| c.verdict == v).count()
    }
}

/// Evaluate every claim of `exp` on `run`; `against(id)` gives another experiment's run.
/// One round as `over_rounds` judges rounds (so a claim marked `refuted:` is marked there, once).
pub fn verify_run<'a>(
    exp: &Experiment,
    run: RunView<'a>,
    against: &dyn Fn(&str) -> Option<RunView<'a>>,
) -> Vec<ClaimResult> {
    over_rounds(exp, vec![judge_run(exp, run, against)])
}

/// Every claim of `exp` on `run` as its comparison reads it, before `refuted:` marks: what a
/// round gives `over_rounds`.
pub(crate) fn judge_run<'a>(
    exp: &Experiment,
    run: RunView<'a>,
    against: &dyn Fn(&str) -> Option<RunView<'a>>,
) -> Vec<ClaimResult> {
    exp.expect
        .iter()
        .map(|c| {
            let other = c.against.as_deref().and_then(against);
            eval::evaluate(&exp.id, c, run, other)
        })
        .collect()
}

/// The experiment's claims as they read a run: on a fitted run, a claim at a published step
/// (`at: 550`) reads the fitted step of the same rank.
pub(crate) fn claims_for(e: &Experiment, run: RunView<'_>) -> Experiment {
    let mut e = e.clone();
    if run.manifest.measurements.fit.is_some() {
        crate::plan::fit::remap_claim_steps(&mut e, &run.manifest.experiment.load.steps);
    }
    e
}

/// Each claim's result: over the rounds (median) when it reads a knee or a max sustainable
/// rate, else the newest round's (`per_round` newest first, from `judge_run`); then marked as
/// its `refuted:` asks.
pub(crate) fn over_rounds(
    e: &Experiment,
    mut per_round: Vec<Vec<ClaimResult>>,
) -> Vec<ClaimResult> {
    let newest = per_round.first().cloned().unwrap_or_default();
    let mut out = Vec::with_capacity(newest.len());
    for (i, (c, first)) in e.expect.iter().zip(newest).enumerate() {
        if !super::rounds::judged_over_rounds(c) {
            out.push(super::refuted::mark(c, first));
            continue;
        }
        let results: Vec<ClaimResult> = per_round
            .iter_mut()
            .filter_map(|r| r.get(i).cloned())
            .collect();
        out.extend(super::rounds::combine(results).map(|r| super::refuted::mark(c, r)));
    }
    out
}

/// Every claim of `exp` on its rounds (newest first), each round read as its fit asks, judged
/// over the rounds as [`over_rounds`] does.
pub(crate) fn verify_rounds<'a>(
    exp: &Experiment,
    rounds: &[RunView<'a>],
    against: &dyn Fn(RunView<'a>, &str) -> Option<RunView<'a>>,
) -> Vec<ClaimResult> {
    let per_round = rounds
        .iter()
        .map(|r| judge_run(&claims_for(exp, *r), *r, &|id| against(*r, id)))
        .collect();
    over_rounds(exp, per_round)
}

/// The component versions worth a column for a lab: its runtimes, not the Debian package strings.
pub(crate) fn key_versions(
    lab: &str,
    components: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let own = crate::lab::Lab::from_name(lab).map_or(&[("pg.postgres", "postgres")][..], |l| {
        crate::lab::descriptor(l).version_keys()
    });
    own.iter()
        .chain(&[("k6.k6", "k6")])
        .filter_map(|(k, short)| {
            let v = components.get(*k)?;
            // "17.12 (Debian 17.12-0+deb13u1)" -> "17.12"; "k6 v1.1.0 (commit...)" -> "v1.1.0"
            let v = v.strip_prefix("k6 ").unwrap_or(v);
            let v = v.split_whitespace().next().unwrap_or(v);
            Some((short.to_string(), v.to_string()))
        })
        .collect()
}
