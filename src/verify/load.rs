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
    let read = |name: &str, kind: FileKind| -> anyhow::Result<String> {
        match read::doc(&RunFile::at(dir, name, kind)) {
            Ok(d) => Ok(d.text),
            Err(e) if e.is_missing() => Err(invalid(format!(
                "{}: no such file (the run has no {name}: see its {})",
                dir.join(name).display(),
                rundir::STATUS_FILE
            ))),
            Err(e) => Err(e.into_anyhow()),
        }
    };
    let manifest =
        Manifest::parse(&read(rundir::MANIFEST_FILE, FileKind::Manifest)?).map_err(|e| {
            invalid(format!(
                "{}: {e:#}",
                dir.join(rundir::MANIFEST_FILE).display()
            ))
        })?;
    let status: Status = serde_json::from_str(&read(rundir::STATUS_FILE, FileKind::Status)?)
        .map_err(|e| invalid(format!("{}: {e}", dir.join(rundir::STATUS_FILE).display())))?;
    let report =
        rundir::report::parse(&read(rundir::REPORT_FILE, FileKind::Report)?).map_err(|e| {
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

/// A run directory left out of a set of rounds, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skipped {
    pub dir: PathBuf,
    pub why: String,
    /// It could not be read (as opposed to: not complete, another suite).
    pub unreadable: bool,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.dir.display(), self.why)
    }
}

/// Complete runs of an experiment with a report, newest first, optionally of one suite, and
/// every run directory left out with the reason (not complete, unreadable, another suite).
pub(crate) fn scan_runs(
    out_root: &Path,
    experiment_id: &str,
    suite: Option<&str>,
) -> (Vec<LoadedRun>, Vec<Skipped>) {
    let (mut out, mut skipped) = (Vec::new(), Vec::new());
    let mut skip = |dir: &Path, why: String, unreadable: bool| {
        skipped.push(Skipped {
            dir: dir.to_path_buf(),
            why,
            unreadable,
        })
    };
    for r in rundir::list_runs(out_root, Some(experiment_id))
        .into_iter()
        .rev()
    {
        match r.status() {
            Ok(s) if s.state == RunState::Complete => {}
            Ok(s) => {
                let state = serde_json::to_string(&s.state).unwrap_or_default();
                let reason = s.reason.map(|r| format!(" ({r})")).unwrap_or_default();
                skip(
                    &r.path,
                    format!("not complete: {}{reason}", state.trim_matches('"')),
                    false,
                );
                continue;
            }
            Err(e) => {
                skip(&r.path, format!("{e:#}"), true);
                continue;
            }
        }
        match load_run(&r.path) {
            Ok(l) => match suite {
                Some(s) if l.suite().as_deref() != Some(s) => {
                    let has = l.suite().unwrap_or_else(|| "unknown".into());
                    skip(&r.path, format!("suite {has}, not {s}"), false);
                }
                _ => out.push(l),
            },
            Err(e) => skip(&r.path, format!("{e:#}"), true),
        }
    }
    (out, skipped)
}

/// Complete runs of an experiment with a report, newest first, optionally of one suite.
/// Unreadable runs are skipped with a note in `skipped`.
pub(crate) fn complete_runs(
    out_root: &Path,
    experiment_id: &str,
    suite: Option<&str>,
    skipped: &mut Vec<String>,
) -> Vec<LoadedRun> {
    let (runs, skips) = scan_runs(out_root, experiment_id, suite);
    skipped.extend(
        skips
            .iter()
            .filter(|s| s.unreadable)
            .map(Skipped::to_string),
    );
    runs
}

/// The newest complete run of an experiment (of a suite).
pub fn newest_complete(
    out_root: &Path,
    experiment_id: &str,
    suite: Option<&str>,
    skipped: &mut Vec<String>,
) -> Option<LoadedRun> {
    complete_runs(out_root, experiment_id, suite, skipped)
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
    let runs: Vec<LoadedRun> = complete_runs(out_root, experiment_id, suite, skipped)
        .into_iter()
        .filter(|r| r.manifest.measurements.fit.is_some() == fitted)
        .collect();
    let Some(newest) = runs.first() else {
        return runs;
    };
    let want = Config::of(&newest.manifest);
    runs.into_iter()
        .filter(|r| want.admits(&Config::of(&r.manifest)))
        .collect()
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
