//! `analyze_run`: k6 data + summary + samples + params -> `Report` (verdicts, knee, checks).
//! The parts live in `run/`: a step's row and criteria, the verdicts and the knee, the checks
//! on the measurement, the caveats, the per-second rows, the sentences' number formats.
mod caveats;
mod format;
mod live;
mod measurement;
mod seconds;
mod step;
mod verdict;

use super::k6csv::{K6Data, StepAgg, StepUnit};
use super::model::*;
use super::samples::Samples;
use super::summary::K6Summary;
use std::collections::BTreeMap;

pub use caveats::host_share_warnings;
pub use format::fmt_ms;
pub use live::{LiveJudgement, LiveStep, judge_live};

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
    /// What reading the files cut, replaced or left out (invalid UTF-8 replaced, long lines
    /// cut, a broken gzip stream): the report's caveats.
    pub caveats: Vec<String>,
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

/// The error for a CSV without step tags, naming what its requests were tagged with.
fn no_steps(k6: &K6Data) -> AnalyzeError {
    let found = if k6.excluded.is_empty() {
        "no requests".to_string()
    } else {
        k6.excluded
            .iter()
            .map(|(k, v)| format!("{k} x {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    AnalyzeError::NoSteps { found }
}

/// Copy what the k6 pass counted into the report's source description.
fn describe(source: &mut Source, k6: &K6Data, samples: &Samples) {
    source.convention = k6.convention;
    source.rows = k6.rows;
    source.requests = k6.requests;
    source.excluded = k6.excluded.clone();
    source.first_ms = k6.first_ms;
    source.last_ms = k6.last_ms;
    source.has_samples = !samples.is_empty();
}

/// Access-log figures per step window (empty without access logs).
fn access_rows(samples: &Samples, steps: &[StepReport]) -> Vec<super::access::AccessRow> {
    if samples.access.is_empty() {
        return Vec::new();
    }
    steps
        .iter()
        .map(|s| {
            let from = s.start_ms.div_euclid(1000);
            let to = seconds::end_ms(s.start_ms, s.window_s).div_euclid(1000);
            super::access::window(&samples.access, &s.name, from, to)
        })
        .collect()
}

/// The recovery figures when the run has a recovery phase: the baseline is the lowest step,
/// the overload starts at the first failing step (else the top one).
fn recovery_of(
    k6: &K6Data,
    samples: &Samples,
    steps: &[StepReport],
    slo_p95_ms: f64,
) -> Option<super::recovery::Recovery> {
    let span = k6.recover_span?;
    let (first, top) = (steps.first()?, steps.last()?);
    let over = steps
        .iter()
        .find(|s| s.verdict == Verdict::Fail)
        .unwrap_or(top);
    Some(super::recovery::recovery(&super::recovery::RecoveryInput {
        timeline: &k6.timeline,
        fpm: &samples.fpm,
        span,
        sent: k6.recover_sent,
        baseline: (
            first.start_ms,
            seconds::end_ms(first.start_ms, first.window_s),
        ),
        overload_ms: over.start_ms,
        slo_p95_ms,
        handshakes: (
            samples.last_reading("fpm_syn", span.0),
            samples.last_reading("nginx_syn", span.0),
        ),
    }))
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
        caveats: read_caveats,
    } = inp;
    samples.sort();
    if k6.steps.is_empty() {
        return Err(no_steps(&k6));
    }
    let hold_s = params.hold_s.unwrap_or_else(|| infer_hold_s(&k6.steps));
    let model = params
        .model
        .unwrap_or(if k6.steps[0].tag.unit == StepUnit::Vus {
            LoadModel::Closed
        } else {
            LoadModel::Open
        });
    describe(&mut source, &k6, &samples);
    let mut warnings = caveats::input_warnings(&source, &k6);
    warnings.extend(samples.torn.iter().map(|f| {
        format!("{f}: its last line was torn (a sampler killed mid-write) and is left out")
    }));
    warnings.extend(read_caveats);
    let mut steps: Vec<StepReport> = k6
        .steps
        .iter()
        .map(|s| step::step_row(s, &k6, &samples, &params, hold_s, model))
        .collect();
    // Before the verdicts, so that no verdict or knee sentence cites a figure taken out.
    let unusable = super::bounds::steps(&mut steps, &params);
    warnings.extend(super::bounds::caveats(&unusable));
    let knee = verdict::judge(&mut steps, source.has_samples);
    let measured = measurement::Measured {
        k6: &k6,
        samples: &samples,
        params: &params,
        model,
        summary: summary.as_ref(),
        steps: &steps,
        ceiling_target: knee.passing_below_knee.or(knee.last_passing),
    };
    let checks = measurement::checks(&measured, &mut warnings);
    warnings.extend(caveats::data_warnings(
        &steps,
        &k6,
        &params,
        source.has_samples,
    ));
    let focus = &steps[knee.idx.unwrap_or(steps.len() - 1)];
    let (timeline, per_second) = seconds::timeline_and_focus(&k6, &samples, &steps[0], focus);
    let access = access_rows(&samples, &steps);
    let recovery = recovery_of(&k6, &samples, &steps, params.slo_p95_ms);
    let kernel = samples
        .sources
        .get("fpm_net")
        .map_or(&[][..], Vec::as_slice);
    let actions = super::actions::effects(&params.actions, &samples.fpm, kernel, &k6.timeline);
    let usl = super::usl::sweep(model, &steps, params.error_budget, knee.knee);
    Ok(Report {
        source,
        params,
        model,
        hold_s,
        steps,
        last_passing: knee.last_passing,
        knee: knee.knee,
        passing_below_knee: knee.passing_below_knee,
        knee_why: knee.why,
        dropped_iterations: k6.dropped_total,
        dropped_warmup: k6.dropped_warmup,
        checks,
        per_second,
        timeline,
        logs,
        access,
        warnings,
        unusable,
        refine: None,
        omission: None,
        fit: None,
        injected: Vec::new(),
        host_speed: None,
        recovery,
        actions,
        trigger: None,
        journeys: false,
        usl,
    })
}

/// A passing step row at `target` rps with 100 requests/s sent and ok, for the parts' tests.
#[cfg(test)]
pub(crate) fn test_row(target: u32, start_ms: i64) -> StepReport {
    StepReport {
        name: format!("r{target:04}"),
        target,
        unit: StepUnit::Rps,
        requests: 1000,
        p50_ms: 10.0,
        p95_ms: 20.0,
        p99_ms: 30.0,
        max_ms: 40.0,
        avg_ms: 12.0,
        ok_p50_ms: 10.0,
        ok_p95_ms: 20.0,
        ok_p99_ms: 30.0,
        failed_rate: 0.0,
        sent_per_s: 100.0,
        ok_per_s: 100.0,
        verdict: Verdict::Pass,
        failures: Vec::new(),
        start_ms,
        window_s: 10.0,
        truncated: false,
        non200: BTreeMap::new(),
        dropped: 0,
        max_vus: None,
        mean_vus: None,
        p99_tail_samples: 10.0,
        server: None,
        ms_cpu_per_ok: None,
        host_limited: None,
    }
}

/// A report of `steps` with nothing else in it, for the tests of what reads a report.
#[cfg(test)]
pub(crate) fn test_report(steps: Vec<StepReport>, params: Params) -> Report {
    Report {
        source: Source::default(),
        params,
        model: LoadModel::Open,
        hold_s: 10.0,
        steps,
        last_passing: None,
        knee: None,
        passing_below_knee: None,
        knee_why: None,
        dropped_iterations: 0,
        dropped_warmup: 0,
        checks: Checks::default(),
        per_second: Vec::new(),
        timeline: Vec::new(),
        logs: BTreeMap::new(),
        access: Vec::new(),
        warnings: Vec::new(),
        unusable: Vec::new(),
        refine: None,
        omission: None,
        fit: None,
        injected: Vec::new(),
        host_speed: None,
        recovery: None,
        actions: Vec::new(),
        trigger: None,
        journeys: false,
        usl: None,
    }
}
