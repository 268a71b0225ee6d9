//! Bringing the cells GNU parallel returned into the one out/ root: each job's run directories
//! land under `<out>/.incoming/<plan id>/` (rsync, by `--return`); a cell whose job finished
//! well (its job-log line is written once the copy is whole) and that is not complete under
//! out/ yet moves into `out/<experiment>/` by a rename (never over an existing directory: a
//! taken name gets the next attempt suffix). A half-copied cell is never moved.
use super::{Plan, joblog};
use crate::rundir::cell::{attempts, cell_state};
use crate::rundir::{RunState, read_status};
use std::path::{Path, PathBuf};

/// The folder a plan's returned cells land in.
pub(crate) fn incoming(out: &Path, plan: &Plan) -> PathBuf {
    out.join(".incoming").join(plan.id_str())
}

/// Where cell `id` (`<experiment>/<name>`) sits on a host, relative to the login's home
/// directory, and so under [`incoming`] once returned: `<remote dir>/cells/<id>`.
pub(crate) fn remote_cell_dir(remote_dir: &str, id: &str) -> String {
    format!("{remote_dir}/cells/{id}")
}

/// Move every returned, complete cell of `plan` into `out`; returns the directories it moved.
pub(crate) fn collect(
    plan: &Plan,
    work: &Path,
    out: &Path,
    remote_dir: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let finished = joblog::finished(&work.join("joblog"));
    let inc = incoming(out, plan);
    let mut moved = Vec::new();
    // job N is the plan's cell N (`hosts::write_jobs`)
    for (seq, c) in (1..).zip(&plan.cells) {
        let name = c.name.to_string();
        if !finished
            .get(&seq)
            .is_some_and(|f| f.exit == 0 && f.signal == 0)
            || cell_state(out, &c.experiment, &name).is_complete()
        {
            continue;
        }
        let root = inc.join(remote_cell_dir(remote_dir, &c.id())).join("out");
        let done = attempts(&root, &c.experiment, &name)
            .into_iter()
            .find(|d| read_status(d).is_ok_and(|s| s.state == RunState::Complete));
        let Some(src) = done else { continue };
        let parent = crate::atomic::create_dirs_under(out, &[&c.experiment])?;
        moved.push(move_in(&src, &parent, &name)?);
    }
    Ok(moved)
}

/// Rename `src` to `parent/<name>` or the first free `<name>-N` (a rename never replaces a
/// non-empty directory, and an empty one is only taken when it is free: `create_dir` first).
fn move_in(src: &Path, parent: &Path, name: &str) -> anyhow::Result<PathBuf> {
    for n in 1..=1000u32 {
        let to = match n {
            1 => parent.join(name),
            _ => parent.join(format!("{name}-{n}")),
        };
        if std::fs::create_dir(&to).is_err() {
            continue;
        }
        // `to` is ours and empty: rename replaces an empty directory atomically
        match std::fs::rename(src, &to) {
            Ok(()) => return Ok(to),
            Err(e) => {
                let _ = std::fs::remove_dir(&to);
                return Err(anyhow::anyhow!(
                    "moving {} to {}: {e}",
                    src.display(),
                    to.display()
                ));
            }
        }
    }
    anyhow::bail!("no free name for {name} under {}", parent.display())
}
