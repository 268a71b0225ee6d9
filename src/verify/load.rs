//! Reading recorded runs for verify / compare / capacity: a run directory's `report.json`,
//! `manifest.json` and `status.json`, the newest complete runs of an experiment, a run's suite.
//! The only file I/O of `verify`.
use super::config::Config;
use crate::analyze::model::Report;
use crate::rundir::read::{self, FileKind, RunFile};
use crate::rundir::{self, Manifest, RunState, Status};
use anyhow::Context;
use std::path::{Path, PathBuf};

/// One recorded run, parsed.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    pub dir: PathBuf,
    pub experiment_id: String,
    pub report: Report,
    pub manifest: Manifest,
    pub status: Status,
}

impl LoadedRun {
    /// `exp1/20261130T035648Z-r1`.
    pub fn label(&self) -> String {
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        format!("{}/{name}", self.experiment_id)
    }

    pub fn view<'a>(&'a self, label: &'a str) -> super::RunView<'a> {
        super::RunView {
            label,
            report: &self.report,
            manifest: &self.manifest,
        }
    }

    pub fn suite(&self) -> Option<String> {
        suite_of(&self.manifest)
    }
}

/// The Debian suite of a run's images (see [`Manifest::suite`]).
pub(crate) fn suite_of(m: &Manifest) -> Option<String> {
    m.suite()
}

pub(super) fn invalid(msg: String) -> anyhow::Error {
    crate::error::invalid(msg)
}

/// Read one run directory (invalid input when it is not one or has no report).
pub fn load_run(dir: &Path) -> anyhow::Result<LoadedRun> {
    // Whatever the folder is called (a run directory travels): its manifest says what it is.
    if !rundir::Layout::new(dir).manifest().is_file() {
        let why = if dir.is_dir() {
            format!("no {}", rundir::MANIFEST_FILE)
        } else {
            "no such folder".to_string()
        };
        return Err(invalid(format!(
            "{}: not a run directory ({why}); expected out/<experiment>/<timestamp>-r<N> or a copy of one",
            dir.display()
        )));
    }
    let manifest = manifest_at(dir)?;
    let status: Status =
        serde_json::from_str(&text_at(dir, rundir::STATUS_FILE, FileKind::Status)?)
            .map_err(|e| invalid(format!("{}: {e}", dir.join(rundir::STATUS_FILE).display())))?;
    with_report(dir, manifest, status)
}

/// The text of `dir/name` through the bounded reader; a missing file is bad input naming it.
fn text_at(dir: &Path, name: &str, kind: FileKind) -> anyhow::Result<String> {
    match read::doc(&RunFile::at(dir, name, kind)) {
        Ok(d) => Ok(d.text),
        Err(e) if e.is_missing() => Err(invalid(format!(
            "{}: no such file (the run has no {name}: see its {})",
            dir.join(name).display(),
            rundir::STATUS_FILE
        ))),
        Err(e) => Err(e.into_anyhow()),
    }
}

fn manifest_at(dir: &Path) -> anyhow::Result<Manifest> {
    Manifest::parse(&text_at(dir, rundir::MANIFEST_FILE, FileKind::Manifest)?).map_err(|e| {
        invalid(format!(
            "{}: {e:#}",
            dir.join(rundir::MANIFEST_FILE).display()
        ))
    })
}

/// The run at `dir` whose manifest and status are read: its report too.
fn with_report(dir: &Path, manifest: Manifest, status: Status) -> anyhow::Result<LoadedRun> {
    let report = rundir::report::parse(&text_at(dir, rundir::REPORT_FILE, FileKind::Report)?)
        .map_err(|e| {
            invalid(format!(
                "{}: {e:#} (re-render it with `perflab report {}`)",
                dir.join(rundir::REPORT_FILE).display(),
                dir.display()
            ))
        })?;
    Ok(LoadedRun {
        dir: dir.to_path_buf(),
        experiment_id: manifest.experiment_id.clone(),
        report,
        manifest,
        status,
    })
}

