//! The version matrix spread by an existing scheduler: `perflab matrix plan` writes a job list
//! (one plain `perflab run ... --run-name NAME` per cell: experiment x suite x round), and
//! `perflab matrix run` hands it to one of three runners: here, one cell at a time (`local`),
//! GNU parallel over ssh (`hosts`), or a Slurm job array (`slurm`). The cells' run directories
//! come back into one out/ (`collect`), and `status` says where each cell stands. The cell
//! owns the model types here; the plan file's text is `planfile`.
pub mod collect;
pub mod hosts;
pub mod joblog;
pub mod local;
pub mod plan;
pub mod planfile;
pub(crate) mod run;
pub mod slurm;
pub mod status;

use crate::images::Suite;
use crate::rundir::cell::CellName;
use std::path::{Path, PathBuf};

/// The `perflab run` flags a matrix passes to every cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub quick: bool,
    pub fit: bool,
    pub no_align: bool,
    pub force_cpus: bool,
    pub cpus: Option<String>,
    pub sets: Vec<String>,
}

impl Flags {
    /// The planning flags `run` takes, and `--fit`.
    pub(crate) fn of(p: &crate::plan::planning::Planning, fit: bool) -> Flags {
        Flags {
            quick: p.quick,
            fit,
            no_align: p.no_align,
            force_cpus: p.force_cpus,
            cpus: p.cpus.clone(),
            sets: p.set.clone(),
        }
    }

    /// The flags as `perflab run` arguments, in a fixed order.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (on, flag) in [
            (self.quick, "--quick"),
            (self.fit, "--fit"),
            (self.no_align, "--no-align"),
            (self.force_cpus, "--force-cpus"),
        ] {
            if on {
                v.push(flag.to_string());
            }
        }
        if let Some(c) = &self.cpus {
            v.extend(["--cpus".to_string(), c.clone()]);
        }
        for s in &self.sets {
            v.extend(["--set".to_string(), s.clone()]);
        }
        v
    }
}

/// One cell: one round of one experiment on one suite, in its named run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cell {
    pub experiment: String,
    pub suite: Suite,
    pub name: CellName,
    pub flags: Flags,
}

impl Cell {
    /// `perflab run`'s arguments for this cell (after the program name).
    pub(crate) fn args(&self) -> Vec<String> {
        let mut v = vec![
            "run".to_string(),
            self.experiment.clone(),
            "--suite".into(),
            self.suite.as_str().into(),
            "--run-name".into(),
            self.name.to_string(),
        ];
        v.extend(self.flags.args());
        v
    }

    /// `<experiment>/<name>`: the cell's id in messages and in status.
    pub(crate) fn id(&self) -> String {
        format!("{}/{}", self.experiment, self.name)
    }

    /// The cell's command for a shell: `program` then the arguments, each quoted.
    pub(crate) fn shell_command(&self, program: &str) -> String {
        std::iter::once(program.to_string())
            .chain(self.args())
            .map(|a| shell_quote(&a))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A word for a POSIX shell: single-quoted unless it is plainly safe (newlines and all
/// inside the quotes). `=` is not plainly safe: a first word `PATH=/x` is an assignment.
pub(crate) fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:,+@%".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A plan: its id (the UTC time it was made: every cell's name starts with it), the command
/// that made it, and the cells still to run when it was made.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub id: chrono::DateTime<chrono::Utc>,
    /// `perflab matrix plan ...` as given (a comment in the file).
    pub made_by: String,
    /// Cells of the matrix that were already complete under the out/ root (a comment).
    pub skipped: usize,
    pub cells: Vec<Cell>,
}

impl Plan {
    pub(crate) fn id_str(&self) -> String {
        self.id.format("%Y%m%dT%H%M%SZ").to_string()
    }
}

/// Where a plan's runners keep their files: `<plan file>.work/<plan id>/` (a new plan of the
/// same file gets a fresh folder: its job log never mixes with another plan's).
pub(crate) fn work_dir(plan_file: &Path, plan: &Plan) -> PathBuf {
    let mut name = plan_file
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "matrix".into());
    name.push(".work");
    plan_file.with_file_name(name).join(plan.id_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_shell() {
        assert_eq!(shell_quote("demo-open"), "demo-open");
        assert_eq!(shell_quote("load.steps=[1,2]"), "'load.steps=[1,2]'");
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
        assert_eq!(shell_quote(""), "''");
        // a first word with `=` would be an assignment, a newline the end of a command
        assert_eq!(shell_quote("PATH=/x"), "'PATH=/x'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
    }
}
