//! Leftovers of killed runs: run directories still marked `running` whose process is gone are
//! marked aborted, and Docker objects of `perflab run` stacks (run ids `run-…`) that no live
//! run owns are removed. Called with the host lock held, so no live run can own them.
use std::collections::BTreeSet;
use std::path::Path;

use crate::docker::{Docker, LABEL_RUN};
use crate::rundir;

/// Prefix of the run ids `perflab run` gives its stacks (exploration stacks use `up-`).
pub const RUN_ID_PREFIX: &str = "run-";

/// What a sweep found and removed.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Swept {
    pub aborted_dirs: Vec<String>,
    pub removed_runs: Vec<String>,
    pub removed_objects: usize,
}

/// The run ids among label values that belong to `perflab run` (pure, for tests).
pub fn run_ids_to_sweep<'a>(
    labels: impl IntoIterator<Item = &'a str>,
    keep: &BTreeSet<String>,
) -> BTreeSet<String> {
    labels
        .into_iter()
        .filter(|r| r.starts_with(RUN_ID_PREFIX) && !keep.contains(*r))
        .map(str::to_owned)
        .collect()
}

/// Sweep leftovers. `keep` holds run ids that must survive (none while the lock is held).
pub async fn sweep(
    docker: &Docker,
    out_root: &Path,
    keep: &BTreeSet<String>,
) -> anyhow::Result<Swept> {
    let mut swept = Swept::default();
    for d in rundir::mark_stale_runs(out_root) {
        swept.aborted_dirs.push(d.path.display().to_string());
    }
    let (runs, n) = sweep_engine(docker, keep).await?;
    swept.removed_objects = n;
    swept.removed_runs = runs;
    Ok(swept)
}

/// Remove the Docker objects of `perflab run` stacks no live run owns on one engine (the
/// stack's or the load generator's); returns the run ids and the number of objects removed.
pub async fn sweep_engine(
    docker: &Docker,
    keep: &BTreeSet<String>,
) -> anyhow::Result<(Vec<String>, usize)> {
    let objects = docker.list_labelled(&[LABEL_RUN.to_string()]).await?;
    let ids = run_ids_to_sweep(
        objects
            .iter()
            .filter_map(|o| o.labels.get(LABEL_RUN).map(String::as_str)),
        keep,
    );
    let mut n = 0;
    let mut runs = Vec::new();
    for id in ids {
        n += docker
            .remove_labelled(&[format!("{LABEL_RUN}={id}")])
            .await?
            .len();
        runs.push(id);
    }
    Ok((runs, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_run_stacks_not_kept_are_swept() {
        let keep: BTreeSet<String> = ["run-b".to_string()].into();
        let got = run_ids_to_sweep(
            ["run-a", "up-php-x1", "run-b", "smoke-node-y", "run-a"],
            &keep,
        );
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            vec!["run-a".to_string()]
        );
    }
}
