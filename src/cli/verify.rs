//! `perflab verify`, `perflab compare`: read recorded runs, hand them to the pure
//! `crate::verify`, print tables or JSON; `verify all` also writes the findings report.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use super::catalog::{CatalogArg, PlanArgs};
use crate::claim::quantities;
use crate::error::InvalidInput;
use crate::experiment::{Catalog, CatalogEntry, Experiment};
use crate::rundir;
use crate::verify::findings::{self, Findings, RunInfo};
use crate::verify::load::{self, LoadedRun};
use crate::verify::{render, rounds};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// A run directory, an experiment or group id (its newest complete run), or `all`
    #[arg(default_value = "all")]
    pub target: String,
    /// Print `{"claims": [...]}` instead of the table
    #[arg(long)]
    pub json: bool,
    /// Run the experiments that have claims but no complete run (needs Docker), then verify
    #[arg(long)]
    pub run_missing: bool,
    /// With --run-missing: quarter-length holds (as `perflab run --quick`)
    #[arg(long, requires = "run_missing")]
    pub quick: bool,
    /// With --run-missing: start k6 at once instead of on a minute boundary
    #[arg(long, requires = "run_missing")]
    pub no_align: bool,
    /// Only runs made with this Debian suite's images
    #[arg(long, value_parser = super::suite::values(false))]
    pub suite: Option<String>,
    /// Root of the run directories [default: $PERFLAB_OUT, else ./out; for a run directory, its out root]
    #[arg(long, env = "PERFLAB_OUT")]
    pub out: Option<PathBuf>,
    /// Where `verify all` writes its findings report [default: <out>/verify/<UTC time>/]
    #[arg(long, value_name = "DIR")]
    pub findings_dir: Option<PathBuf>,
    /// With --run-missing: top up every experiment to N rounds of its configuration (claims on a knee or a max sustainable rate are judged on the median round)
    #[arg(long, requires = "run_missing", value_name = "N")]
    pub rounds: Option<u32>,
    /// Judge the experiments that have a `fit:` section on runs fitted to this host (`perflab run --fit`); with --run-missing, run them fitted
    #[arg(long)]
    pub fit: bool,
    /// List the quantities and functions claims can use, and exit
    #[arg(long)]
    pub quantities: bool,
    #[command(flatten)]
    pub catalog: CatalogArg,
}

fn invalid(msg: String) -> anyhow::Error {
    anyhow::Error::new(InvalidInput(msg))
}

pub(super) fn check_suite(s: &Option<String>) -> anyhow::Result<()> {
    if let Some(s) = s {
        s.parse::<crate::images::Suite>()?;
    }
    Ok(())
}

/// The experiments `id` names that carry claims (a group: its members, once each).
fn experiments_with_claims<'c>(cat: &'c Catalog, id: &str) -> anyhow::Result<Vec<&'c Experiment>> {
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

fn quantities_help() -> String {
    let mut s =
        String::from("quantities (scope: step needs `at:` or a selector such as `knee.`):\n");
    for q in quantities::QUANTITIES {
        let lab = q.lab.map(|l| format!(" [{l}]")).unwrap_or_default();
        s.push_str(&format!(
            "  {:<24} {:<6} {}{lab}\n",
            q.name,
            q.scope.as_str(),
            q.help
        ));
    }
    s.push_str("functions:\n");
    for (_, scope, _, help) in quantities::FUNCTIONS {
        s.push_str(&format!("  {:<6} {help}\n", scope.as_str()));
    }
    s.push_str("selectors: every (at: only), lowest, top, knee, last_passing, below_knee, step<N> (e.g. step550.p50_ms); against.<name> reads the `against:` experiment's run\n");
    s
}

