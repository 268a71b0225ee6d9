//! Gathering `perflab verify`'s findings: every claim of the targets judged on its rounds
//! (against the runs the claims compare against), and the findings report written to a new
//! directory (`findings.md`, `findings.json`).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::RunView;
use super::findings::{self, Findings, RunInfo};
use super::load::LoadedRun;
use super::render;
use super::targets::{Recorded, Target, against_run};
use crate::rundir;

/// Every claim of the targets evaluated on its run (and the runs the claims compare against).
pub(crate) fn findings(
    targets: &[Target<'_>],
    rec: &Recorded<'_>,
    now: chrono::DateTime<chrono::Utc>,
    mut skipped: Vec<String>,
) -> Findings {
    // Runs the claims compare against.
    let mut others: BTreeMap<String, LoadedRun> = BTreeMap::new();
    for (e, _) in targets {
        for c in &e.expect {
            if let Some(id) = &c.against
                && !others.contains_key(id)
                && let Some(r) = against_run(rec.out_root, id, rec.suite, rec.fit, &mut skipped)
            {
                others.insert(id.clone(), r);
            }
        }
    }
    let labels: BTreeMap<String, String> =
        others.iter().map(|(k, r)| (k.clone(), r.label())).collect();
    let lent = lent_runs(targets, rec.out_root, &mut skipped);
    let mut claims = Vec::new();
    let mut missing = Vec::new();
    let mut runs = Vec::new();
    for (e, rounds) in targets {
        let Some(run) = rounds.first() else {
            missing.push(e.id.clone());
            continue;
        };
        let label = run.label();
        // a round fitted on its twin's calibration is judged against that very run
        let against = |round: RunView<'_>, id: &str| {
            let paired = twin_run_of(round, id).and_then(|l| lent.get_key_value(l));
            match paired {
                Some((l, r)) => Some(r.view(l)),
                None => others.get(id).map(|r| r.view(&labels[id])),
            }
        };
        let round_labels: Vec<String> = rounds.iter().map(LoadedRun::label).collect();
        let views: Vec<_> = rounds
            .iter()
            .zip(&round_labels)
            .map(|(r, l)| r.view(l))
            .collect();
        claims.extend(findings::verify_rounds(e, &views, &against));
        runs.push(RunInfo {
            experiment: e.id.clone(),
            lab: e.lab.to_string(),
            run: label.clone(),
            suite: run.suite(),
            created: run.manifest.created.to_rfc3339(),
            components: run.manifest.components.clone(),
        });
    }
    // The same experiment's rounds are read more than once (a target, and the run another
    // target's claims compare against; with --fit, fitted then as published): each skipped
    // run is said once.
    let mut seen = std::collections::BTreeSet::new();
    skipped.retain(|s| seen.insert(s.clone()));
    Findings {
        generated: now.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        out_root: rec.out_root.display().to_string(),
        suite: rec.suite.map(str::to_string),
        claims,
        missing,
        runs,
        skipped,
    }
}

/// The twin's run a round's calibration was lent by (`fit.twin_run`, `diag-tcp/<run>`), when
/// `id` is that twin.
fn twin_run_of<'r>(round: RunView<'r>, id: &str) -> Option<&'r str> {
    let l = round
        .manifest
        .measurements
        .fit
        .as_ref()?
        .twin_run
        .as_deref()?;
    (l.split_once('/').map(|x| x.0) == Some(id)).then_some(l)
}

/// The runs the targets' rounds borrowed their calibration from, by label, loaded from
/// `out_root`; a label that is not `<experiment>/<run>` of plain names, or a run that no longer
/// loads, is said and left out (the claim then reads the median round, as without a twin).
fn lent_runs(
    targets: &[Target<'_>],
    out_root: &Path,
    skipped: &mut Vec<String>,
) -> BTreeMap<String, LoadedRun> {
    let mut out = BTreeMap::new();
    let labels = targets
        .iter()
        .flat_map(|(_, rounds)| rounds)
        .filter_map(|r| r.manifest.measurements.fit.as_ref()?.twin_run.clone());
    for l in labels {
        if out.contains_key(&l) {
            continue;
        }
        let run_name = |p: &str| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        };
        let ok = |(e, r): &(&str, &str)| crate::experiment::schema::valid_id(e) && run_name(r);
        let Some((exp, run)) = l.split_once('/').filter(ok) else {
            skipped.push(format!(
                "a round's fit.twin_run `{l}` is not <experiment>/<run>: not read"
            ));
            continue;
        };
        match super::load::load_run(&out_root.join(exp).join(run)) {
            Ok(r) => {
                out.insert(l, r);
            }
            Err(e) => skipped.push(format!("{l} (the twin run a round was fitted on): {e:#}")),
        }
    }
    out
}

/// `<parent>/<UTC time>/findings.{md,json}`: a new directory, never overwritten.
pub(crate) fn write_findings(
    parent: &Path,
    now: chrono::DateTime<chrono::Utc>,
    f: &Findings,
) -> anyhow::Result<PathBuf> {
    let dir = rundir::create_new_dir(parent, &now.format("%Y%m%dT%H%M%SZ").to_string())?;
    let l = rundir::Layout::new(&dir);
    for (path, text) in [
        (l.findings_md(), render::markdown(f)),
        (l.findings_json(), render::json(f)),
    ] {
        rundir::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(dir)
}
