//! k6's live totals, read from its REST API (`/v1/metrics`) while a test runs (with each
//! step's sub-metrics: the live page's figures, `Snapshot`), and the one-line progress shown
//! on stderr (step i/N, target, hold left, sent/s, errors, dropped).
use serde::Deserialize;

use crate::plan::{Plan, WindowKind};

/// Cumulative counters at one poll.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveTotals {
    pub requests: u64,
    pub failed: u64,
    pub dropped: u64,
    pub vus: u64,
}

#[derive(Deserialize)]
struct Metrics {
    data: Vec<Metric>,
}
#[derive(Deserialize)]
struct Metric {
    id: String,
    attributes: Attributes,
}
#[derive(Deserialize)]
struct Attributes {
    sample: serde_json::Value,
}

/// Totals of several generators (their counters and VUs add up).
pub(crate) fn add(a: &LiveTotals, b: &LiveTotals) -> LiveTotals {
    LiveTotals {
        requests: a.requests + b.requests,
        failed: a.failed + b.failed,
        dropped: a.dropped + b.dropped,
        vus: a.vus + b.vus,
    }
}

fn totals_of(m: &Metrics) -> LiveTotals {
    let mut t = LiveTotals::default();
    let mut failed_rate = None;
    for metric in &m.data {
        let s = &metric.attributes.sample;
        let f = |k: &str| s.get(k).and_then(|v| v.as_f64());
        match metric.id.as_str() {
            "http_reqs" => t.requests = f("count").unwrap_or(0.0) as u64,
            "dropped_iterations" => t.dropped = f("count").unwrap_or(0.0) as u64,
            "vus" => t.vus = f("value").unwrap_or(0.0) as u64,
            "http_req_failed" => failed_rate = f("rate"),
            _ => {}
        }
    }
    t.failed = (failed_rate.unwrap_or(0.0) * t.requests as f64).round() as u64;
    t
}

/// One step's figures from k6's per-step sub-metrics (`http_req_duration{stage:r0150}`,
/// `http_req_failed{...}`, `http_reqs{...}`): over the requests of that step so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepFigures {
    pub requests: u64,
    pub failed_rate: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: Option<f64>,
}

/// Everything one poll of `/v1/metrics` tells: the totals, the mean duration since the start,
/// and each step's sub-metrics by its tag value (`r0150`, `01_rps50`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    pub totals: LiveTotals,
    /// Mean `http_req_duration` over every request so far (ms).
    pub avg_ms: f64,
    pub steps: std::collections::BTreeMap<String, StepFigures>,
}

/// The step tag of a sub-metric id: `http_req_duration{stage:r0150}` -> (`http_req_duration`, `r0150`).
fn sub_metric(id: &str) -> Option<(&str, &str)> {
    let (name, rest) = id.split_once('{')?;
    let tags = rest.strip_suffix('}')?;
    let value = tags
        .strip_prefix("stage:")
        .or_else(|| tags.strip_prefix("step:"))?;
    Some((name, value))
}

/// Parse the body of `GET /v1/metrics` into a [`Snapshot`].
pub fn parse_snapshot(body: &str) -> Result<Snapshot, serde_json::Error> {
    let m: Metrics = serde_json::from_str(body)?;
    let mut s = Snapshot {
        totals: totals_of(&m),
        ..Default::default()
    };
    for metric in &m.data {
        let sample = &metric.attributes.sample;
        let f = |k: &str| sample.get(k).and_then(|v| v.as_f64());
        if metric.id == "http_req_duration" {
            s.avg_ms = f("avg").unwrap_or(0.0);
        }
        let Some((name, tag)) = sub_metric(&metric.id) else {
            continue;
        };
        let step = s.steps.entry(tag.to_owned()).or_default();
        match name {
            "http_reqs" => step.requests = f("count").unwrap_or(0.0) as u64,
            "http_req_failed" => step.failed_rate = f("rate").unwrap_or(0.0),
            "http_req_duration" => {
                step.p50_ms = f("med").unwrap_or(0.0);
                step.p95_ms = f("p(95)").unwrap_or(0.0);
                step.p99_ms = f("p(99)");
            }
            _ => {}
        }
    }
    Ok(s)
}

/// Several generators' snapshots as one: counts add, rates and percentiles are weighted by
/// each one's requests (a percentile of the union is not recoverable from the parts; with one
/// generator, the default, the figures are k6's own).
pub(crate) fn merge(parts: &[Snapshot]) -> Snapshot {
    let mut out = Snapshot::default();
    let n: u64 = parts.iter().map(|p| p.totals.requests).sum();
    for p in parts {
        out.totals = add(&out.totals, &p.totals);
        if n > 0 {
            out.avg_ms += p.avg_ms * p.totals.requests as f64 / n as f64;
        }
    }
    let tags: std::collections::BTreeSet<&String> =
        parts.iter().flat_map(|p| p.steps.keys()).collect();
    for tag in tags {
        let each: Vec<&StepFigures> = parts.iter().filter_map(|p| p.steps.get(tag)).collect();
        let total: u64 = each.iter().map(|s| s.requests).sum();
        let w = |s: &StepFigures| {
            if total == 0 {
                1.0 / each.len() as f64
            } else {
                s.requests as f64 / total as f64
            }
        };
        let mut m = StepFigures {
            requests: total,
            ..Default::default()
        };
        for s in &each {
            m.failed_rate += s.failed_rate * w(s);
            m.p50_ms += s.p50_ms * w(s);
            m.p95_ms += s.p95_ms * w(s);
            m.p99_ms = match (m.p99_ms, s.p99_ms) {
                (a, Some(b)) => Some(a.unwrap_or(0.0) + b * w(s)),
                (a, None) => a,
            };
        }
        out.steps.insert(tag.clone(), m);
    }
    out
}

