//! `perflab matrix run --slurm [--submit]`: an sbatch script of one job array, a task per cell
//! not complete yet, each `--exclusive` on its node (one measurement per host; Slurm's
//! `task/cgroup` with `ConstrainCores` adds the cpuset), every task writing into the shared
//! out/ root. The script holds the cells' commands in a `case` on `SLURM_ARRAY_TASK_ID`, each
//! word quoted for bash (newlines included), so it depends on no file but perflab. No path is
//! written into an `#SBATCH` line (a comment to bash, where a newline would end it and start
//! a command): `--submit` hands the log's path to `sbatch` as an argument.
use super::{Plan, shell_quote};
use crate::rundir::cell::cell_state;
use std::path::Path;

/// The script, and how many tasks it has (0: nothing left to run).
pub(crate) fn script(plan: &Plan, out: &Path, program: &str) -> (String, usize) {
    let mut cases = String::new();
    let mut n = 0;
    for c in &plan.cells {
        if cell_state(out, &c.experiment, &c.name.to_string()).is_complete() {
            continue;
        }
        n += 1;
        cases.push_str(&format!("  {n}) {} ;;\n", c.shell_command(program)));
    }
    let s = format!(
        "#!/bin/bash\n\
         # perflab matrix plan {id}: {n} cell(s), one array task each (perflab matrix run --slurm)\n\
         # `perflab matrix run --slurm --submit` submits it with its log in the plan's work folder\n\
         #SBATCH --job-name=perflab-{id}\n\
         #SBATCH --array=1-{n}\n\
         #SBATCH --exclusive\n\
         #SBATCH --nodes=1\n\
         #SBATCH --ntasks=1\n\
         set -u\n\
         export PERFLAB_OUT={out}\n\
         echo \"perflab-matrix: task ${{SLURM_ARRAY_TASK_ID}} on $(hostname)\"\n\
         case \"${{SLURM_ARRAY_TASK_ID:?}}\" in\n\
         {cases}  *) echo \"no cell for task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n\
         esac\n",
        id = plan.id_str(),
        out = shell_quote(&out.display().to_string()),
    );
    (s, n)
}

/// `sbatch --output=WORK/slurm-%A_%a.out FILE` (the path an argument, never in the script):
/// the job id it printed.
pub(crate) fn submit(script: &Path, work: &Path) -> anyhow::Result<String> {
    let mut log = std::ffi::OsString::from("--output=");
    log.push(work.join("slurm-%A_%a.out"));
    let o = std::process::Command::new("sbatch")
        .arg("--parsable")
        .arg(log)
        .arg(script)
        .output()
        .map_err(|e| anyhow::anyhow!("starting sbatch ({e}): is Slurm installed here?"))?;
    if !o.status.success() {
        anyhow::bail!(
            "sbatch {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&o.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run by bash as Slurm runs task 1, the script hands the cell its out/ root and program
    /// exactly, whatever they hold (a newline, a quote, `#`, `=`): nothing else runs.
    #[test]
    fn every_path_and_word_reaches_the_cell_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        let text = "# perflab matrix plan 1\n# id 20261201T101500Z\n\
            perflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie\n";
        let plan = super::super::planfile::parse(text).unwrap();
        let out = d.path().join("o'ut\ntouch PWNED #");
        let program = d.path().join("A=1 perflab");
        std::fs::write(
            &program,
            "#!/bin/sh\nprintf '%s' \"$PERFLAB_OUT\" > \"$(dirname \"$0\")/got\"\n",
        )
        .unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let (s, n) = script(&plan, &out, &program.display().to_string());
        assert_eq!(n, 1);
        assert!(
            !s.lines()
                .any(|l| l.starts_with("#SBATCH") && l.contains('/')),
            "{s}"
        );
        let path = d.path().join("matrix.sbatch");
        std::fs::write(&path, &s).unwrap();
        let o = std::process::Command::new("bash")
            .arg(&path)
            .current_dir(d.path())
            .env("SLURM_ARRAY_TASK_ID", "1")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{s}\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!d.path().join("PWNED").exists(), "{s}");
        let got = std::fs::read_to_string(d.path().join("got")).unwrap();
        assert_eq!(got, out.display().to_string());
    }
}
