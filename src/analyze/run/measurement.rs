//! Checks on the measurement itself: Little's law and stability per step, the drain, the CPU
//! and pool ceilings, the closed model's missing requests, the abort lag, the generator's CPU,
//! the cross-check with k6's summary and the host's share of other work.
use crate::analyze::checks;
use crate::analyze::hist::LatencyHist;
use crate::analyze::k6csv::{Convention, K6Data};
use crate::analyze::model::*;
use crate::analyze::samples::{self, Samples};
use crate::analyze::summary::K6Summary;

/// What the checks read.
pub(super) struct Measured<'a> {
    pub k6: &'a K6Data,
    pub samples: &'a Samples,
    pub params: &'a Params,
    pub model: LoadModel,
    pub summary: Option<&'a K6Summary>,
    /// Non-empty, in step order.
    pub steps: &'a [StepReport],
    /// The step whose CPU per request gives the CPU ceiling (else the last step).
    pub ceiling_target: Option<u32>,
}

/// All checks, in the report's order; caveats they raise go to `warnings`.
pub(super) fn checks(m: &Measured, warnings: &mut Vec<String>) -> Checks {
    let mut checks = Checks::default();
    little_and_stability(m.k6, m.steps, &mut checks);
    checks.drain_s = Some(drain_s(m.k6, m.steps));
    checks.cpu_ceiling = cpu_ceiling(m);
    checks.pool_ceiling = pool_ceiling(m);
    if m.model == LoadModel::Closed {
        checks.closed = closed_rows(m);
        if m.params.think_time_s.is_none() {
            warnings.push("closed model without a known think time: nominal rates assume Z = 0 (pass the plan or SLEEP)".into());
        }
    }
    checks.abort = abort_check(m);
    checks.k6_cpu_max_pct = m
        .steps
        .iter()
        .filter_map(|s| s.server.as_ref()?.k6_cpu_max_pct)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    if let Some(k) = checks.k6_cpu_max_pct.filter(|k| *k >= 80.0) {
        warnings.push(format!("k6 used up to {k:.0} % of its core (goal < 80 %): latency figures include the generator's own queueing"));
    }
    if let Some(sum) = m.summary {
        cross_check(m.steps, sum, &mut checks, warnings);
    }
    let last = m.steps.last().expect("non-empty");
    let measured_end = super::seconds::end_ms(last.start_ms, last.window_s);
    checks.host_share = samples::host_share(m.samples, m.steps[0].start_ms, measured_end);
    if let Some(h) = &checks.host_share {
        warnings.extend(super::caveats::host_share_warnings(h));
    }
    checks.host_steps = m
        .steps
        .iter()
        .filter_map(|s| {
            let share = samples::host_share(
                m.samples,
                s.start_ms,
                super::seconds::end_ms(s.start_ms, s.window_s),
            )?;
            Some(StepHostShare {
                step: s.name.clone(),
                share,
            })
        })
        .collect();
    checks
}

/// Per step: in-flight in the two halves of the window, and L = λW against the counted L.
fn little_and_stability(k6: &K6Data, steps: &[StepReport], checks: &mut Checks) {
    for s in steps {
        let (first, second) = halves(k6, s.start_ms, s.window_s);
        let verdict = checks::stability(first, second);
        checks.stability.push(StabilityRow {
            step: s.name.clone(),
            inflight_first_half: first,
            inflight_second_half: second,
            verdict,
        });
        let lambda = s.requests as f64 / s.window_s;
        let w = s.avg_ms / 1000.0;
        let l_inflight = inflight_mean(k6, s.start_ms, s.window_s);
        let lw = lambda * w;
        checks.little.push(LittleRow {
            step: s.name.clone(),
            lambda_per_s: lambda,
            w_s: w,
            lambda_w: lw,
            l_inflight,
            l_vus: s.mean_vus,
            l_app: s
                .server
                .as_ref()
                .and_then(|w| w.node.as_ref())
                .map(|n| n.inflight_mean),
            w_from_vus_s: s.max_vus.map(|l| checks::little_w(l, lambda)),
            diff: if lw > 0.0 {
                (l_inflight - lw).abs() / lw
            } else {
                0.0
            },
            stable: verdict == Stability::Stable && !s.truncated,
        });
    }
}

/// Mean in-flight (time-averaged) over [start, start + window).
fn inflight_mean(k6: &K6Data, start_ms: i64, window_s: f64) -> f64 {
    let s0 = (start_ms as f64 / 1000.0).round() as i64;
    let n = window_s.round().max(1.0) as i64;
    let sum: f64 = (s0..s0 + n)
        .filter_map(|s| k6.timeline.get(s))
        .map(|x| x.busy_ms / 1000.0)
        .sum();
    sum / n as f64
}