/// Why a run directory was left out of a set of rounds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Left {
    /// It could not be read.
    Unreadable(String),
    /// Not complete, or of another suite.
    Other(String),
    /// A copy of a run already counted (the same `run_id` in its manifest): one run is one
    /// round, however many folders hold it.
    Copy { of: PathBuf, run_id: String },
}

/// A run directory left out of a set of rounds, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skipped {
    pub dir: PathBuf,
    pub why: Left,
}

impl Skipped {
    /// The note the commands print after `skipped ` (the unreadable and the copies; a run
    /// that is only incomplete or of another suite is no news), `None` for the others.
    pub(crate) fn note(&self) -> Option<String> {
        match &self.why {
            Left::Other(_) => None,
            Left::Unreadable(_) => Some(format!("unreadable run: {self}")),
            Left::Copy { .. } => Some(format!("copied run: {self}")),
        }
    }
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", self.dir.display())?;
        match &self.why {
            Left::Unreadable(why) | Left::Other(why) => f.write_str(why),
            Left::Copy { of, run_id } => write!(
                f,
                "a copy of {} (run id {run_id}), counted once",
                of.display()
            ),
        }
    }
}

/// What a scan of an experiment's run directories looks for: complete runs of `suite` (any
/// when `None`) whose manifest `admits` (a configuration), at most `limit` of them.
pub(crate) struct Want<'a> {
    pub suite: Option<&'a str>,
    pub admits: &'a mut dyn FnMut(&Manifest) -> bool,
    pub limit: usize,
    /// Admit a comparison's rounds loaded together with the other side (at half the
    /// experiment's rates): only their own batch asks for them; every other reader leaves them
    /// out, since their knee and latencies are not a lone run's.
    pub together: bool,
}

impl<'a> Want<'a> {
    /// Every complete run of `suite`.
    pub(crate) fn all(
        suite: Option<&'a str>,
        admits: &'a mut dyn FnMut(&Manifest) -> bool,
    ) -> Self {
        Want {
            suite,
            admits,
            limit: usize::MAX,
            together: false,
        }
    }
}

