//! `analyze_run`: k6 data + summary + samples + params -> `Report` (verdicts, knee, checks).
use super::checks;
use super::hist::LatencyHist;
use super::k6csv::{Convention, K6Data, StepAgg, StepUnit};
use super::model::*;
use super::samples::{self, Samples, WindowServer};
use super::summary::K6Summary;
use std::collections::BTreeMap;

/// Everything `analyze_run` needs; the caller reads the files.
pub struct Inputs {
    pub k6: K6Data,
    pub summary: Option<K6Summary>,
    pub samples: Samples,
    pub params: Params,
    /// Log digests by log name (`nginx`, `fpm`, `laravel`, `app`), from `logs/<name>.log`.
    pub logs: BTreeMap<String, super::logs::LogDigest>,
    /// Title and file names for the report header.
    pub source: Source,
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(
        "no request carries a step tag (`stage:rNNNN` or `step:NN_rpsX`/`NN_vusX`; found {found}): \
         produce the CSV with labs/k6/stepped.js or labs/k6/breakpoint.js"
    )]
    NoSteps { found: String },
}

/// Infer the hold length: the median over steps of the span of request start times, in whole seconds.
fn infer_hold_s(steps: &[StepAgg]) -> f64 {
    let mut spans: Vec<f64> = steps
        .iter()
        .map(|s| {
            ((s.last_start_ms - s.first_start_ms) as f64 / 1000.0)
                .round()
                .max(1.0)
        })
        .collect();
    spans.sort_by(|a, b| a.total_cmp(b));
    spans.get(spans.len() / 2).copied().unwrap_or(1.0)
}

fn fmt_int(v: f64) -> String {
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Latency figure for sentences: "1,113 ms" or "18.0 ms".
pub fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{} ms", fmt_int(v))
    } else {
        format!("{v:.1} ms")
    }
}

fn pct(v: f64) -> String {
    if v == 0.0 {
        "0 %".into()
    } else if v < 0.1 {
        format!("{:.2} %", v * 100.0)
    } else {
        format!("{:.1} %", v * 100.0)
    }
}

