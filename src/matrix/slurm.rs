//! `perflab matrix run --slurm [--submit]`: an sbatch script of one job array, a task per cell
//! not complete yet, each `--exclusive` on its node (one measurement per host; Slurm's
//! `task/cgroup` with `ConstrainCores` adds the cpuset), every task writing into the shared
//! out/ root. The script holds the cells' commands in a `case` on `SLURM_ARRAY_TASK_ID`, each
//! word quoted, so it depends on no file but perflab. `--submit` hands it to `sbatch`.
use super::{Plan, shell_quote};
use crate::rundir::cell::cell_state;
use std::path::Path;

/// The script, and how many tasks it has (0: nothing left to run).
pub(crate) fn script(plan: &Plan, out: &Path, work: &Path, program: &str) -> (String, usize) {
    let mut cases = String::new();
    let mut n = 0;
    for c in &plan.cells {
        if cell_state(out, &c.experiment, &c.name.to_string()).is_complete() {
            continue;
        }
        n += 1;
        cases.push_str(&format!("  {n}) {} ;;\n", c.shell_command(program)));
    }
    let log = work.join("slurm-%A_%a.out");
    let s = format!(
        "#!/bin/bash\n\
         # perflab matrix plan {id}: {n} cell(s), one array task each (perflab matrix run --slurm)\n\
         #SBATCH --job-name=perflab-{id}\n\
         #SBATCH --array=1-{n}\n\
         #SBATCH --exclusive\n\
         #SBATCH --nodes=1\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --output={log}\n\
         set -u\n\
         export PERFLAB_OUT={out}\n\
         echo \"perflab-matrix: task ${{SLURM_ARRAY_TASK_ID}} on $(hostname)\"\n\
         case \"${{SLURM_ARRAY_TASK_ID:?}}\" in\n\
         {cases}  *) echo \"no cell for task $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\n\
         esac\n",
        id = plan.id_str(),
        log = shell_quote(&log.display().to_string()),
        out = shell_quote(&out.display().to_string()),
    );
    (s, n)
}

/// `sbatch FILE`: the job id it printed.
pub(crate) fn submit(script: &Path) -> anyhow::Result<String> {
    let o = std::process::Command::new("sbatch")
        .arg("--parsable")
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