/// The one home of "which recorded runs are rounds": the complete runs of an experiment with a
/// report, newest first, each run once (a folder whose manifest's `run_id` was already counted
/// is a copy, left out and named), of `want.suite`, admitted by `want.admits`, at most
/// `want.limit`; and every run directory left out with why. Streaming: a folder costs its
/// `status.json`, then its `manifest.json`, and only a run it keeps its `report.json`; only the
/// runs kept are held, and the scan stops at the limit.
pub(crate) fn scan(
    out_root: &Path,
    experiment_id: &str,
    want: Want<'_>,
) -> (Vec<LoadedRun>, Vec<Skipped>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    // run id -> the folder counted for it and its place in `out`
    let mut counted: std::collections::HashMap<String, (PathBuf, usize)> = Default::default();
    if want.limit == 0 {
        return (out, skipped);
    }
    for r in rundir::list_runs(out_root, Some(experiment_id))
        .into_iter()
        .rev()
    {
        let status = match r.status() {
            Ok(s) if s.state == RunState::Complete => s,
            Ok(s) => {
                let state = serde_json::to_string(&s.state).unwrap_or_default();
                let reason = s.reason.map(|r| format!(" ({r})")).unwrap_or_default();
                push(
                    &mut skipped,
                    &r.path,
                    Left::Other(format!("not complete: {}{reason}", state.trim_matches('"'))),
                );
                continue;
            }
            Err(e) => {
                push(&mut skipped, &r.path, Left::Unreadable(format!("{e:#}")));
                continue;
            }
        };
        let manifest = match manifest_at(&r.path) {
            Ok(m) => m,
            Err(e) => {
                push(&mut skipped, &r.path, Left::Unreadable(format!("{e:#}")));
                continue;
            }
        };
        if let Some(s) = want.suite
            && manifest.suite().as_deref() != Some(s)
        {
            let has = manifest.suite().unwrap_or_else(|| "unknown".into());
            push(
                &mut skipped,
                &r.path,
                Left::Other(format!("suite {has}, not {s}")),
            );
            continue;
        }
        if !want.together && loaded_together(&manifest) {
            let why = "a comparison's round loaded together with its other side at half the experiment's rates: only its own batch counts it";
            push(&mut skipped, &r.path, Left::Other(why.into()));
            continue;
        }
        if !(want.admits)(&manifest) {
            continue;
        }
        let run_id = manifest.run_id.clone();
        if let Some((kept, at)) = counted.get(&run_id).cloned() {
            // the folder named after its run id is the run; the other one is the copy
            let original = r.name() == run_id && kept.file_name().is_none_or(|n| *n != *run_id);
            let copy = match original.then(|| with_report(&r.path, manifest, status)) {
                Some(Ok(l)) => {
                    counted.insert(run_id.clone(), (l.dir.clone(), at));
                    out[at] = l;
                    kept
                }
                _ => r.path.clone(),
            };
            // `of`: the folder counted for the run id in the end (set below)
            let of = PathBuf::new();
            push(&mut skipped, &copy, Left::Copy { of, run_id });
            continue;
        }
        match with_report(&r.path, manifest, status) {
            Ok(l) => {
                counted.insert(run_id, (l.dir.clone(), out.len()));
                out.push(l);
                if out.len() >= want.limit {
                    break;
                }
            }
            Err(e) => push(&mut skipped, &r.path, Left::Unreadable(format!("{e:#}"))),
        }
    }
    for s in &mut skipped {
        if let Left::Copy { of, run_id } = &mut s.why
            && let Some((kept, _)) = counted.get(run_id)
        {
            *of = kept.clone();
        }
    }
    (out, skipped)
}

/// A comparison's round loaded together with the other side (`Design::Together`).
pub(crate) fn loaded_together(m: &Manifest) -> bool {
    let tag = m.measurements.compare.as_ref();
    tag.is_some_and(|t| t.design == crate::rundir::batch::Design::Together)
}

fn push(skipped: &mut Vec<Skipped>, dir: &Path, why: Left) {
    skipped.push(Skipped {
        dir: dir.to_path_buf(),
        why,
    });
}

/// [`scan`], the runs left out that are news (unreadable, copies) noted in `skipped`.
pub(crate) fn scan_noting(
    out_root: &Path,
    experiment_id: &str,
    want: Want<'_>,
    skipped: &mut Vec<String>,
) -> Vec<LoadedRun> {
    let (runs, skips) = scan(out_root, experiment_id, want);
    skipped.extend(skips.iter().filter_map(Skipped::note));
    runs
}

/// The newest complete run of an experiment (of a suite).
pub fn newest_complete(
    out_root: &Path,
    experiment_id: &str,
    suite: Option<&str>,
    skipped: &mut Vec<String>,
) -> Option<LoadedRun> {
    let want = Want {
        suite,
        admits: &mut |_| true,
        limit: 1,
        together: false,
    };
    scan_noting(out_root, experiment_id, want, skipped)
        .into_iter()
        .next()
}

/// The rounds of an experiment's newest configuration, newest first: complete runs (of a suite)
/// fitted or as published like `fitted` asks, in the newest one's configuration
/// (`config::Config`: its `--set` overrides, profile and resolved stack and load).
pub(crate) fn rounds(
    out_root: &Path,
    experiment_id: &str,
    suite: Option<&str>,
    fitted: bool,
    skipped: &mut Vec<String>,
) -> Vec<LoadedRun> {
    // the first run fitted (or not) as asked sets the configuration
    let mut config: Option<Config> = None;
    let mut admits = |m: &Manifest| {
        if m.measurements.fit.is_some() != fitted {
            return false;
        }
        let c = Config::of(m);
        config.get_or_insert_with(|| c.clone()).admits(&c)
    };
    scan_noting(
        out_root,
        experiment_id,
        Want::all(suite, &mut admits),
        skipped,
    )
}

