//! One step's row: its measured window, latency, rates and server figures, and criteria 1-4.
use super::format::{fmt_int, fmt_ms, pct};
use crate::analyze::checks;
use crate::analyze::k6csv::{K6Data, StepAgg};
use crate::analyze::model::*;
use crate::analyze::samples::{self, Samples, WindowServer};
use std::collections::BTreeMap;

/// The figures of one step over its window (the hold, or the observed span of a cut step).
pub(super) fn step_row(
    a: &StepAgg,
    k6: &K6Data,
    samples: &Samples,
    p: &Params,
    hold_s: f64,
    model: LoadModel,
) -> StepReport {
    let all = a.all.percentiles();
    let ok = a.ok.percentiles();
    let start_ms = a.first_start_ms;
    let (window_s, truncated) = window_s(a, hold_s);
    let end_ms = super::seconds::end_ms(start_ms, window_s);
    // Goodput: successful responses completed inside the window.
    let (ok_done, dropped) = k6.timeline.ok_and_drops(start_ms, end_ms);
    let (max_vus, mean_vus) = vus_in(k6, start_ms, end_ms);
    let server = (!samples.is_empty()).then(|| {
        samples::window(
            samples,
            samples::Span::step(start_ms, end_ms),
            p.app_cores,
            &p.pinning(),
            &p.rules,
        )
    });
    let failed_rate = if a.requests > 0 {
        (a.requests - a.ok_count) as f64 / a.requests as f64
    } else {
        0.0
    };
    let ok_per_s = ok_done as f64 / window_s;
    let ms_cpu_per_ok = server
        .as_ref()
        .and_then(WindowServer::app_cores)
        .filter(|_| ok_per_s > 0.0)
        .map(|c| c * 1000.0 / ok_per_s);
    let host_limited = server.as_ref().and_then(host_limited);
    let mut row = StepReport {
        name: a.name.clone(),
        target: a.tag.target,
        unit: a.tag.unit,
        requests: a.requests,
        p50_ms: all.p50_ms,
        p95_ms: all.p95_ms,
        p99_ms: all.p99_ms,
        max_ms: all.max_ms,
        avg_ms: all.avg_ms,
        ok_p50_ms: ok.p50_ms,
        ok_p95_ms: ok.p95_ms,
        ok_p99_ms: ok.p99_ms,
        failed_rate,
        sent_per_s: a.requests as f64 / window_s,
        ok_per_s,
        verdict: Verdict::Pass,
        failures: Vec::new(),
        start_ms,
        window_s,
        truncated,
        non200: non200(&a.statuses),
        dropped,
        max_vus,
        mean_vus,
        p99_tail_samples: checks::tail_samples(a.requests as f64, 99.0),
        server,
        ms_cpu_per_ok,
        host_limited,
    };
    row.failures = criteria(&row, a.requests - a.ok_count, p, model);
    row
}

/// Why the step is host-limited: steal or other processes on the app's or database's CPUs.
fn host_limited(w: &WindowServer) -> Option<String> {
    let v: Vec<String> = [(&w.app_cpus, "the app's"), (&w.db_cpus, "the database's")]
        .into_iter()
        .filter_map(|(s, whose)| s.as_ref()?.host_limited(whose))
        .collect();
    (!v.is_empty()).then(|| v.join("; "))
}

/// (window length in s, cut short): a step whose requests span clearly less than the hold
/// (k6 stopped) is measured over its observed span.
fn window_s(a: &StepAgg, hold_s: f64) -> (f64, bool) {
    let span = (a.last_start_ms - a.first_start_ms) as f64 / 1000.0;
    let truncated = hold_s >= 3.0 && span + 1.0 < hold_s * 0.9;
    let window_s = if truncated { span.max(0.5) } else { hold_s };
    (window_s, truncated)
}

/// (max, mean) of the `vus` samples in [start_ms, end_ms).
fn vus_in(k6: &K6Data, start_ms: i64, end_ms: i64) -> (Option<f64>, Option<f64>) {
    let vus: Vec<f64> = k6
        .vus
        .iter()
        .filter(|(t, _)| *t >= start_ms && *t < end_ms)
        .map(|v| v.1)
        .collect();
    let max_vus = vus
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    let mean_vus = (!vus.is_empty()).then(|| vus.iter().sum::<f64>() / vus.len() as f64);
    (max_vus, mean_vus)
}

