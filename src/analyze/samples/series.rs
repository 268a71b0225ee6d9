//! A periodic reading over exactly one window. Two kinds of series: a cumulative counter
//! sampled at times `t` (php-fpm's `accepted conn`, pg's `xact_commit`), and interval readings,
//! where each sample is the mean over the interval since the one before (a container's CPU
//! from its cgroup's usage counter, a host CPU's busy %, dockerd's CPU). Both are integrated:
//! the counter is read at the window's edges, linearly interpolated between the samples around
//! each edge, and the difference divided by the window's length. An interval reading is first
//! summed back into its counter (rate x interval), so the figure is the use inside the window,
//! whatever the sampler's phase against the clock's seconds. Too few samples inside the window,
//! or samples that do not cover it, make the figure unusable (`None`).
use serde::{Deserialize, Serialize};

/// How far outside a window samples are looked for (ms): the sample before and after each
/// edge must be within this of it to stand for it.
pub(crate) const REACH_MS: i64 = 5_000;
/// The part of the window the samples must cover (the rest, at an edge with no sample beyond
/// it, is left out of the mean).
pub(crate) const MIN_COVER: f64 = 0.9;
/// Samples a step's window must hold for its figures from periodic samples to be usable.
pub const MIN_STEP_SAMPLES: usize = 2;

/// A window `[from, to)` (unix ms) and how many samples must fall inside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub from: i64,
    pub to: i64,
    pub min_inside: usize,
}

impl Span {
    /// A step's window: at least [`MIN_STEP_SAMPLES`] inside.
    pub fn step(from: i64, to: i64) -> Span {
        Span {
            from,
            to,
            min_inside: MIN_STEP_SAMPLES,
        }
    }

    /// One second of the timeline: one sample inside is enough (a row, not a step's figure).
    pub(crate) fn second(from: i64) -> Span {
        Span {
            from,
            to: from + 1000,
            min_inside: 1,
        }
    }

    fn len_ms(&self) -> i64 {
        self.to - self.from
    }

    /// The window's length in seconds, for the reasons a figure is unusable.
    pub(crate) fn seconds(&self) -> f64 {
        self.len_ms() as f64 / 1000.0
    }
}

/// `v` (sorted by `t`) from [`REACH_MS`] before the window to [`REACH_MS`] after it.
pub(crate) fn around<T>(v: &[T], t: impl Fn(&T) -> i64, span: Span) -> &[T] {
    super::in_window(v, t, span.from - REACH_MS, span.to + REACH_MS)
}

/// Why a series gives no figure over `span`, or `None` when it does.
pub(crate) fn unusable(pts: &[(i64, f64)], span: Span) -> Option<String> {
    let inside = pts
        .iter()
        .filter(|(t, _)| *t >= span.from && *t < span.to)
        .count();
    if inside < span.min_inside {
        return Some(format!(
            "had {inside} sample(s) inside its {:.2} s window ({} needed)",
            span.seconds(),
            span.min_inside
        ));
    }
    let (a, b) = covered(pts, span)?;
    ((b - a) < (MIN_COVER * span.len_ms() as f64) as i64).then(|| {
        format!(
            "had samples covering {:.2} s of its {:.2} s window",
            (b - a).max(0) as f64 / 1000.0,
            span.seconds()
        )
    })
}

/// The part of the window inside the series' first and last samples.
fn covered(pts: &[(i64, f64)], span: Span) -> Option<(i64, i64)> {
    let (first, last) = (pts.first()?.0, pts.last()?.0);
    Some((span.from.max(first), span.to.min(last)))
}

/// A counter's value at `x`, linearly interpolated between the samples around it
/// (`pts` sorted, `x` within their range).
fn at(pts: &[(i64, f64)], x: i64) -> f64 {
    let i = pts.partition_point(|(t, _)| *t <= x);
    match (i.checked_sub(1).map(|j| pts[j]), pts.get(i).copied()) {
        (Some((t0, c0)), Some((t1, c1))) if t1 > t0 => {
            c0 + (c1 - c0) * (x - t0) as f64 / (t1 - t0) as f64
        }
        (Some((_, c0)), _) => c0,
        (None, Some((_, c1))) => c1,
        (None, None) => 0.0,
    }
}

/// Per second over `span`: the counter's increase across the window (interpolated at its
/// edges) divided by its length; `None` when [`unusable`].
pub(crate) fn counter_rate(pts: &[(i64, f64)], span: Span) -> Option<f64> {
    if unusable(pts, span).is_some() {
        return None;
    }
    let (a, b) = covered(pts, span)?;
    (b > a).then(|| (at(pts, b) - at(pts, a)) / ((b - a) as f64 / 1000.0))
}

