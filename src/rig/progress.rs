//! The live line on stderr while k6 runs: step i/N, target, time left in the window, sent/s,
//! errors and drops so far (from k6's REST API, summed over the load generators). A spinner line on a terminal, a plain line
//! every 10 s otherwise, nothing with `--quiet`.
use std::io::IsTerminal;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::experiment::Model;
use crate::load::live::{self, LiveTotals, StepPosition};
use crate::plan::{Plan, WindowKind};

/// Where `offset_s` (seconds since k6's start) falls in the plan.
pub(crate) fn position(plan: &Plan, offset_s: f64) -> StepPosition {
    let steps = plan.steps.len();
    let w = plan
        .windows
        .iter()
        .find(|w| offset_s >= w.start_s as f64 && offset_s < w.end_s as f64);
    match w {
        Some(w) => StepPosition {
            step: w.step.map(|s| s + 1).unwrap_or(0),
            steps,
            target: w.target,
            left_s: (w.end_s as f64 - offset_s).max(0.0).ceil() as u64,
            phase: match w.kind {
                WindowKind::Warmup => "warm-up",
                WindowKind::Ramp => "ramp",
                WindowKind::Hold => "hold",
                WindowKind::Recover => "recovery",
            },
        },
        None if offset_s < 0.0 => StepPosition {
            step: 0,
            steps,
            target: 0,
            left_s: (-offset_s).ceil() as u64,
            phase: "starting",
        },
        // a pair by turns: between this side's steps, the other side has its turn
        None if offset_s < plan.total_s as f64 => {
            let next = plan.steps.iter().find(|s| offset_s < s.start_s as f64);
            StepPosition {
                step: next.map_or(steps, |s| s.index + 1),
                steps,
                target: 0,
                left_s: next.map_or(0.0, |s| s.start_s as f64 - offset_s).ceil() as u64,
                phase: "the other side's turn",
            }
        }
        None => StepPosition {
            step: steps,
            steps,
            target: plan.steps.last().map(|s| s.target).unwrap_or(0),
            left_s: 0,
            phase: "stopping",
        },
    }
}

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
    ) -> Progress {
        let (stop, mut rx) = watch::channel(false);
        if quiet {
            return Progress { stop, task: None };
        }
        let plan = plan.clone();
        let unit = if plan.model == Model::Open {
            "rps"
        } else {
            "VUs"
        };
        let tty = std::io::stderr().is_terminal();
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
            let mut tick = tokio::time::interval(Duration::from_secs(2));
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
                    let mut sum = LiveTotals::default();
                    let mut answered = 0;
                    for api in &apis {
                        if let Ok(r) = c.get(format!("{api}/v1/metrics")).send().await
                            && let Ok(body) = r.text().await
                            && let Ok(t) = live::parse_metrics(&body)
                        {
                            sum = live::add(&sum, &t);
                            answered += 1;
                        }
                    }
                    if answered == apis.len() {
                        now = Some(sum);
                    }
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Catalog;
    use crate::plan::{PlanOptions, build};

    #[test]
    fn positions_along_the_1a_timeline() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let cat = Catalog::load(&dir, &crate::verify::quantities::Quantities).unwrap();
        let plan = build(cat.expand("1a").unwrap()[0], PlanOptions::default());
        // 20 s warm-up, then per step 8 s ramp + 22 s hold.
        let p = position(&plan, 5.0);
        assert_eq!((p.step, p.phase, p.left_s), (0, "warm-up", 15));
        let p = position(&plan, 24.0);
        assert_eq!((p.step, p.phase, p.target), (1, "ramp", 100));
        let p = position(&plan, 20.0 + 8.0 + 2.0);
        assert_eq!((p.step, p.phase, p.left_s), (1, "hold", 20));
        let p = position(&plan, 20.0 + 30.0 + 8.5);
        assert_eq!((p.step, p.phase, p.target), (2, "hold", 150));
        let p = position(&plan, -3.0);
        assert_eq!(p.phase, "starting");
        let p = position(&plan, 10_000.0);
        assert_eq!(p.phase, "stopping");
    }

    #[test]
    fn between_its_turns_a_side_says_the_other_has_the_stack() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let cat = Catalog::load(&dir, &crate::verify::quantities::Quantities).unwrap();
        let p = build(cat.expand("2a").unwrap()[0], PlanOptions { quick: true });
        let (_, b) = crate::plan::turns::for_pair(&p, &p, 1);
        // B waits the first level's first turn, then has its own
        let s0 = &b.steps[0];
        let idle = position(&b, s0.start_s as f64 - 1.0);
        assert_eq!(
            (idle.phase, idle.step, idle.left_s),
            ("the other side's turn", 1, 1)
        );
        assert_eq!(position(&b, s0.hold_start_s as f64 + 0.5).phase, "hold");
        assert_eq!(position(&b, b.total_s as f64 + 1.0).phase, "stopping");
        assert_eq!(position(&p, p.total_s as f64 - 0.5).phase, "hold");
    }
}
