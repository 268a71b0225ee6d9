//! The app's freeze during a load with `load.pause` (the real engine's half): a task that
//! pauses every app-box container of the stack at the planned instant and unpauses it P
//! seconds later, recorded as a [`Freeze`]; and the thaw that always follows, however the
//! load ended.
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;

use crate::analyze::omission::Freeze;
use crate::docker::Docker;
use crate::plan::{Alignment, pause::PausePlan};

/// A scheduled freeze: its task and what it needs to thaw the app if it is cut short.
pub(crate) struct Scheduled {
    task: JoinHandle<Freeze>,
    docker: Docker,
    ids: Vec<String>,
    load: String,
    planned_at: DateTime<Utc>,
}

/// The instant of the freeze of `p` in a load aligned as `al`.
pub(crate) fn planned_at(al: &Alignment, p: &PausePlan) -> DateTime<Utc> {
    al.k6_start + chrono::Duration::microseconds((p.start_s * 1e6).round() as i64)
}

/// Schedule the freeze of the containers `ids` (the app box) for load `load`.
pub(crate) fn schedule(
    docker: &Docker,
    ids: Vec<String>,
    load: &str,
    al: &Alignment,
    p: &PausePlan,
) -> Scheduled {
    let at = planned_at(al, p);
    let for_s = Duration::from_secs_f64(p.for_s.max(0.0));
    let (d, i, l) = (docker.clone(), ids.clone(), load.to_string());
    let task = tokio::spawn(async move {
        tokio::time::sleep((at - Utc::now()).to_std().unwrap_or_default()).await;
        let mut f = Freeze {
            load: l,
            planned_at: at,
            frozen_at: None,
            thawed_at: None,
            error: None,
        };
        if let Err(e) = set_all(&d, &i, true).await {
            f.error = Some(format!("{e:#}"));
            // whatever part of it froze thaws at once
            let _ = set_all(&d, &i, false).await;
            return f;
        }
        f.frozen_at = Some(Utc::now());
        tokio::time::sleep(for_s).await;
        match set_all(&d, &i, false).await {
            Ok(()) => f.thawed_at = Some(Utc::now()),
            Err(e) => f.error = Some(format!("{e:#}")),
        }
        f
    });
    Scheduled {
        task,
        docker: docker.clone(),
        ids,
        load: load.to_string(),
        planned_at: at,
    }
}

async fn set_all(d: &Docker, ids: &[String], freeze: bool) -> anyhow::Result<()> {
    for id in ids {
        d.freeze_container(id, freeze).await?;
    }
    Ok(())
}

impl Scheduled {
    /// The freeze as it happened. A load that ended before the thaw (interrupted, failed)
    /// cuts it short: the app is thawed here, and the record says the freeze did not finish.
    pub(crate) async fn finish(self) -> Freeze {
        if !self.task.is_finished() {
            self.task.abort();
        }
        match self.task.await {
            Ok(f) => f,
            Err(_) => {
                let thawed = set_all(&self.docker, &self.ids, false).await;
                Freeze {
                    load: self.load,
                    planned_at: self.planned_at,
                    frozen_at: None,
                    thawed_at: None,
                    error: Some(match thawed {
                        Ok(()) => {
                            "the load ended before the freeze finished; the app was thawed".into()
                        }
                        Err(e) => {
                            format!("the load ended before the freeze finished; thawing: {e:#}")
                        }
                    }),
                }
            }
        }
    }
}
