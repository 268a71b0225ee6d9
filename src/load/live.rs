//! k6's live totals, read from its REST API (`/v1/metrics`) while a test runs, and the
//! one-line progress shown on stderr (step i/N, target, hold left, sent/s, errors, dropped).
use serde::Deserialize;

/// Cumulative counters at one poll.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct LiveTotals {
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

/// Parse the body of `GET /v1/metrics`.
pub(crate) fn parse_metrics(body: &str) -> Result<LiveTotals, serde_json::Error> {
    let m: Metrics = serde_json::from_str(body)?;
    let mut t = LiveTotals::default();
    let mut failed_rate = None;
    for metric in m.data {
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
    Ok(t)
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

    #[test]
    fn parses_a_real_k6_metrics_response() {
        let body = include_str!("../../tests/fixtures/k6api/metrics.json");
        let t = parse_metrics(body).unwrap();
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
    fn garbage_is_an_error() {
        assert!(parse_metrics("not json").is_err());
    }
}