pub fn verify(a: VerifyArgs, quiet: bool) -> anyhow::Result<ExitCode> {
    if a.quantities {
        crate::output::emit(&quantities_help());
        return Ok(ExitCode::SUCCESS);
    }
    check_suite(&a.suite)?;
    let cat = a.catalog.load()?;
    let as_dir = Path::new(&a.target);
    let single_run = as_dir.is_dir() && as_dir.join(rundir::MANIFEST_FILE).exists();
    let out_root = out_root(&a, as_dir, single_run)?;
    let mut skipped = Vec::new();
    let targets = if single_run {
        vec![single_target(&cat, as_dir)?]
    } else {
        targets(&a, &cat, &out_root, &mut skipped, quiet)?
    };
    let now = chrono::Utc::now();
    let f = findings(&a, &targets, &out_root, now, skipped);
    if a.json {
        crate::output::emit(&render::json(&f));
    } else {
        crate::output::emit(&render::text(&f.claims, &f.missing));
    }
    if !quiet {
        for s in &f.skipped {
            crate::say!("skipped unreadable run: {s}");
        }
    }
    if a.target == "all" && !single_run {
        // out/verify/ is a real directory, never a link out of the out/ root
        let parent = match &a.findings_dir {
            Some(d) => d.clone(),
            None => crate::atomic::create_dirs_under(&out_root, &["verify"])?,
        };
        let dir = write_findings(&parent, now, &f)?;
        if !quiet {
            crate::say!("findings report: {}", dir.display());
        }
    }
    Ok(if f.all_pass() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::error::EXIT_FAILURE)
    })
}

/// Root of the run directories: `--out`, else a run directory's out root, else `out`.
fn out_root(a: &VerifyArgs, as_dir: &Path, single_run: bool) -> anyhow::Result<PathBuf> {
    Ok(match (&a.out, single_run) {
        (Some(o), _) => o.clone(),
        (None, true) => as_dir
            .canonicalize()?
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        (None, false) => PathBuf::from("out"),
    })
}

/// An experiment to verify and its rounds, newest first (empty: no complete run).
type Target<'c> = (&'c Experiment, Vec<LoadedRun>);

/// The run directory `dir` and its experiment.
fn single_target<'c>(cat: &'c Catalog, dir: &Path) -> anyhow::Result<Target<'c>> {
    let run = load::load_run(dir)?;
    let f = cat
        .lookup(&run.experiment_id)
        .map_err(|e| invalid(format!("{}: {e}", dir.display())))?;
    let CatalogEntry::Experiment(e) = &f.entry else {
        return Err(invalid(format!("`{}` is a group", run.experiment_id)));
    };
    Ok((e, vec![run]))
}

/// The experiments `a.target` names with their newest complete runs; with `--run-missing`, the
/// ones without are run first.
fn targets<'c>(
    a: &VerifyArgs,
    cat: &'c Catalog,
    out_root: &Path,
    skipped: &mut Vec<String>,
    quiet: bool,
) -> anyhow::Result<Vec<Target<'c>>> {
    let suite = a.suite.as_deref();
    let mut targets: Vec<Target<'c>> = Vec::new();
    let fitted = |e: &Experiment| a.fit && e.fit.is_some();
    for e in experiments_with_claims(cat, &a.target)? {
        let runs = load::rounds(out_root, &e.id, suite, fitted(e), skipped);
        targets.push((e, runs));
    }
    let want = a.rounds.unwrap_or(1) as usize;
    if a.run_missing {
        let ids = missing_rounds(cat, &targets, want, &mut |e: &Experiment| {
            load::rounds(out_root, &e.id, suite, fitted(e), skipped).len()
        });
        if !ids.is_empty() {
            let plan = PlanArgs {
                quick: a.quick,
                no_align: a.no_align,
                ..Default::default()
            };
            run_missing(cat, &plan, &ids, out_root, (suite, a.fit), quiet)?;
        }
        for t in targets.iter_mut().filter(|t| t.1.len() < want) {
            t.1 = load::rounds(out_root, &t.0.id, suite, fitted(t.0), skipped);
        }
    }
    Ok(targets)
}

/// What `--run-missing` runs: each target, and each experiment its claims compare against
/// (exp2-mc80 against exp1), with the rounds it lacks to reach `want` (`have` counts them).
fn missing_rounds(
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
    ids
}