/// In-flight in the first and second half of the window (seed 003).
fn halves(k6: &K6Data, start_ms: i64, window_s: f64) -> (f64, f64) {
    let s0 = (start_ms as f64 / 1000.0).round() as i64;
    let n = window_s.round().max(2.0) as i64;
    let h = n / 2;
    let mean = |a: i64, b: i64| {
        let v: Vec<f64> = (a..b)
            .map(|s| k6.timeline.get(s).map_or(0.0, |x| x.busy_ms / 1000.0))
            .collect();
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    (mean(s0, s0 + h), mean(s0 + n - h, s0 + n))
}

/// Seconds from the end of the last step's window to its last response.
fn drain_s(k6: &K6Data, steps: &[StepReport]) -> f64 {
    let last = steps.last().expect("non-empty");
    let last_agg = k6.steps.last().expect("non-empty");
    let window_end = super::seconds::end_ms(last.start_ms, last.window_s);
    ((last_agg.last_end_ms - window_end) as f64 / 1000.0).max(0.0)
}

/// CPU ceiling from the app's cores and the CPU per request at the reference step.
fn cpu_ceiling(m: &Measured) -> Option<CeilingCheck> {
    let s = m
        .ceiling_target
        .and_then(|t| m.steps.iter().find(|s| s.target == t))
        .or(m.steps.last())?;
    let cores = m.params.app_cores?;
    let ms = s.ms_cpu_per_ok.filter(|v| *v > 0.0)?;
    Some(CeilingCheck {
        step: s.name.clone(),
        cores,
        ms_cpu_per_ok: ms,
        cpu_ceiling_per_s: checks::cpu_ceiling(cores, ms),
    })
}

/// Pool ceiling N / W, with W the first step's mean latency.
fn pool_ceiling(m: &Measured) -> Option<PoolCeiling> {
    let slots = m.params.pool_size?;
    let w = m.steps[0].avg_ms / 1000.0;
    (w > 0.0).then(|| PoolCeiling {
        slots,
        w_s: w,
        ceiling_per_s: checks::pool_ceiling(slots as f64, w),
    })
}

/// Closed model: the rate real users would have offered vs the rate the VUs achieved.
fn closed_rows(m: &Measured) -> Vec<ClosedRow> {
    let z = m.params.think_time_s.unwrap_or(0.0);
    let r0 = m.steps[0].avg_ms / 1000.0;
    m.steps
        .iter()
        .map(|s| {
            let nominal = checks::closed_rate(s.target as f64, r0, z);
            let achieved = s.sent_per_s;
            ClosedRow {
                step: s.name.clone(),
                vus: s.target,
                nominal_per_s: nominal,
                achieved_per_s: achieved,
                missing: ((nominal - achieved) * s.window_s).max(0.0),
                implied_r_ms: checks::closed_implied_r(s.target as f64, achieved, z) * 1000.0,
            }
        })
        .collect()
}

/// When k6 stopped itself: the cumulative p95 its guard watched against the last step's own.
fn abort_check(m: &Measured) -> Option<AbortCheck> {
    let p = m.params;
    let aborted = p
        .aborted
        .unwrap_or_else(|| m.steps.iter().any(|s| s.truncated));
    if !aborted {
        return None;
    }
    let threshold = p
        .abort_p95_ms
        .unwrap_or(match m.k6.convention.unwrap_or(Convention::Stage) {
            Convention::Stage => p.slo_p95_ms * 2.5,
            Convention::Step => p.slo_p95_ms,
        });
    let mut cum = LatencyHist::new();
    for a in &m.k6.steps {
        cum.add(&a.all);
    }
    let bad = cum.count_above_ms(threshold);
    let good = cum.count() - bad;
    let last = m.steps.last().expect("non-empty");
    Some(AbortCheck {
        step: last.name.clone(),
        threshold_ms: threshold,
        cumulative_p95_ms: cum.percentiles().p95_ms,
        step_p95_ms: last.p95_ms,
        good,
        bad,
        bad_needed: checks::abort_bad_needed(good as f64),
    })
}

/// Our figures against k6's summary: differences over 1 % (or 0.5 ms) become rows.
fn cross_check(
    steps: &[StepReport],
    sum: &K6Summary,
    checks: &mut Checks,
    warnings: &mut Vec<String>,
) {
    let close = |a: f64, b: f64| (a - b).abs() <= 0.5 || (a - b).abs() <= 0.01 * b.abs();
    for s in steps {
        let Some(k) = sum.steps.get(&s.name) else {
            warnings.push(format!(
                "step {} is in the CSV but not in the k6 summary",
                s.name
            ));
            continue;
        };
        checks.cross_checked_steps += 1;
        let mut cmp = |field: &str, ours: f64, theirs: Option<f64>| {
            if let Some(t) = theirs
                && !close(ours, t)
            {
                checks.cross_check.push(CrossCheckRow {
                    step: s.name.clone(),
                    field: field.into(),
                    ours,
                    k6: t,
                });
            }
        };
        cmp("requests", s.requests as f64, k.count.map(|c| c as f64));
        cmp("p50_ms", s.p50_ms, k.med_ms);
        cmp("p95_ms", s.p95_ms, k.p95_ms);
        cmp("p99_ms", s.p99_ms, k.p99_ms);
        cmp("max_ms", s.max_ms, k.max_ms);
        if let Some(fr) = k.failed_rate
            && (fr - s.failed_rate).abs() > 0.001
        {
            checks.cross_check.push(CrossCheckRow {
                step: s.name.clone(),
                field: "failed_rate".into(),
                ours: s.failed_rate,
                k6: fr,
            });
        }
    }
    for name in sum.steps.keys() {
        let count = sum.steps[name].count.unwrap_or(0);
        if count > 0 && !steps.iter().any(|s| &s.name == name) {
            warnings.push(format!(
                "step {name} ({count} requests in the k6 summary) is missing from the CSV"
            ));
        }
    }
    if !checks.cross_check.is_empty() {
        warnings.push(format!(
            "{} figure(s) differ from k6's summary by more than 1 % (or 0.5 ms): see the cross-check; a truncated or different CSV?",
            checks.cross_check.len()
        ));
    }
}
