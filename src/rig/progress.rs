//! The live line on stderr while k6 runs: step i/N, target, time left in the window, sent/s,
//! errors and drops so far (from k6's REST API, summed over the load generators). A spinner line on a terminal, a plain line
//! every 10 s otherwise, nothing with `--quiet`.
use std::io::IsTerminal;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::experiment::Model;
use crate::live::Feed;
use crate::load::live::{self, LiveTotals, position};
use crate::plan::Plan;

pub(crate) struct Progress {
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl Progress {
    pub(crate) fn start(
        plan: &Plan,
        k6_start: DateTime<Utc>,
        apis: Vec<String>,
        quiet: bool,
        live: Option<Feed>,
    ) -> Progress {
        let (stop, mut rx) = watch::channel(false);
        if quiet && live.is_none() {
            return Progress { stop, task: None };
        }
        let plan = plan.clone();
        let unit = if plan.model == Model::Open {
            "rps"
        } else {
            "VUs"
        };
        let tty = !quiet && std::io::stderr().is_terminal();
        // the live page shows every second; the line alone is enough every 2 s
        let every = Duration::from_secs(if live.is_some() { 1 } else { 2 });
        let task = tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .timeout(Duration::from_millis(1500))
                .build()
                .ok();
            let bar = tty.then(|| {
                let b = indicatif::ProgressBar::new_spinner();
                b.enable_steady_tick(Duration::from_millis(250));
                b
            });
            let mut prev = LiveTotals::default();
            let mut prev_t = std::time::Instant::now();
            let mut last_plain = std::time::Instant::now() - Duration::from_secs(60);
            let mut tick = tokio::time::interval(every);
            loop {
                tokio::select! {
                    _ = tick.tick() => {}
                    _ = rx.changed() => break,
                }
                // One k6 REST API per generator: the line shows their sum (only when all answered).
                let mut now = None;
                if let Some(c) = &client
                    && !apis.is_empty()
                {
                    let mut parts = Vec::new();
                    for api in &apis {
                        if let Ok(r) = c.get(format!("{api}/v1/metrics")).send().await
                            && let Ok(body) = r.text().await
                            && let Ok(s) = live::parse_snapshot(&body)
                        {
                            parts.push(s);
                        }
                    }
                    if parts.len() == apis.len() {
                        now = Some(live::merge(&parts));
                    }
                }
                if let Some(feed) = &live {
                    feed.poll(Utc::now(), now.clone());
                }
                let now = now.map(|s| s.totals);
                let dt = prev_t.elapsed().as_secs_f64();
                let offset = (Utc::now() - k6_start).num_milliseconds() as f64 / 1000.0;
                let line =
                    live::progress_line(&position(&plan, offset), &prev, now.as_ref(), dt, unit);
                if let Some(n) = now {
                    // rates span the time between answered polls
                    prev = n;
                    prev_t = std::time::Instant::now();
                }
                match &bar {
                    Some(b) => b.set_message(line),
                    None if quiet => {}
                    None if last_plain.elapsed() >= Duration::from_secs(10) => {
                        crate::say!("{line}");
                        last_plain = std::time::Instant::now();
                    }
                    None => {}
                }
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            if let Some(feed) = &live {
                feed.load_ended();
            }
        });
        Progress {
            stop,
            task: Some(task),
        }
    }

    pub(crate) async fn finish(mut self) {
        let _ = self.stop.send(true);
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
    }
}