/// The experiments the targets' claims name in `against:` that are not targets themselves.
fn againsts<'c>(cat: &'c Catalog, targets: &[Target<'c>]) -> Vec<&'c Experiment> {
    let mut out: Vec<&Experiment> = Vec::new();
    let ids = targets
        .iter()
        .flat_map(|t| t.0.expect.iter().filter_map(|c| c.against.as_deref()));
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

/// Every claim of the targets evaluated on its run (and the runs the claims compare against).
fn findings(
    a: &VerifyArgs,
    targets: &[Target<'_>],
    out_root: &Path,
    now: chrono::DateTime<chrono::Utc>,
    mut skipped: Vec<String>,
) -> Findings {
    let suite = a.suite.as_deref();
    // Runs the claims compare against.
    let mut others: BTreeMap<String, LoadedRun> = BTreeMap::new();
    for (e, _) in targets {
        for c in &e.expect {
            if let Some(id) = &c.against
                && !others.contains_key(id)
                && let Some(r) = against_run(out_root, id, suite, a.fit, &mut skipped)
            {
                others.insert(id.clone(), r);
            }
        }
    }
    let labels: BTreeMap<String, String> =
        others.iter().map(|(k, r)| (k.clone(), r.label())).collect();
    let mut claims = Vec::new();
    let mut missing = Vec::new();
    let mut runs = Vec::new();
    for (e, rounds) in targets {
        let Some(run) = rounds.first() else {
            missing.push(e.id.clone());
            continue;
        };
        let label = run.label();
        let against = |id: &str| others.get(id).map(|r| r.view(&labels[id]));
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
        out_root: out_root.display().to_string(),
        suite: a.suite.clone(),
        claims,
        missing,
        runs,
        skipped,
    }
}

/// `<parent>/<UTC time>/findings.{md,json}`: a new directory, never overwritten.
fn write_findings(
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

/// Run the missing experiments through the `perflab run` pipeline (one round each).
fn run_missing(
    cat: &Catalog,
    plan: &PlanArgs,
    ids: &[(String, u32)],
    out_root: &Path,
    (suite, fit): (Option<&str>, bool),
    quiet: bool,
) -> anyhow::Result<()> {
    let mut counts: Vec<u32> = ids.iter().map(|x| x.1).collect();
    counts.sort_unstable();
    counts.dedup();
    for rounds in counts {
        let these: Vec<&str> = ids
            .iter()
            .filter(|x| x.1 == rounds)
            .map(|x| x.0.as_str())
            .collect();
        let mut resolved = Vec::new();
        for id in &these {
            resolved.extend(plan.resolve(cat, id)?);
        }
        let req = crate::run::RunRequest {
            target: format!("verify --run-missing ({})", these.join(", ")),
            resolved,
            overrides: Vec::new(),
            layout: plan.layout()?,
            rounds,
            suite: suite.unwrap_or("trixie").parse()?,
            align: !plan.no_align,
            wait: crate::lock::Wait::Block,
            out_root: out_root.to_path_buf(),
            quiet,
            no_samplers: false,
            generators: 1,
            placement: Default::default(),
            refine: None,
            fit,
            k6_dashboard: false,
            run_name: None,
        };
        if !quiet {
            crate::say!(
                "running {rounds} more round(s) of {} experiment(s): {}",
                these.len(),
                these.join(", ")
            );
        }
        execute_quietly(req, quiet)?;
    }
    Ok(())
}

/// `perflab run`'s pipeline with its per-round lines on stderr (stdout is the table / JSON).
fn execute_quietly(req: crate::run::RunRequest, quiet: bool) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut progress = crate::images::build_progress(quiet);
    let summary = {
        let _to_stderr = StdoutToStderr::new();
        rt.block_on(crate::run::execute(req, &mut progress))?
    };
    if summary.interrupted {
        anyhow::bail!("interrupted while running the missing experiments");
    }
    Ok(())
}

/// While alive, file descriptor 1 points at stderr (restored on drop).
struct StdoutToStderr(Option<libc::c_int>);

impl StdoutToStderr {
    fn new() -> Self {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        // SAFETY: plain descriptor calls on the process's own fds 1 and 2.
        let saved = unsafe { libc::dup(1) };
        if saved < 0 || unsafe { libc::dup2(2, 1) } < 0 {
            return StdoutToStderr(None);
        }
        StdoutToStderr(Some(saved))
    }
}

impl Drop for StdoutToStderr {
    fn drop(&mut self) {
        use std::io::Write;
        let _ = std::io::stdout().flush();
        if let Some(fd) = self.0 {
            // SAFETY: restores fd 1 from the copy made in `new`.
            unsafe {
                libc::dup2(fd, 1);
                libc::close(fd);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_missing_tops_up_the_experiments_claims_compare_against() {
        let cat = Catalog::load(Path::new("experiments")).unwrap();
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
        // An experiment that is a target is counted once, from its loaded rounds.
        let exp1 = cat.expand("exp1").unwrap()[0];
        let both: Vec<Target<'_>> = vec![(e, Vec::new()), (exp1, Vec::new())];
        let ids = missing_rounds(&cat, &both, 1, &mut |_| panic!("targets are not re-read"));
        assert_eq!(ids, vec![("exp2-mc80".into(), 1), ("exp1".into(), 1)]);
    }
}
