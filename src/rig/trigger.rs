//! The trigger of a load with `load.trigger` (the real engine's half): a task that, at the
//! planned instant, cuts a container's CPU (cgroup `cpu.max`, through `docker`) for `for_s`
//! seconds and lifts the cut, or empties the front's cache (`POST /admin/flush` on the entry
//! point), recorded as a [`TriggerEvent`]; and the lift that always follows, however the
//! load ended.
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;

use crate::analyze::trigger::TriggerEvent;
use crate::docker::Docker;
use crate::experiment::TriggerKind;
use crate::plan::{Alignment, trigger::TriggerPlan};

/// The path of the front's cache flush below the entry point.
const FLUSH_PATH: &str = "/admin/flush";

/// A scheduled trigger: its task and what it needs to lift a cut cut short.
pub(crate) struct Scheduled {
    task: JoinHandle<TriggerEvent>,
    docker: Docker,
    id: Option<String>,
    event: TriggerEvent,
}

fn at(al: &Alignment, s: f64) -> DateTime<Utc> {
    al.k6_start + chrono::Duration::microseconds((s * 1e6).round() as i64)
}

/// Schedule `p` in a load aligned as `al`: a CPU cut on container `id`, or a flush through
/// `entry_url`.
pub(crate) fn schedule(
    docker: &Docker,
    id: Option<String>,
    entry_url: &str,
    al: &Alignment,
    p: &TriggerPlan,
) -> Scheduled {
    let planned = at(al, p.start_s);
    let event = TriggerEvent {
        kind: match p.kind {
            TriggerKind::Cpu => "cpu",
            TriggerKind::Flush => "flush",
        }
        .into(),
        planned_at: planned,
        applied_at: None,
        lifted_at: None,
        cpus_left: None,
        role: p.role.clone(),
        step_target: p.step_target,
        hold_start_ms: at(al, f64::from(p.hold_start_s)).timestamp_millis(),
        hold_end_ms: at(al, f64::from(p.hold_end_s)).timestamp_millis(),
        recover_within_s: p.recover_within_s,
        error: None,
    };
    let (d, i, e) = (docker.clone(), id.clone(), event.clone());
    let (kind, keep, for_s) = (
        p.kind,
        1.0 - p.cut,
        Duration::from_secs_f64(p.for_s.max(0.0)),
    );
    let url = format!("{}{FLUSH_PATH}", entry_url.trim_end_matches('/'));
    let task = tokio::spawn(async move {
        tokio::time::sleep((planned - Utc::now()).to_std().unwrap_or_default()).await;
        match kind {
            TriggerKind::Cpu => cut(&d, i.as_deref(), keep, for_s, e).await,
            TriggerKind::Flush => flush(&url, e).await,
        }
    });
    Scheduled {
        task,
        docker: docker.clone(),
        id,
        event,
    }
}

/// The CPU cut: applied, held `for_s`, lifted.
async fn cut(
    d: &Docker,
    id: Option<&str>,
    keep: f64,
    for_s: Duration,
    mut e: TriggerEvent,
) -> TriggerEvent {
    let Some(id) = id else {
        e.error = Some(format!("the stack has no `{}` container", e.role));
        return e;
    };
    match d.cut_cpu(id, Some(keep)).await {
        Ok(cpus) => {
            e.applied_at = Some(Utc::now());
            e.cpus_left = cpus;
        }
        Err(err) => {
            e.error = Some(format!("{err:#}"));
            let _ = d.cut_cpu(id, None).await;
            return e;
        }
    }
    tokio::time::sleep(for_s).await;
    match d.cut_cpu(id, None).await {
        Ok(_) => e.lifted_at = Some(Utc::now()),
        Err(err) => e.error = Some(format!("lifting the cut: {err:#}")),
    }
    e
}

/// The cache flush: one POST, applied when it answers 200.
async fn flush(url: &str, mut e: TriggerEvent) -> TriggerEvent {
    let r = async {
        reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()?
            .post(url)
            .send()
            .await?
            .error_for_status()
    }
    .await;
    match r {
        Ok(_) => {
            let now = Utc::now();
            (e.applied_at, e.lifted_at) = (Some(now), Some(now));
        }
        Err(err) => e.error = Some(format!("POST {url}: {err}")),
    }
    e
}

impl Scheduled {
    /// The trigger as it happened. A load that ended before a cut was lifted lifts it here,
    /// and the record says the trigger did not finish.
    pub(crate) async fn finish(self) -> TriggerEvent {
        if !self.task.is_finished() {
            self.task.abort();
        }
        match self.task.await {
            Ok(e) => e,
            Err(_) => {
                let mut e = self.event;
                let lifted = match &self.id {
                    Some(id) => self.docker.cut_cpu(id, None).await.map(|_| ()),
                    None => Ok(()),
                };
                e.error = Some(match lifted {
                    Ok(()) => {
                        "the load ended before the trigger finished; any cut was lifted".into()
                    }
                    Err(err) => {
                        format!("the load ended before the trigger finished; lifting: {err:#}")
                    }
                });
                e
            }
        }
    }
}
