//! `perflab matrix status`: where each cell of a plan stands (done, running, failed,
//! remaining) and on which host, from its run directories under the out/ root and, for cells
//! GNU parallel ran elsewhere, its job log and results (`joblog`). Reads only.
use super::{Cell, Plan, joblog};
use crate::rundir::cell::{CellState, cell_state};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One cell's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct CellStatus {
    pub cell: String,
    /// `done`, `running`, `failed` or `remaining`.
    pub state: &'static str,
    pub host: Option<String>,
    pub dir: Option<PathBuf>,
    pub reason: Option<String>,
}

/// The whole matrix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MatrixStatus {
    pub plan: String,
    pub cells: Vec<CellStatus>,
    pub done: usize,
    pub running: usize,
    pub failed: usize,
    pub remaining: usize,
}

/// The runner's files of a plan: its work folder and the out/ root it collects into.
pub(crate) struct Where<'a> {
    pub work: &'a Path,
    pub out: &'a Path,
}

/// Is the controller that wrote `work/controller.pid` (pid and start ticks) still alive?
pub(crate) fn controller_alive(work: &Path) -> bool {
    use crate::rundir::read::{FileKind, RunFile, doc};
    // bounded and regular only: a FIFO or /dev/zero planted there is refused, never read
    let Ok(d) = doc(&RunFile::loose(&work.join("controller.pid"), FileKind::Pid)) else {
        return false;
    };
    let text = d.text;
    let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    let (Some(Some(pid)), Some(Some(start))) = (it.next(), it.next()) else {
        return false;
    };
    crate::owner::proc_state(pid as u32)
        .is_some_and(|p| p.start == start && !matches!(p.state, 'Z' | 'X' | 'x'))
}

/// Record this process as the plan's controller.
pub(crate) fn mark_controller(work: &Path) -> anyhow::Result<()> {
    let me = crate::owner::Owner::me();
    crate::atomic::write_atomic(
        &work.join("controller.pid"),
        format!("{} {}\n", me.pid, me.start).as_bytes(),
    )?;
    Ok(())
}

/// The status of every cell of `plan`.
pub(crate) fn status(plan: &Plan, w: &Where) -> MatrixStatus {
    let finished = joblog::finished(&w.work.join("joblog"));
    let results = w.work.join("results");
    let live = controller_alive(w.work);
    // job N is the plan's cell N (`hosts::write_jobs`)
    let cells: Vec<CellStatus> = (1..)
        .zip(&plan.cells)
        .map(|(seq, c)| one(c, w.out, Some(seq), &finished, &results, live))
        .collect();
    let n = |s: &str| cells.iter().filter(|c| c.state == s).count();
    MatrixStatus {
        plan: plan.id_str(),
        done: n("done"),
        running: n("running"),
        failed: n("failed"),
        remaining: n("remaining"),
        cells,
    }
}

fn one(
    c: &Cell,
    out: &Path,
    seq: Option<usize>,
    finished: &std::collections::BTreeMap<usize, joblog::Finished>,
    results: &Path,
    live: bool,
) -> CellStatus {
    let row = |state, host, dir, reason| CellStatus {
        cell: c.id(),
        state,
        host,
        dir,
        reason,
    };
    let local = cell_state(out, &c.experiment, &c.name.to_string());
    match local {
        CellState::Complete { dir, host } => return row("done", host, Some(dir), None),
        CellState::Running { dir, host } => return row("running", host, Some(dir), None),
        _ => {}
    }
    // a cell sent elsewhere: the job log knows how it ended, its results who ran it
    if let Some(seq) = seq {
        let on = joblog::started_on(results, seq);
        match finished.get(&seq) {
            Some(f) if f.exit != 0 || f.signal != 0 => {
                let why = joblog::reason(results, seq)
                    .unwrap_or_else(|| format!("exit {} (signal {}), no output", f.exit, f.signal));
                return row("failed", on.or(Some(f.host.clone())), None, Some(why));
            }
            Some(f) => {
                return row(
                    "remaining",
                    on.or(Some(f.host.clone())),
                    None,
                    Some("returned, not collected yet: `perflab matrix run` collects it".into()),
                );
            }
            None if live && joblog::started(results, seq) => {
                return row("running", on, None, None);
            }
            None => {}
        }
    }
    match local {
        CellState::Failed {
            dir,
            host,
            reason,
            attempts,
        } => row(
            "failed",
            host,
            Some(dir),
            Some(format!("{reason} ({attempts} attempt(s))")),
        ),
        _ => row("remaining", None, None, None),
    }
}

/// The status as text: one line per cell, then the counts.
pub(crate) fn render(s: &MatrixStatus) -> String {
    let mut t = String::new();
    for c in &s.cells {
        t.push_str(&format!(
            "{:<9} {:<44} {}",
            c.state,
            c.cell,
            c.host.as_deref().unwrap_or("-")
        ));
        if let Some(d) = &c.dir {
            t.push_str(&format!("  {}", d.display()));
        }
        if let Some(r) = &c.reason {
            t.push_str(&format!("  ({r})"));
        }
        t.push('\n');
    }
    t.push_str(&format!(
        "plan {}: {} done, {} running, {} failed, {} remaining ({} cells)\n",
        s.plan,
        s.done,
        s.running,
        s.failed,
        s.remaining,
        s.cells.len()
    ));
    t
}
