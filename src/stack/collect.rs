//! What a run keeps of a stack besides the samplers' files: every container's output in
//! `logs/<role>.log`, the sources cut from a container's output (`lab::source::Read::
//! OutputLines`: the app's metrics lines in `samples/node.jsonl`), and the files the lab's
//! descriptor names (Laravel's log, the access logs of diag-acc). The paths come from the run
//! directory's layout (`rundir::layout`, above this module), passed down as [`CollectPaths`].
use super::started::LabStack;
use crate::atomic;
use crate::docker::Docker;
use crate::experiment::Experiment;
use crate::lab::Role;
use crate::lab::source::Read;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Where a stack's files go in the run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CollectPaths {
    /// `logs/`: the lab's other files (`lab::CollectFile::dest`) go under it.
    pub logs_dir: PathBuf,
    /// Each role's container log (`logs/<role>.log`).
    pub role_logs: Vec<(Role, PathBuf)>,
    /// Each source cut from a container's output, by name: its file (`samples/node.jsonl`).
    pub output_samples: Vec<(&'static str, PathBuf)>,
}

impl LabStack {
    /// Container logs into `to.role_logs`; the output sources into `to.output_samples`; the
    /// lab's other files (`lab::CollectFile`) under `to.logs_dir`.
    pub(crate) async fn collect_logs(
        &self,
        docker: &Docker,
        exp: &Experiment,
        to: &CollectPaths,
    ) -> Result<()> {
        let lab = crate::lab::descriptor(self.lab);
        let logs_dir = &to.logs_dir;
        std::fs::create_dir_all(logs_dir)?;
        for (role, c) in &self.containers {
            let text = docker.logs(&c.id, None).await.unwrap_or_default();
            let Some((_, log)) = to.role_logs.iter().find(|(r, _)| r == role) else {
                anyhow::bail!("no log path for the {} container", role.log_name());
            };
            atomic::write_atomic(log, text.as_bytes())?;
            let cut = lab.info().sources.iter().filter(|s| s.offered_by == *role);
            for s in cut.filter(|s| s.read == Read::OutputLines) {
                let lines = crate::lab::metrics::metrics_lines(&text, &c.name);
                let Some((_, path)) = to.output_samples.iter().find(|(n, _)| *n == s.name) else {
                    anyhow::bail!("no path for the {} samples", s.name);
                };
                if !lines.is_empty() {
                    if let Some(dir) = path.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    atomic::write_atomic(path, lines.as_bytes())?;
                }
            }
        }
        for f in lab.collect(&exp.stack) {
            let bytes = match self.read_file(docker, f.role, f.path).await {
                Ok(b) => b,
                Err(e) if f.required => {
                    return Err(e).with_context(|| format!("reading the access log {}", f.path));
                }
                Err(_) => continue,
            };
            let dest = logs_dir.join(f.dest);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)?;
            }
            atomic::write_atomic(&dest, &bytes)?;
        }
        Ok(())
    }
}