/// Response counts by status other than 200, keyed by the status as text.
fn non200(statuses: &BTreeMap<u16, u64>) -> BTreeMap<String, u64> {
    statuses
        .iter()
        .filter(|(st, _)| **st != 200)
        .map(|(st, c)| (st.to_string(), *c))
        .collect()
}

/// Criteria 1-4 on a step's figures; `failed` = requests that did not succeed.
pub(super) fn criteria(s: &StepReport, failed: u64, p: &Params, model: LoadModel) -> Vec<Failure> {
    let mut failures = Vec::new();
    let mut fail = |criterion: u8, text: String| failures.push(Failure { criterion, text });
    if s.p95_ms > p.slo_p95_ms {
        fail(
            1,
            format!("p95 {} > {}", fmt_ms(s.p95_ms), fmt_int(p.slo_p95_ms)),
        );
    }
    if let Some(slo99) = p.slo_p99_ms.filter(|v| s.p99_ms > *v) {
        fail(1, format!("p99 {} > {}", fmt_ms(s.p99_ms), fmt_int(slo99)));
    }
    if s.failed_rate > p.error_budget {
        fail(
            2,
            format!(
                "failed {} > {} ({failed} of {})",
                pct(s.failed_rate),
                pct(p.error_budget),
                s.requests
            ),
        );
    }
    if s.ok_per_s < s.sent_per_s * (1.0 - p.goodput_tolerance) {
        fail(
            3,
            format!("ok {:.1}/s < sent {:.1}/s", s.ok_per_s, s.sent_per_s),
        );
    }
    if s.dropped > 0 {
        fail(4, format!("k6 dropped {} iterations", s.dropped));
    }
    if model == LoadModel::Open
        && let (Some(cap), Some(m)) = (p.max_vus, s.max_vus)
        && m >= cap
    {
        fail(4, format!("VUs at max ({m:.0} of {cap:.0})"));
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &StepReport, failed: u64, p: &Params, model: LoadModel) -> Vec<(u8, String)> {
        criteria(s, failed, p, model)
            .into_iter()
            .map(|f| (f.criterion, f.text))
            .collect()
    }

    #[test]
    fn a_step_within_every_criterion_passes() {
        let s = super::super::test_row(100, 0);
        assert!(criteria(&s, 0, &Params::new(200.0), LoadModel::Open).is_empty());
    }

    #[test]
    fn each_criterion_names_its_figures() {
        let mut s = super::super::test_row(100, 0);
        s.p95_ms = 1113.0;
        s.p99_ms = 1500.0;
        s.failed_rate = 0.02;
        s.requests = 400;
        s.ok_per_s = 80.0;
        s.dropped = 3;
        s.max_vus = Some(50.0);
        let mut p = Params::new(200.0);
        p.slo_p99_ms = Some(1000.0);
        p.max_vus = Some(50.0);
        assert_eq!(
            texts(&s, 8, &p, LoadModel::Open),
            [
                (1, "p95 1,113 ms > 200".to_string()),
                (1, "p99 1,500 ms > 1,000".to_string()),
                (2, "failed 2.00 % > 1.00 % (8 of 400)".to_string()),
                (3, "ok 80.0/s < sent 100.0/s".to_string()),
                (4, "k6 dropped 3 iterations".to_string()),
                (4, "VUs at max (50 of 50)".to_string()),
            ]
        );
        // The VU cap is an arrival-rate (open model) limit only.
        assert_eq!(texts(&s, 8, &p, LoadModel::Closed).len(), 5);
    }

    #[test]
    fn goodput_may_fall_short_by_the_tolerance() {
        let mut s = super::super::test_row(100, 0);
        s.ok_per_s = 95.5;
        assert!(criteria(&s, 0, &Params::new(200.0), LoadModel::Open).is_empty());
        s.ok_per_s = 94.5;
        assert_eq!(
            criteria(&s, 0, &Params::new(200.0), LoadModel::Open)[0].criterion,
            3
        );
    }
}