/// Analyze one run.
pub fn analyze_run(inp: Inputs) -> Result<Report, AnalyzeError> {
    let Inputs {
        k6,
        summary,
        mut samples,
        params,
        logs,
        mut source,
    } = inp;
    samples.sort();
    if k6.steps.is_empty() {
        let found = if k6.excluded.is_empty() {
            "no requests".to_string()
        } else {
            k6.excluded
                .iter()
                .map(|(k, v)| format!("{k} x {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(AnalyzeError::NoSteps { found });
    }
    let mut warnings = Vec::new();
    let hold_s = params.hold_s.unwrap_or_else(|| infer_hold_s(&k6.steps));
    let model = params
        .model
        .unwrap_or(if k6.steps[0].tag.unit == StepUnit::Vus {
            LoadModel::Closed
        } else {
            LoadModel::Open
        });
    let convention = k6.convention.unwrap_or(Convention::Stage);
    source.convention = k6.convention;
    source.rows = k6.rows;
    source.requests = k6.requests;
    source.excluded = k6.excluded.clone();
    source.first_ms = k6.first_ms;
    source.last_ms = k6.last_ms;
    source.has_samples = !samples.is_empty();
    let firsts: Vec<Option<i64>> = source
        .generators
        .iter()
        .map(|g| g.first_request_ms)
        .collect();
    if let Some(spread) = super::merge::start_spread_ms(&firsts).filter(|s| *s > 100) {
        warnings.push(format!(
            "the {} load generators' first requests are {spread} ms apart (goal <= 100 ms): the steps' edges are blurred by that much",
            firsts.len()
        ));
    }
    if k6.skipped_rows > 0 {
        warnings.push(format!(
            "{} row(s) skipped (first on line {}): timestamp before 2000, after 2100, or more than 24 h from the first row",
            k6.skipped_rows,
            k6.first_skipped_line.unwrap_or(0)
        ));
    }
    if k6.second_resolution {
        warnings.push("timestamps are whole seconds: set K6_CSV_TIME_FORMAT=unix_milli for per-request start times".into());
    }

    let mut steps: Vec<StepReport> = k6
        .steps
        .iter()
        .map(|s| step_row(s, &k6, &samples, &params, hold_s, model))
        .collect();

    // Verdicts: a failing step followed by any passing step is transient.
    let n = steps.len();
    for i in 0..n {
        if !steps[i].failures.is_empty() {
            let later_pass = steps[i + 1..].iter().any(|s| s.failures.is_empty());
            steps[i].verdict = if later_pass {
                Verdict::Transient
            } else {
                Verdict::Fail
            };
        }
    }
    let last_passing = steps
        .iter()
        .take_while(|s| s.verdict == Verdict::Pass)
        .last()
        .map(|s| s.target);
    let knee_idx = steps.iter().position(|s| s.verdict == Verdict::Fail);
    let knee = knee_idx.map(|i| steps[i].target);
    let passing_below_knee = knee_idx.and_then(|k| {
        steps[..k]
            .iter()
            .rev()
            .find(|s| s.verdict == Verdict::Pass)
            .map(|s| s.target)
    });
    let knee_why = knee_idx.map(|i| knee_sentence(&steps[i], source.has_samples));

    // Checks.
    let mut checks = Checks::default();
    for s in &steps {
        let agg = k6
            .steps
            .iter()
            .find(|a| a.name == s.name)
            .expect("same steps");
        let (first, second) = halves(&k6, s.start_ms, s.window_s);
        let verdict = checks::stability(first, second);
        checks.stability.push(StabilityRow {
            step: s.name.clone(),
            inflight_first_half: first,
            inflight_second_half: second,
            verdict,
        });
        let lambda = s.requests as f64 / s.window_s;
        let w = s.avg_ms / 1000.0;
        let l_inflight = inflight_mean(&k6, s.start_ms, s.window_s);
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
        let _ = agg;
    }
    let last = steps.last().expect("non-empty");
    let last_agg = k6.steps.last().expect("non-empty");
    let window_end = last.start_ms + (last.window_s * 1000.0) as i64;
    checks.drain_s = Some(((last_agg.last_end_ms - window_end) as f64 / 1000.0).max(0.0));

    // CPU ceiling from the last passing step below the knee (or the last step).
    let ref_step = passing_below_knee
        .or(last_passing)
        .and_then(|t| steps.iter().find(|s| s.target == t))
        .or(steps.last());
    if let (Some(cores), Some(s)) = (params.app_cores, ref_step)
        && let Some(ms) = s.ms_cpu_per_ok.filter(|m| *m > 0.0)
    {
        checks.cpu_ceiling = Some(CeilingCheck {
            step: s.name.clone(),
            cores,
            ms_cpu_per_ok: ms,
            cpu_ceiling_per_s: checks::cpu_ceiling(cores, ms),
        });
    }
    if let Some(slots) = params.pool_size {
        let w = steps[0].avg_ms / 1000.0;
        if w > 0.0 {
            checks.pool_ceiling = Some(PoolCeiling {
                slots,
                w_s: w,
                ceiling_per_s: checks::pool_ceiling(slots as f64, w),
            });
        }
    }
    if model == LoadModel::Closed {
        let z = params.think_time_s.unwrap_or(0.0);
        let r0 = steps[0].avg_ms / 1000.0;
        for s in &steps {
            let nominal = checks::closed_rate(s.target as f64, r0, z);
            let achieved = s.sent_per_s;
            checks.closed.push(ClosedRow {
                step: s.name.clone(),
                vus: s.target,
                nominal_per_s: nominal,
                achieved_per_s: achieved,
                missing: ((nominal - achieved) * s.window_s).max(0.0),
                implied_r_ms: checks::closed_implied_r(s.target as f64, achieved, z) * 1000.0,
            });
        }
        if params.think_time_s.is_none() {
            warnings.push("closed model without a known think time: nominal rates assume Z = 0 (pass the plan or SLEEP)".into());
        }
    }
    let aborted = params
        .aborted
        .unwrap_or_else(|| steps.iter().any(|s| s.truncated));
    if aborted {
        let threshold = params.abort_p95_ms.unwrap_or(match convention {
            Convention::Stage => params.slo_p95_ms * 2.5,
            Convention::Step => params.slo_p95_ms,
        });
        let mut cum = LatencyHist::new();
        for a in &k6.steps {
            cum.add(&a.all);
        }
        let bad = cum.count_above_ms(threshold);
        let good = cum.count() - bad;
        checks.abort = Some(AbortCheck {
            step: last.name.clone(),
            threshold_ms: threshold,
            cumulative_p95_ms: cum.percentiles().p95_ms,
            step_p95_ms: last.p95_ms,
            good,
            bad,
            bad_needed: checks::abort_bad_needed(good as f64),
        });
    }
    checks.k6_cpu_max_pct = steps
        .iter()
        .filter_map(|s| s.server.as_ref()?.k6_cpu_max_pct)
        .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
    if let Some(k) = checks.k6_cpu_max_pct.filter(|k| *k >= 80.0) {
        warnings.push(format!("k6 used up to {k:.0} % of its core (goal < 80 %): latency figures include the generator's own queueing"));
    }
    if let Some(sum) = &summary {
        cross_check(&steps, sum, &mut checks, &mut warnings);
    }
    let measured_end = last.start_ms + (last.window_s * 1000.0) as i64;
    checks.host_share = samples::host_share(&samples, steps[0].start_ms, measured_end);
    if let Some(h) = &checks.host_share {
        warnings.extend(host_share_warnings(h));
    }

    // Generator health and data caveats.
    let first = &steps[0];
    if let Some(t) = k6.first_drop_ms
        && t < first.start_ms + (first.window_s * 1000.0) as i64
    {
        warnings.push("iterations dropped from the very first step: the generator (VUs), not the system, limited the load".into());
    }
    if k6.dropped_warmup > 0 {
        warnings.push(format!(
            "{} iterations dropped during the warm-up scenario",
            k6.dropped_warmup
        ));
    }
    if params.insufficient_vus {
        warnings.push("k6 logged `Insufficient VUs`: offered load was not generated past that point (criterion 4)".into());
    }
    let thin: Vec<String> = steps
        .iter()
        .filter(|s| s.p99_tail_samples < 50.0)
        .map(|s| format!("{} ({:.0})", s.name, s.p99_tail_samples))
        .collect();
    if !thin.is_empty() {
        warnings.push(format!(
            "p99 rests on fewer than 50 requests in: {}; hold steps longer for a stable p99",
            thin.join(", ")
        ));
    }
    for s in steps.iter().filter(|s| s.truncated) {
        warnings.push(format!(
            "step {} was cut short after {:.1} s (k6 stopped): rates use the observed span",
            s.name, s.window_s
        ));
    }
    if !source.has_samples {
        warnings.push(
            "no server-side samples: CPU columns and criterion 5 (saturated resource) are empty"
                .into(),
        );
    }

    let first_start_s = first.start_ms.div_euclid(1000);
    let timeline = timeline_rows(&k6, &samples, first_start_s, None);
    let focus = knee_idx.map(|i| &steps[i]).unwrap_or(last);
    let fs = focus.start_ms.div_euclid(1000);
    let per_second = timeline_rows(&k6, &samples, first_start_s, Some((fs - 4, fs + 9)));

    let access = if samples.access.is_empty() {
        Vec::new()
    } else {
        steps
            .iter()
            .map(|s| {
                let from = s.start_ms.div_euclid(1000);
                let to = (s.start_ms + (s.window_s * 1000.0) as i64).div_euclid(1000);
                super::access::window(&samples.access, &s.name, from, to)
            })
            .collect()
    };

    Ok(Report {
        source,
        params,
        model,
        hold_s,
        steps,
        last_passing,
        knee,
        passing_below_knee,
        knee_why,
        dropped_iterations: k6.dropped_total,
        dropped_warmup: k6.dropped_warmup,
        checks,
        per_second,
        timeline,
        logs,
        access,
        warnings,
    })
}

fn step_row(
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
    let span = (a.last_start_ms - a.first_start_ms) as f64 / 1000.0;
    let truncated = hold_s >= 3.0 && span + 1.0 < hold_s * 0.9;
    let window_s = if truncated { span.max(0.5) } else { hold_s };
    let end_ms = start_ms + (window_s * 1000.0) as i64;
    // Goodput: successful responses completed inside the window.
    let (ok_done, dropped) = k6.timeline.ok_and_drops(start_ms, end_ms);
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
    let server = (!samples.is_empty())
        .then(|| samples::window(samples, start_ms, end_ms, p.app_cores, &p.rules));
    let failed = a.requests - a.ok_count;
    let failed_rate = if a.requests > 0 {
        failed as f64 / a.requests as f64
    } else {
        0.0
    };
    let sent_per_s = a.requests as f64 / window_s;
    let ok_per_s = ok_done as f64 / window_s;
    let ms_cpu_per_ok = server
        .as_ref()
        .and_then(WindowServer::app_cores)
        .filter(|_| ok_per_s > 0.0)
        .map(|c| c * 1000.0 / ok_per_s);
    let mut non200 = BTreeMap::new();
    for (st, c) in &a.statuses {
        if *st != 200 {
            non200.insert(st.to_string(), *c);
        }
    }

    // Criteria 1-4.
    let mut failures = Vec::new();
    if all.p95_ms > p.slo_p95_ms {
        failures.push(Failure {
            criterion: 1,
            text: format!("p95 {} > {}", fmt_ms(all.p95_ms), fmt_int(p.slo_p95_ms)),
        });
    }
    if let Some(slo99) = p.slo_p99_ms.filter(|s| all.p99_ms > *s) {
        failures.push(Failure {
            criterion: 1,
            text: format!("p99 {} > {}", fmt_ms(all.p99_ms), fmt_int(slo99)),
        });
    }
    if failed_rate > p.error_budget {
        failures.push(Failure {
            criterion: 2,
            text: format!(
                "failed {} > {} ({failed} of {})",
                pct(failed_rate),
                pct(p.error_budget),
                a.requests
            ),
        });
    }
    if ok_per_s < sent_per_s * (1.0 - p.goodput_tolerance) {
        failures.push(Failure {
            criterion: 3,
            text: format!("ok {ok_per_s:.1}/s < sent {sent_per_s:.1}/s"),
        });
    }
    if dropped > 0 {
        failures.push(Failure {
            criterion: 4,
            text: format!("k6 dropped {dropped} iterations"),
        });
    }
    if model == LoadModel::Open
        && let (Some(cap), Some(m)) = (p.max_vus, max_vus)
        && m >= cap
    {
        failures.push(Failure {
            criterion: 4,
            text: format!("VUs at max ({m:.0} of {cap:.0})"),
        });
    }
    StepReport {
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
        sent_per_s,
        ok_per_s,
        verdict: Verdict::Pass,
        failures,
        start_ms,
        window_s,
        truncated,
        non200,
        dropped,
        max_vus,
        mean_vus,
        p99_tail_samples: checks::tail_samples(a.requests as f64, 99.0),
        server,
        ms_cpu_per_ok,
    }
}

/// "knee 180 rps: p95 1,113 ms > 200; fpm 20/20 busy, listen queue 186; pg idle ClientRead -> app CPU bound"
/// Caveats when the host was not the lab's alone: other processes, or hypervisor steal.
pub fn host_share_warnings(h: &HostShare) -> Vec<String> {
    let mut w = Vec::new();
    if h.other_cores > 0.10 {
        w.push(format!(
            "processes outside the lab used {:.2} cores on average during the steps (host busy {:.2} = lab {:.2} + perflab/dockerd {:.2} + steal {} + other {:.2}): the host was shared, knees may sit lower than on a quiet host",
            h.other_cores,
            h.busy_cores,
            h.lab_cores,
            h.harness_cores,
            h.steal_cores.map_or("?".to_string(), |s| format!("{s:.2}")),
            h.other_cores
        ));
    }
    if let Some(s) = h.steal_cores.filter(|s| *s > 0.05) {
        w.push(format!(
            "the hypervisor stole {:.0} % of a core on average (steal): a noisy VM, expect stalls and run-to-run spread",
            s * 100.0
        ));
    }
    w
}

fn knee_sentence(s: &StepReport, has_samples: bool) -> String {
    let mut parts: Vec<String> = s.failures.iter().map(|f| f.text.clone()).collect();
    if let Some(w) = &s.server {
        parts.extend(w.saturated.iter().cloned());
        let app_busy = w.saturated.iter().any(|x| {
            x.starts_with("fpm") || x.starts_with("app CPU") || x.starts_with("event loop")
        });
        if w.pg.as_ref().is_some_and(|p| p.waits_for_client) {
            parts.push(if app_busy {
                "pg idle ClientRead -> app CPU bound".into()
            } else {
                "pg idle ClientRead (the database waits for the app)".into()
            });
        }
        if w.saturated.is_empty() {
            parts.push("no server resource saturated for the whole step".into());
        }
    } else if !has_samples {
        parts.push("no server samples to name the resource".into());
    }
    format!(
        "knee {} {}: {}",
        s.target,
        s.unit.as_str(),
        parts.join("; ")
    )
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

fn timeline_rows(
    k6: &K6Data,
    samples: &Samples,
    rel0: i64,
    range: Option<(i64, i64)>,
) -> Vec<SecondRow> {
    let (a, b) = range.unwrap_or((k6.timeline.base_s, k6.timeline.end_s()));
    let (a, b) = (a.max(k6.timeline.base_s), b.min(k6.timeline.end_s()));
    let rules = samples::SaturationRules::default();
    (a..b)
        .filter_map(|t| {
            let x = k6.timeline.get(t)?;
            let w = (!samples.is_empty())
                .then(|| samples::window(samples, t * 1000, t * 1000 + 1000, None, &rules));
            let (p50, p95) = x
                .hist
                .as_ref()
                .map_or((0.0, 0.0), |h| (h.quantile_ms(0.5), h.quantile_ms(0.95)));
            Some(SecondRow {
                t,
                rel: t - rel0,
                done: x.done,
                ok: x.ok,
                started: x.started,
                non200: x.non200,
                p50_ms: p50,
                p95_ms: p95,
                inflight: x.busy_ms / 1000.0,
                dropped: x.dropped,
                vus: x.vus,
                cpu_pct: w.as_ref().map(|w| w.cpu_pct.clone()).unwrap_or_default(),
                psi_pct: w.as_ref().and_then(|w| w.psi_pct),
                dockerd_pct: w.as_ref().and_then(|w| w.dockerd_pct),
            })
        })
        .collect()
}
