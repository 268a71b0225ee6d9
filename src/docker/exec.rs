//! A command run in a running container (the Engine API's exec): its exit code and its output
//! (stdout and stderr together, cut at [`MAX_OUTPUT`] bytes). An experiment's timed actions (a
//! php-fpm reload during a collapse) and the sources read from inside a container run through it.
use super::engine::Docker;
use super::error::{DockerError, Result};
use bollard::exec::StartExecResults;
use bollard::models::ExecConfig;
use futures_util::StreamExt;

/// The most output kept of one exec.
pub(crate) const MAX_OUTPUT: usize = 64 * 1024;

/// What an exec did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExecOutput {
    /// The command's exit code (None: the engine did not say).
    pub exit_code: Option<i64>,
    /// Its stdout and stderr, interleaved as they came, lossily UTF-8.
    pub output: String,
}

impl Docker {
    /// Run `cmd` (argv, no shell) in the running container `id` and wait for it to end.
    pub(crate) async fn exec(&self, id: &str, cmd: &[String]) -> Result<ExecOutput> {
        let err = |what: &str, e| DockerError::api(format!("{what} in container {id}"), e);
        let config = ExecConfig {
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            cmd: Some(cmd.to_vec()),
            ..Default::default()
        };
        let created = self
            .raw()
            .create_exec(id, config)
            .await
            .map_err(|e| err("create exec", e))?;
        let started = self
            .raw()
            .start_exec(&created.id, None)
            .await
            .map_err(|e| err("start exec", e))?;
        let mut bytes = Vec::new();
        if let StartExecResults::Attached { mut output, .. } = started {
            while let Some(chunk) = output.next().await {
                let chunk = chunk.map_err(|e| err("read exec output", e))?;
                let room = MAX_OUTPUT.saturating_sub(bytes.len());
                bytes.extend(chunk.into_bytes().iter().take(room));
            }
        }
        let inspected = self
            .raw()
            .inspect_exec(&created.id)
            .await
            .map_err(|e| err("inspect exec", e))?;
        Ok(ExecOutput {
            exit_code: inspected.exit_code,
            output: String::from_utf8_lossy(&bytes).into_owned(),
        })
    }
}
