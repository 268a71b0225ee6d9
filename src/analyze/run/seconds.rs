//! The run second by second: rows of the k6 timeline with the server's CPU in that second.
use crate::analyze::k6csv::K6Data;
use crate::analyze::model::{SecondRow, StepReport};
use crate::analyze::samples::{self, Samples};

/// End (unix ms) of a window of `window_s` seconds from `start_ms`.
pub(super) fn end_ms(start_ms: i64, window_s: f64) -> i64 {
    start_ms + (window_s * 1000.0) as i64
}

/// One row per second of the timeline in `range` (default: all of it); `rel` counts from `rel0`.
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
            let w = (!samples.is_empty()).then(|| {
                samples::window(
                    samples,
                    samples::Span::second(t * 1000),
                    None,
                    &Default::default(),
                    &rules,
                )
            });
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

/// (the whole run, the seconds around `focus`): 4 s before its start to 9 s after.
pub(super) fn timeline_and_focus(
    k6: &K6Data,
    samples: &Samples,
    first: &StepReport,
    focus: &StepReport,
) -> (Vec<SecondRow>, Vec<SecondRow>) {
    let first_start_s = first.start_ms.div_euclid(1000);
    let timeline = timeline_rows(k6, samples, first_start_s, None);
    let fs = focus.start_ms.div_euclid(1000);
    let per_second = timeline_rows(k6, samples, first_start_s, Some((fs - 4, fs + 9)));
    (timeline, per_second)
}
