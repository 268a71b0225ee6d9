//! The acknowledged change points, `out/history-ack.json` (`perflab history ack EXP POINT`),
//! and the alert (`history --check`): a regression (a figure moved the bad way, or a claim went
//! from pass to fail) after the newest acknowledged point of its series. The file is out/'s,
//! never a run directory's; it is written atomically and never through a symlink (`atomic`),
//! read through the bounded reader.
use super::model::{Ack, History, Series};
use crate::rundir::read::{self, FileKind, RunFile};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file's name under out/.
pub const ACK_FILE: &str = "history-ack.json";

#[derive(Debug, Default, Serialize, Deserialize)]
struct AckFile {
    acks: Vec<Ack>,
}

fn path(out_root: &Path) -> PathBuf {
    out_root.join(ACK_FILE)
}

/// The acknowledgements recorded under `out_root` (none when the file is absent).
pub fn read(out_root: &Path) -> anyhow::Result<Vec<Ack>> {
    let f = RunFile::loose(&path(out_root), FileKind::HistoryAck);
    match read::doc(&f) {
        Ok(d) => {
            let a: AckFile = serde_json::from_str(&d.text).map_err(|e| {
                crate::error::invalid(format!(
                    "{}: {e} (fix it or remove it: it only holds acknowledgements)",
                    f.path.display()
                ))
            })?;
            Ok(a.acks)
        }
        Err(e) if e.is_missing() => Ok(Vec::new()),
        Err(e) => Err(e.into_anyhow()),
    }
}

/// The point `point` of `exp` in `h`: its run label (`exp/<dir>`) or its directory's name.
fn find<'h>(h: &'h History, exp: &str, point: &str) -> Option<&'h super::points::Point> {
    let label = format!("{exp}/{point}");
    h.series
        .iter()
        .filter(|s| s.experiment == exp)
        .flat_map(|s| &s.points)
        .find(|p| p.run == point || p.run == label || p.runs.contains(&label))
}

/// Record that `point` of `exp` was seen; an unknown point is bad input (exit 2). Returns the
/// point's run label.
pub fn ack(
    out_root: &Path,
    h: &History,
    exp: &str,
    point: &str,
    now: DateTime<Utc>,
) -> anyhow::Result<String> {
    let Some(p) = find(h, exp, point) else {
        let known: Vec<&str> = h
            .series
            .iter()
            .filter(|s| s.experiment == exp)
            .flat_map(|s| s.changes.iter().map(|c| c.run.as_str()))
            .collect();
        return Err(crate::error::invalid(format!(
            "`{point}` is not a point of {exp}'s history under {} (its change points: {})",
            out_root.display(),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    };
    let mut file = AckFile {
        acks: read(out_root)?,
    };
    file.acks.push(Ack {
        experiment: exp.to_string(),
        point: p.run.clone(),
        point_created: p.created,
        acked: now,
    });
    let mut text = serde_json::to_string_pretty(&file)?;
    text.push('\n');
    crate::atomic::write_atomic(&path(out_root), text.as_bytes())
        .map_err(|e| anyhow::anyhow!("{}: {e}", path(out_root).display()))?;
    Ok(p.run.clone())
}

/// The newest acknowledged point's time in series `s`.
fn acked_until(s: &Series, acks: &[Ack]) -> Option<DateTime<Utc>> {
    acks.iter()
        .filter(|a| a.experiment == s.experiment)
        .filter(|a| s.points.iter().any(|p| p.run == a.point))
        .map(|a| a.point_created)
        .max()
}

/// The regressions after the newest acknowledged point of their series, one line each; empty:
/// nothing to act on.
pub fn check(h: &History) -> Vec<String> {
    let mut out = Vec::new();
    for s in &h.series {
        let after = acked_until(s, &h.acks);
        let new = |t: DateTime<Utc>| after.is_none_or(|a| t > a);
        for c in &s.changes {
            if c.regression == Some(true) && new(c.created) {
                out.push(format!(
                    "{} ({}): {} {:+.1} % at {} (p {:.1e}): {}",
                    s.experiment,
                    s.suite,
                    c.metric,
                    c.change_pct,
                    c.run,
                    c.pvalue,
                    c.cause()
                ));
            }
        }
        for f in &s.flips {
            if new(f.first_fail_at) {
                out.push(format!(
                    "{} ({}): claim {} fails since {} (last pass {})",
                    s.experiment, s.suite, f.claim, f.first_fail, f.last_pass
                ));
            }
        }
    }
    out
}
