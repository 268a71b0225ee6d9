//! Named run directories: a matrix cell's `out/<experiment>/<stamp>-r<round>-<label>/`
//! (`perflab run --run-name`), its attempts (`<name>`, `<name>-2`, ...: a failed attempt is
//! never overwritten, the next one gets the next suffix), the cell's state over its attempts,
//! and the provenance a cell's manifest records (`measurements.cell`: which scheduler ran it,
//! as which job, on which host).
use super::dir::{RunDir, read_status};
use super::status::RunState;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Longest cell label (`trixie`, `forky`, `bookworm`: the suite of the cell).
pub(crate) const MAX_LABEL: usize = 24;

/// A cell label: 2 to 24 characters `[a-z0-9]`, starting with a letter (a clash suffix is
/// digits, so the two never mix).
pub(crate) fn valid_label(s: &str) -> bool {
    (2..=MAX_LABEL).contains(&s.len())
        && s.as_bytes()[0].is_ascii_lowercase()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A cell's run-directory name, parsed: `20261201T101500Z-r2-forky`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellName {
    pub stamp: DateTime<Utc>,
    pub round: u32,
    pub label: String,
}

impl CellName {
    pub(crate) fn new(stamp: DateTime<Utc>, round: u32, label: &str) -> CellName {
        CellName {
            stamp,
            round,
            label: label.to_string(),
        }
    }

    /// Parse a name as `--run-name` takes it; the error says what a name looks like.
    pub(crate) fn parse(s: &str) -> Result<CellName, String> {
        let bad = || {
            format!(
                "`{}` is not a cell name: give <UTC stamp>-r<round>-<label>, e.g. 20261201T101500Z-r2-forky (the label 2-{MAX_LABEL} characters a-z0-9, starting with a letter)",
                s.escape_debug()
            )
        };
        let (stamp, rest) = s.split_once("-r").ok_or_else(bad)?;
        let (round, label) = rest.split_once('-').ok_or_else(bad)?;
        let stamp = chrono::NaiveDateTime::parse_from_str(stamp, "%Y%m%dT%H%M%SZ")
            .map_err(|_| bad())?
            .and_utc();
        let round: u32 = round
            .parse()
            .ok()
            .filter(|r| (1..=1_000_000).contains(r))
            .ok_or_else(bad)?;
        if !valid_label(label) || s.len() > 64 {
            return Err(bad());
        }
        Ok(CellName::new(stamp, round, label))
    }
}

impl std::fmt::Display for CellName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}-{}",
            super::dir::run_name(self.stamp, self.round),
            self.label
        )
    }
}

impl RunDir {
    /// A new attempt of cell `name` of `experiment_id`: `out/<experiment>/<name>/`, or
    /// `<name>-2`, ... when an earlier attempt left its folder (never overwritten).
    pub(crate) fn create_cell(
        out_root: &Path,
        experiment_id: &str,
        name: &CellName,
    ) -> anyhow::Result<RunDir> {
        RunDir::create_named(
            out_root,
            experiment_id,
            &name.to_string(),
            name.round,
            name.stamp,
        )
    }
}

/// The attempts of cell `name` under `out_root/<experiment_id>/`: `<name>`, `<name>-2`, ...,
/// in attempt order (at most the first 1000 suffixes are looked at).
pub(crate) fn attempts(out_root: &Path, experiment_id: &str, name: &str) -> Vec<PathBuf> {
    let parent = out_root.join(experiment_id);
    let mut v = Vec::new();
    for n in 1..=1000u32 {
        let p = match n {
            1 => parent.join(name),
            _ => parent.join(format!("{name}-{n}")),
        };
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => v.push(p),
            Ok(_) => {}
            // attempts are numbered without gaps; the first missing one ends them
            Err(_) if n > 1 => break,
            Err(_) => {}
        }
    }
    v
}

/// Where a cell stands, judged from its attempts' `status.json`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CellState {
    /// No attempt yet.
    Missing,
    /// An attempt completed (the first one that did).
    Complete { dir: PathBuf, host: Option<String> },
    /// An attempt is running and its owner is alive (on another host: cannot be judged, so
    /// taken as running).
    Running { dir: PathBuf, host: Option<String> },
    /// Every attempt failed, was aborted, or was left running by a dead process; the newest
    /// one's reason.
    Failed {
        dir: PathBuf,
        host: Option<String>,
        reason: String,
        attempts: usize,
    },
}

impl CellState {
    pub(crate) fn is_complete(&self) -> bool {
        matches!(self, CellState::Complete { .. })
    }
}

/// The state of cell `name` of `experiment_id` under `out_root`.
pub(crate) fn cell_state(out_root: &Path, experiment_id: &str, name: &str) -> CellState {
    let tries = attempts(out_root, experiment_id, name);
    let mut last = CellState::Missing;
    for dir in &tries {
        let status = read_status(dir).ok();
        let host = status.as_ref().and_then(|s| s.hostname.clone());
        let here = crate::owner::this_host();
        match status {
            Some(s) if s.state == RunState::Complete => {
                return CellState::Complete {
                    dir: dir.clone(),
                    host,
                };
            }
            Some(s)
                if s.state == RunState::Running
                    && (s.hostname.as_deref() != Some(here.as_str())
                        || super::status::owner_alive(&s)) =>
            {
                last = CellState::Running {
                    dir: dir.clone(),
                    host,
                };
            }
            s => {
                let reason = match s {
                    Some(s) if s.state == RunState::Running => {
                        "the perflab process died during the run (killed)".to_string()
                    }
                    Some(s) => s.reason.unwrap_or_else(|| format!("{:?}", s.state)),
                    None => "no readable status.json".to_string(),
                };
                last = CellState::Failed {
                    dir: dir.clone(),
                    host,
                    reason,
                    attempts: tries.len(),
                };
            }
        }
    }
    last
}

