//! The timed actions of a load (`load.actions`; the real engine's half): one task per action
//! that waits for its planned instant and runs its command in its role's container through
//! the Docker API's exec, recorded as an [`ActionRun`]; what a load that ended first left
//! unrun is recorded so.
use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;

use crate::analyze::actions::ActionRun;
use crate::docker::Docker;
use crate::plan::{Alignment, actions::ActionPlan};

/// The most of an action's output the manifest keeps.
const KEEP_OUTPUT: usize = 2_000;

/// The scheduled actions of one load.
pub(crate) struct Scheduled {
    tasks: Vec<(ActionRun, JoinHandle<ActionRun>)>,
}

/// Schedule each action of `plans` on the load aligned as `al`, its container found by
/// `container_of(role)` (None: the stack has no such container, recorded as the action's error).
pub(crate) fn schedule(
    docker: &Docker,
    plans: &[ActionPlan],
    al: &Alignment,
    container_of: impl Fn(&str) -> Option<String>,
) -> Scheduled {
    let tasks = plans
        .iter()
        .map(|p| {
            let at = al.k6_start + chrono::Duration::microseconds((p.start_s * 1e6).round() as i64);
            let base = ActionRun {
                name: p.name.clone(),
                role: p.role.clone(),
                exec: p.exec.clone(),
                planned_at: at,
                started_at: None,
                ended_at: None,
                exit_code: None,
                output: String::new(),
                error: None,
            };
            let (d, id, mut run) = (docker.clone(), container_of(&p.role), base.clone());
            let task = tokio::spawn(async move {
                tokio::time::sleep((at - Utc::now()).to_std().unwrap_or_default()).await;
                let Some(id) = id else {
                    run.error = Some(format!("the stack has no `{}` container", run.role));
                    return run;
                };
                run.started_at = Some(Utc::now());
                match d.exec(&id, &run.exec).await {
                    Ok(out) => {
                        run.ended_at = Some(Utc::now());
                        run.exit_code = out.exit_code;
                        run.output = out.output.chars().take(KEEP_OUTPUT).collect();
                    }
                    Err(e) => run.error = Some(format!("{e:#}")),
                }
                run
            });
            (base, task)
        })
        .collect();
    Scheduled { tasks }
}

impl Scheduled {
    /// Each action as it ran; one the load ended before (interrupted, failed, shorter than
    /// planned) is cancelled and recorded as not run.
    pub(crate) async fn finish(self) -> Vec<ActionRun> {
        let mut out = Vec::new();
        for (base, task) in self.tasks {
            if !task.is_finished() {
                task.abort();
            }
            out.push(task.await.unwrap_or_else(|_| ActionRun {
                error: Some(not_run(base.planned_at)),
                ..base
            }));
        }
        out
    }
}

fn not_run(planned: DateTime<Utc>) -> String {
    format!(
        "the load ended before the action's instant ({}) or while it ran",
        planned.format("%H:%M:%S%.3f")
    )
}
