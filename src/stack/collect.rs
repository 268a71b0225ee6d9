//! What a run keeps of a stack besides the samplers' files: every container's output in
//! `logs/<role>.log`, the app's metrics lines in `samples/node.jsonl`, and the files the lab's
//! descriptor names (Laravel's log, the access logs of diag-acc).
use super::LabStack;
use crate::atomic;
use crate::docker::Docker;
use crate::experiment::Experiment;
use anyhow::{Context, Result};
use std::path::Path;

impl LabStack {
    /// Container logs into `<run_dir>/logs/<role>.log`; the app's metrics lines into
    /// `<run_dir>/samples/node.jsonl`; the lab's other files (`lab::CollectFile`) under `logs/`.
    pub async fn collect_logs(
        &self,
        docker: &Docker,
        exp: &Experiment,
        run_dir: &Path,
    ) -> Result<()> {
        let lab = crate::lab::descriptor(self.lab);
        let logs_dir = run_dir.join("logs");
        std::fs::create_dir_all(&logs_dir)?;
        for (role, c) in &self.containers {
            let text = docker.logs(&c.id, None).await.unwrap_or_default();
            atomic::write_atomic(
                &logs_dir.join(format!("{}.log", role.log_name())),
                text.as_bytes(),
            )?;
            if lab.info().metrics_role == Some(*role) {
                let lines = crate::lab::metrics::metrics_lines(&text, &c.name);
                if !lines.is_empty() {
                    std::fs::create_dir_all(run_dir.join("samples"))?;
                    atomic::write_atomic(&run_dir.join("samples/node.jsonl"), lines.as_bytes())?;
                }
            }
        }
        for f in lab.collect(exp) {
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