/// Where in the plan's timeline a moment falls, as shown to the user.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StepPosition {
    /// 1-based step index; 0 during warm-up.
    pub step: usize,
    pub steps: usize,
    pub target: u32,
    /// Seconds left in the current window.
    pub left_s: u64,
    pub phase: &'static str,
}

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
                WindowKind::RampDown => "ramp to 0",
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

/// Render the progress line from two polls `dt_s` apart; `now` is `None` when the last poll
/// got no answer (k6's API busy under heavy load): the rate shows `?`, not a false 0.
pub(crate) fn progress_line(
    pos: &StepPosition,
    prev: &LiveTotals,
    now: Option<&LiveTotals>,
    dt_s: f64,
    unit: &str,
) -> String {
    let sent = match now {
        Some(n) if dt_s > 0.0 => format!(
            "{:.0}",
            n.requests.saturating_sub(prev.requests) as f64 / dt_s
        ),
        _ => "?".to_string(),
    };
    let now = now.unwrap_or(prev);
    let where_ = if pos.step == 0 {
        format!("warm-up, {} s left", pos.left_s)
    } else {
        format!(
            "step {}/{} {} {unit}, {} {} s left",
            pos.step, pos.steps, pos.target, pos.phase, pos.left_s
        )
    };
    format!(
        "{where_} | sent {sent}/s | errors {} | dropped {} | VUs {}",
        now.failed, now.dropped, now.vus
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Catalog;
    use crate::plan::{PlanOptions, build};

    #[test]
    fn parses_a_real_k6_metrics_response() {
        let body = include_str!("../../tests/fixtures/k6api/metrics.json");
        let t = parse_snapshot(body).unwrap().totals;
        assert!(t.requests > 100, "{t:?}");
        // This fixture was captured with the server stopped: every request failed.
        assert_eq!(t.failed, t.requests);
        assert_eq!(t.dropped, 0);
    }

    #[test]
    fn progress_line_reads_well() {
        let pos = StepPosition {
            step: 3,
            steps: 7,
            target: 200,
            left_s: 12,
            phase: "hold",
        };
        let a = LiveTotals {
            requests: 1000,
            ..Default::default()
        };
        let b = LiveTotals {
            requests: 1400,
            failed: 3,
            dropped: 5,
            vus: 40,
        };
        assert_eq!(
            progress_line(&pos, &a, Some(&b), 2.0, "rps"),
            "step 3/7 200 rps, hold 12 s left | sent 200/s | errors 3 | dropped 5 | VUs 40"
        );
        // no answer from k6: unknown rate, last known counters (not "sent 0/s")
        assert_eq!(
            progress_line(&pos, &b, None, 2.0, "rps"),
            "step 3/7 200 rps, hold 12 s left | sent ?/s | errors 3 | dropped 5 | VUs 40"
        );
        let w = StepPosition {
            step: 0,
            steps: 7,
            target: 20,
            left_s: 5,
            phase: "warm-up",
        };
        assert!(progress_line(&w, &a, Some(&a), 1.0, "rps").starts_with("warm-up, 5 s left"));
    }

    #[test]
    fn generators_add_up() {
        let a = LiveTotals {
            requests: 10,
            failed: 1,
            dropped: 2,
            vus: 3,
        };
        assert_eq!(
            add(&a, &a),
            LiveTotals {
                requests: 20,
                failed: 2,
                dropped: 4,
                vus: 6
            }
        );
    }

    #[test]
    fn step_sub_metrics_are_read_by_their_tag() {
        let body = r#"{"data":[
          {"id":"http_reqs","attributes":{"sample":{"count":300}}},
          {"id":"http_req_failed","attributes":{"sample":{"rate":0.01}}},
          {"id":"http_req_duration","attributes":{"sample":{"avg":12.5,"med":10}}},
          {"id":"http_reqs{stage:r0150}","attributes":{"sample":{"count":200}}},
          {"id":"http_req_failed{stage:r0150}","attributes":{"sample":{"rate":0.015}}},
          {"id":"http_req_duration{stage:r0150}","attributes":{"sample":{"med":11,"p(95)":40,"p(99)":90}}},
          {"id":"http_req_duration{step:02_rps100}","attributes":{"sample":{"med":5,"p(95)":7}}},
          {"id":"vus","attributes":{"sample":{"value":4}}}]}"#;
        let s = parse_snapshot(body).unwrap();
        assert_eq!(
            (s.totals.requests, s.totals.failed, s.totals.vus),
            (300, 3, 4)
        );
        assert_eq!(s.avg_ms, 12.5);
        let r = s.steps["r0150"];
        assert_eq!(
            (r.requests, r.p50_ms, r.p95_ms, r.p99_ms),
            (200, 11.0, 40.0, Some(90.0))
        );
        assert_eq!(r.failed_rate, 0.015);
        assert_eq!(s.steps["02_rps100"].p95_ms, 7.0);
        // two generators: counts add, the percentiles are weighted by requests
        let mut other = s.clone();
        other.steps.get_mut("r0150").unwrap().p95_ms = 100.0;
        other.steps.get_mut("r0150").unwrap().requests = 600;
        let m = merge(&[s.clone(), other]);
        assert_eq!(m.totals.requests, 600);
        assert_eq!(m.steps["r0150"].requests, 800);
        assert_eq!(m.steps["r0150"].p95_ms, 40.0 * 0.25 + 100.0 * 0.75);
        assert_eq!(merge(std::slice::from_ref(&s)), s);
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse_snapshot("not json").is_err());
    }

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