/// A RUN argument: a run directory, or `<experiment>` for its newest complete run.
pub(crate) fn resolve_run(
    arg: &str,
    out_root: &Path,
    suite: Option<&str>,
) -> anyhow::Result<LoadedRun> {
    let p = Path::new(arg);
    if p.is_dir() && p.join(rundir::MANIFEST_FILE).exists() {
        return load_run(p);
    }
    if p.is_dir() && p.join(rundir::LATEST).exists() {
        // out/<experiment>: its `latest` link
        return load_run(
            &p.join(rundir::LATEST)
                .canonicalize()
                .context("resolving `latest`")?,
        );
    }
    let mut skipped = Vec::new();
    newest_complete(out_root, arg, suite, &mut skipped).ok_or_else(|| {
        invalid(format!(
            "`{arg}` is neither a run directory nor an experiment with a complete run under {}{}",
            out_root.display(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" (unreadable: {})", skipped.join("; "))
            }
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// exp1's clean round `name` of the fixtures under `out/exp1/<as_name>`.
    fn round(out: &Path, name: &str, as_name: &str) -> PathBuf {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/compare/exp1-clean/exp1")
            .join(name);
        let to = out.join("exp1").join(as_name);
        std::fs::create_dir_all(&to).unwrap();
        for f in [
            rundir::MANIFEST_FILE,
            rundir::REPORT_FILE,
            rundir::STATUS_FILE,
        ] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
        to
    }

    #[test]
    fn a_scan_counts_each_run_once_and_reads_a_report_only_for_a_run_it_keeps() {
        let t = tempfile::tempdir().unwrap();
        let out = t.path();
        let r1 = round(out, "20261130T223353Z-r1", "20261130T223353Z-r1");
        let r2 = round(out, "20261130T223414Z-r2", "20261130T223414Z-r2");
        let r3 = round(out, "20261130T223437Z-r3", "20261130T223437Z-r3");
        // two copies of r3 (its run id): the newer folders, read first
        let c1 = round(out, "20261130T223437Z-r3", "20261130T223437Z-r3-2");
        let c2 = round(out, "20261130T223437Z-r3", "20261130T233437Z-r4");
        let all = |m: &mut dyn FnMut(&Manifest) -> bool| scan(out, "exp1", Want::all(None, m));
        let (runs, skipped) = all(&mut |_| true);
        let dirs: Vec<&PathBuf> = runs.iter().map(|r| &r.dir).collect();
        assert_eq!(
            dirs,
            [&r3, &r2, &r1],
            "the folder named after its run id is the run"
        );
        let copies: Vec<String> = skipped.iter().filter_map(Skipped::note).collect();
        let copy = |c: &Path| {
            format!(
                "copied run: {}: a copy of {} (run id 20261130T223437Z-r3), counted once",
                c.display(),
                r3.display()
            )
        };
        assert_eq!(copies, [copy(&c1), copy(&c2)]);
        // the scan stops at its limit
        let want = Want {
            suite: None,
            admits: &mut |_| true,
            limit: 2,
            together: false,
        };
        assert_eq!(scan(out, "exp1", want).0.len(), 2);
        // a report is read only for a run kept: a broken one of a run left out is no news
        std::fs::write(r1.join(rundir::REPORT_FILE), "{").unwrap();
        let (runs, skipped) = all(&mut |m| m.run_id != "20261130T223353Z-r1");
        assert_eq!(runs.len(), 2);
        assert!(
            skipped.iter().all(|s| matches!(s.why, Left::Copy { .. })),
            "{skipped:?}"
        );
        let (_, skipped) = all(&mut |_| true);
        assert!(
            skipped
                .iter()
                .any(|s| s.dir == r1 && matches!(s.why, Left::Unreadable(_))),
            "{skipped:?}"
        );
    }
}
