//! `perflab matrix run --local`: the cells here, one after the other, each the plain
//! `perflab run` command of the plan as a child process (which takes the host lock itself, so
//! two matrices on one host still serialise). A cell already complete under out/ is skipped;
//! a failed cell does not stop the others. Killing this controller loses no complete cell: the
//! next `matrix run` skips them, and a cell still running in an orphaned child is found by
//! the child's own check once it holds the lock.
use super::Plan;
use crate::rundir::cell::cell_state;
use std::path::Path;
use std::time::Instant;

/// How one cell went.
#[derive(Debug, Clone)]
pub(crate) struct CellRun {
    pub cell: String,
    pub seconds: f64,
    pub exit: Option<i32>,
}

/// How the cells went; `skipped` were complete before.
#[derive(Debug, Clone, Default)]
pub(crate) struct LocalSummary {
    pub ran: Vec<CellRun>,
    pub skipped: usize,
    pub interrupted: bool,
}

/// Run the cells of `plan` with `program` (this perflab), into `out`.
pub(crate) fn run(
    plan: &Plan,
    program: &Path,
    out: &Path,
    quiet: bool,
) -> anyhow::Result<LocalSummary> {
    let mut s = LocalSummary::default();
    let total = plan.cells.len();
    for (i, c) in plan.cells.iter().enumerate() {
        if cell_state(out, &c.experiment, &c.name.to_string()).is_complete() {
            s.skipped += 1;
            continue;
        }
        if !quiet {
            crate::say!("matrix: cell {}/{total} {}", i + 1, c.id());
        }
        let t0 = Instant::now();
        let mut cmd = std::process::Command::new(program);
        cmd.args(c.args()).arg("--out").arg(out);
        if quiet {
            cmd.arg("--quiet");
        }
        let status = cmd
            .status()
            .map_err(|e| anyhow::anyhow!("starting {}: {e}", program.display()))?;
        let run = CellRun {
            cell: c.id(),
            seconds: t0.elapsed().as_secs_f64(),
            exit: status.code(),
        };
        if !quiet {
            crate::say!(
                "matrix: cell {} exit {:?} in {:.1} s",
                run.cell,
                run.exit,
                run.seconds
            );
        }
        s.ran.push(run);
        // the child took Ctrl-C too (same process group) and exited 130
        if status.code() == Some(130)
            || std::os::unix::process::ExitStatusExt::signal(&status).is_some()
        {
            s.interrupted = true;
            break;
        }
    }
    Ok(s)
}