/// A raw counter's samples as a non-decreasing one: a decrease (a restart) adds nothing.
pub(crate) fn monotone(pts: impl Iterator<Item = (i64, f64)>) -> Vec<(i64, f64)> {
    let mut out: Vec<(i64, f64)> = Vec::new();
    let mut prev: Option<f64> = None;
    for (t, c) in pts {
        let sum = out.last().map_or(0.0, |l| l.1) + prev.map_or(0.0, |p| (c - p).max(0.0));
        out.push((t, sum));
        prev = Some(c);
    }
    out
}

/// Interval readings (each the mean over the interval since the sample before; the first
/// one's interval taken as long as the next gap) summed back into their counter, in
/// reading x seconds.
pub(crate) fn cumulative(pts: &[(i64, f64)]) -> Vec<(i64, f64)> {
    let [(t0, _), (t1, _), ..] = pts else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(pts.len() + 1);
    out.push((t0 - (t1 - t0), 0.0));
    for &(t, r) in pts {
        let (prev, c) = out[out.len() - 1];
        out.push((t, c + r * (t - prev) as f64 / 1000.0));
    }
    out
}

/// How much of the window each interval reading covers (ms): the overlap of its interval,
/// (the previous sample's `t`, its `t`], with the window (`ts` sorted; the first one's interval
/// taken as long as the next gap). A mean weighted so is the readings integrated over the window.
pub(crate) fn overlaps(ts: &[i64], span: Span) -> Vec<f64> {
    let first_gap = match ts {
        [a, b, ..] => b - a,
        _ => 1000,
    };
    ts.iter()
        .enumerate()
        .map(|(i, &t)| {
            let start = if i == 0 { t - first_gap } else { ts[i - 1] };
            (t.min(span.to) - start.max(span.from)).max(0) as f64
        })
        .collect()
}

/// The mean of interval readings over exactly `span` (see the module's doc).
pub(crate) fn interval_mean(pts: &[(i64, f64)], span: Span) -> Option<f64> {
    let c = cumulative(pts);
    // the inside count is of the readings themselves, not of the counter's origin
    unusable(pts, span).is_none().then_some(())?;
    counter_rate(&c, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(from: i64, to: i64) -> Span {
        Span::step(from, to)
    }

    #[test]
    fn a_counter_is_read_at_the_edges_between_its_samples() {
        // +100 per second, sampled every 2 s from 500 ms
        let pts: Vec<(i64, f64)> = (0..6).map(|i| (500 + i * 2000, i as f64 * 200.0)).collect();
        let r = counter_rate(&pts, span(1000, 7000)).unwrap();
        assert!((r - 100.0).abs() < 1e-9, "{r}");
        // a window outside the samples' reach, or with one sample inside: unusable
        assert_eq!(counter_rate(&pts, span(20_000, 26_000)), None);
        assert_eq!(counter_rate(&pts, span(2000, 3000)), None);
        assert!(
            unusable(&pts, span(2000, 3000))
                .unwrap()
                .contains("had 1 sample(s) inside")
        );
    }

    #[test]
    fn a_restart_adds_nothing() {
        let m = monotone([(0, 10.0), (1000, 30.0), (2000, 5.0), (3000, 15.0)].into_iter());
        assert_eq!(m, [(0, 0.0), (1000, 20.0), (2000, 20.0), (3000, 30.0)]);
    }

    /// The samples' phase against the clock's seconds does not matter: one core busy reads one
    /// core over any window, however the ticks straddle a second's boundary.
    #[test]
    fn interval_readings_integrate_over_exactly_the_window() {
        let ticks = [999, 2001, 2998, 4003, 4999, 6002, 6999, 8001];
        let mut prev = 0;
        let pts: Vec<(i64, f64)> = ticks
            .iter()
            .map(|&t| {
                let dt = t - prev;
                prev = t;
                // the counter advanced 1 ms per ms; the reading divides by the same interval
                (t, dt as f64 / dt as f64)
            })
            .collect();
        for (a, b) in [(1500, 6960), (2000, 8000), (1200, 3300)] {
            let m = interval_mean(&pts, span(a, b)).unwrap();
            assert!((m - 1.0).abs() < 1e-9, "[{a}, {b}): {m}");
        }
        // half busy over [2001, 4003), idle elsewhere: the window sees the overlap only
        let half: Vec<(i64, f64)> = pts
            .iter()
            .map(|&(t, _)| (t, if (2998..=4003).contains(&t) { 0.5 } else { 0.0 }))
            .collect();
        let m = interval_mean(&half, span(2001, 6005)).unwrap();
        assert!((m - 0.25).abs() < 1e-9, "{m}");
    }
}