/// `measurements.cell`: the cell a run was (its name), and who ran it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// The cell's name as planned (`--run-name`).
    pub name: String,
    /// `slurm`, `parallel` or `shell` (a plain `perflab run --run-name`).
    pub scheduler: String,
    /// The scheduler's job: `slurm job 12_3 on node1`, `parallel job 4 (slot 1)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
}

impl CellRecord {
    /// The record of cell `name` run by this process, the scheduler read from the variables
    /// Slurm and GNU parallel set for their jobs.
    pub(crate) fn here(name: &str) -> CellRecord {
        CellRecord::from_env(name, |k| std::env::var(k).ok())
    }

    /// [`CellRecord::here`] with the environment given (pure, for tests). Values are cut to
    /// 64 printable characters: they end up in pages.
    pub(crate) fn from_env(name: &str, env: impl Fn(&str) -> Option<String>) -> CellRecord {
        let v = |k: &str| {
            env(k).map(|s| {
                s.chars()
                    .filter(|c| !c.is_control())
                    .take(64)
                    .collect::<String>()
            })
        };
        let (scheduler, job) = if let Some(id) = v("SLURM_JOB_ID") {
            let job = match (v("SLURM_ARRAY_JOB_ID"), v("SLURM_ARRAY_TASK_ID")) {
                (Some(a), Some(t)) => format!("{a}_{t}"),
                _ => id,
            };
            let node = v("SLURMD_NODENAME").unwrap_or_else(|| "?".into());
            ("slurm", Some(format!("slurm job {job} on {node}")))
        } else if let Some(seq) = v("PARALLEL_SEQ") {
            let slot = v("PARALLEL_JOBSLOT").unwrap_or_else(|| "?".into());
            (
                "parallel",
                Some(format!("parallel job {seq} (slot {slot})")),
            )
        } else {
            ("shell", None)
        };
        CellRecord {
            name: name.to_string(),
            scheduler: scheduler.into(),
            job,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        let n = CellName::parse("20261201T101500Z-r2-forky").unwrap();
        assert_eq!((n.round, n.label.as_str()), (2, "forky"));
        assert_eq!(n.to_string(), "20261201T101500Z-r2-forky");
        assert!(super::super::valid_run_name("20261201T101500Z-r2-forky"));
        assert!(super::super::valid_run_name("20261201T101500Z-r2-forky-3"));
        for bad in [
            "20261201T101500Z-r2",
            "20261201T101500Z-r0-forky",
            "20261201T101500Z-r2-x",
            "20261201T101500Z-r2-Forky",
            "20261201T101500Z-r2-fo;ky",
            "2026120T101500Z-r2-forky",
            "20261201T101500Z-r2-forky-2",
            "../x-r1-forky",
        ] {
            assert!(CellName::parse(bad).is_err(), "{bad}");
        }
        assert!(!super::super::valid_run_name("20261201T101500Z-r2-forky-x"));
        assert!(!super::super::valid_run_name(
            "20261201T101500Z-r2-forky-2-3"
        ));
    }

    #[test]
    fn the_scheduler_comes_from_its_variables() {
        let slurm = |k: &str| match k {
            "SLURM_JOB_ID" => Some("13".to_string()),
            "SLURM_ARRAY_JOB_ID" => Some("12".to_string()),
            "SLURM_ARRAY_TASK_ID" => Some("1".to_string()),
            "SLURMD_NODENAME" => Some("n\u{1b}1".to_string()),
            _ => None,
        };
        let r = CellRecord::from_env("c", slurm);
        assert_eq!(r.scheduler, "slurm");
        assert_eq!(r.job.as_deref(), Some("slurm job 12_1 on n1"));
        let par = |k: &str| (k == "PARALLEL_SEQ").then(|| "4".to_string());
        assert_eq!(
            CellRecord::from_env("c", par).job.as_deref(),
            Some("parallel job 4 (slot ?)")
        );
        assert_eq!(CellRecord::from_env("c", |_| None).scheduler, "shell");
    }

    #[test]
    fn a_cell_is_its_best_attempt() {
        let out = tempfile::tempdir().unwrap();
        let n = CellName::parse("20261201T101500Z-r1-trixie").unwrap();
        assert_eq!(
            cell_state(out.path(), "e1", &n.to_string()),
            CellState::Missing
        );
        let a = RunDir::create_cell(out.path(), "e1", &n).unwrap();
        a.mark(RunState::Failed, Some("stack-up failed")).unwrap();
        let s = cell_state(out.path(), "e1", &n.to_string());
        assert!(
            matches!(&s, CellState::Failed { reason, attempts: 1, .. } if reason == "stack-up failed"),
            "{s:?}"
        );
        let b = RunDir::create_cell(out.path(), "e1", &n).unwrap();
        assert_eq!(b.name(), "20261201T101500Z-r1-trixie-2");
        assert_eq!(b.round, 1);
        assert!(matches!(
            cell_state(out.path(), "e1", &n.to_string()),
            CellState::Running { .. }
        ));
        b.mark(RunState::Complete, None).unwrap();
        assert!(cell_state(out.path(), "e1", &n.to_string()).is_complete());
        assert_eq!(attempts(out.path(), "e1", &n.to_string()).len(), 2);
    }
}
