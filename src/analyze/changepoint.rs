//! Change points of a series: E-divisive means with Student's t as its significance test, as
//! Apache Otava 0.8.0 computes them (`otava/analysis.py`'s `compute_change_points` and its
//! `change_point_divisive` package; Fleming et al., ICPE 2023, "Hunter"). Ported step for step,
//! quirks included, so its results can be checked against Otava's (the golden tests under
//! `tests/fixtures/history/`):
//!
//! 1. **split**: windows of `window` points, each shifted by `window / 2` (or to the last change
//!    point found): in each, E-divisive means (Matteson and James) finds candidates by the
//!    energy statistic Q̂ and keeps each whose t-test p-value between the neighbouring segments is
//!    at most the *first-pass* p-value (10 × `max_pvalue` below 0.05); these are the weak points;
//! 2. **merge**: the weakest (highest p-value, else the smallest relative change) is dropped
//!    until every point left has p < `max_pvalue` and a change above `min_magnitude`, the
//!    statistics of the points beside each dropped one recomputed (Otava recomputes the one
//!    after it and the next; so does this).
//!
//! Pure: no I/O, no clock, no randomness.
use super::student::t_two_sided_p;
use serde::Serialize;

/// The detection's settings: Otava's `--window`, `--p-value`, `--magnitude`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Options {
    pub window: usize,
    pub max_pvalue: f64,
    pub min_magnitude: f64,
}

impl Default for Options {
    /// perflab's defaults: a window of 30 points (Otava's is 50: a month of nightly points is
    /// judged instead of seven weeks) and p 0.0002 (Otava's is 0.001, which finds 2.4 false
    /// change points per 100 series of 30 points with 2.7 % noise; 0.0002 finds 0.4, and a 5 %
    /// step in 91 % of series once 15 points follow it: docs/history.md); magnitude 0.
    fn default() -> Self {
        Options {
            window: 30,
            max_pvalue: 0.0002,
            min_magnitude: 0.0,
        }
    }
}

/// The two segments around a change point, as Otava's `TTestStats` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub mean_before: f64,
    pub mean_after: f64,
    /// Population standard deviations (`np.std`, ddof 0), as Otava reports them.
    pub std_before: f64,
    pub std_after: f64,
    /// Two-sided Student's t (pooled variance), 1 when both segments hold one point.
    pub pvalue: f64,
}

impl Stats {
    /// `mean_after / mean_before - 1` (0 when the mean before is 0).
    pub fn forward_rel_change(&self) -> f64 {
        if self.mean_before == 0.0 {
            return 0.0;
        }
        self.mean_after / self.mean_before - 1.0
    }

    fn backward_rel_change(&self) -> f64 {
        if self.mean_after == 0.0 {
            return 0.0;
        }
        self.mean_before / self.mean_after - 1.0
    }

    /// The larger of the forward and backward relative changes (Otava's `change_magnitude`).
    pub fn magnitude(&self) -> f64 {
        self.forward_rel_change()
            .abs()
            .max(self.backward_rel_change().abs())
    }
}

/// A change point: the index of the first point after the change, and its statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    pub index: usize,
    pub stats: Stats,
}

/// Otava's `fill_missing`: a missing value takes the previous one, leading missing values the
/// first present one. None when every value is missing.
pub fn fill_missing(v: &[Option<f64>]) -> Option<Vec<f64>> {
    let first = v.iter().flatten().next().copied()?;
    let mut last = first;
    Some(
        v.iter()
            .map(|x| {
                if let Some(x) = x {
                    last = *x;
                }
                last
            })
            .collect(),
    )
}

/// The change points of `series` (Otava's `compute_change_points`), by index.
pub fn detect(series: &[f64], o: &Options) -> Vec<ChangePoint> {
    let p = o.max_pvalue;
    let first_pass = if p < 0.05 {
        p * 10.0
    } else if p < 0.5 {
        p * 2.0
    } else {
        p
    };
    let weak = split(series, o.window.max(2), first_pass);
    merge(weak, series, p, o.min_magnitude)
}

/// Two-sided t-test of two segments (Otava's `TTestSignificanceTester.compare`).
fn compare(left: &[f64], right: &[f64]) -> Stats {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let std = |v: &[f64], m: f64| {
        if v.len() < 2 {
            return 0.0;
        }
        (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64).sqrt()
    };
    let (m1, m2) = (mean(left), mean(right));
    let (s1, s2) = (std(left, m1), std(right, m2));
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    let pvalue = if left.len() + right.len() > 2 {
        // scipy's ttest_ind_from_stats, equal variances: it reads the stds as sample ones
        let df = n1 + n2 - 2.0;
        let svar = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let t = (m1 - m2) / (svar * (1.0 / n1 + 1.0 / n2)).sqrt();
        if t.is_nan() {
            f64::NAN
        } else {
            t_two_sided_p(t.abs(), df)
        }
    } else {
        1.0
    };
    Stats {
        mean_before: m1,
        mean_after: m2,
        std_before: s1,
        std_after: s2,
        pvalue,
    }
}

/// The segments between sorted change points `cps` over `0..n`, empty ones left out.
fn intervals(cps: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(cps.len() + 1);
    for i in 0..=cps.len() {
        let start = if i == 0 { 0 } else { cps[i - 1] };
        let stop = if i == cps.len() { n } else { cps[i] };
        if start != stop {
            out.push((start, stop));
        }
    }
    out
}

/// The statistics of a change point at `index` (Otava's `change_point`): an existing one
/// compares the segments on its two sides, a new one splits the segment it falls in.
fn stats_at(index: usize, series: &[f64], iv: &[(usize, usize)]) -> Stats {
    for (i, &(start, stop)) in iv.iter().enumerate() {
        if stop == index {
            let (rs, re) = iv.get(i + 1).copied().unwrap_or((stop, stop));
            return compare(&series[start..stop], &series[rs..re]);
        }
        if start < index && index < stop {
            return compare(&series[start..index], &series[index..stop]);
        }
    }
    unreachable!("a change point at {index} lies in no segment of {iv:?}")
}

/// The split step: weak change points over sliding windows, their statistics over the whole
/// series.
fn split(series: &[f64], window: usize, max_pvalue: f64) -> Vec<ChangePoint> {
    let n = series.len();
    let step = window / 2;
    let mut found: Vec<usize> = Vec::new();
    let mut start = 0;
    while start < n {
        let end = (start + window).min(n);
        let new: Vec<usize> = window_points(&series[start..end], max_pvalue)
            .into_iter()
            .map(|i| i + start)
            .collect();
        start = new.last().copied().unwrap_or(0).max(start + step);
        for i in new {
            if !found.contains(&i) {
                found.push(i);
            }
        }
    }
    found.sort_unstable();
    let iv = intervals(&found, n);
    found
        .iter()
        .map(|&index| ChangePoint {
            index,
            stats: stats_at(index, series, &iv),
        })
        .collect()
}

/// E-divisive means on one window (Otava's `ChangePointDetector.get_change_points`): the
/// best candidate of all segments, kept while its p-value is at most `max_pvalue`; indexes in
/// the window, sorted.
fn window_points(w: &[f64], max_pvalue: f64) -> Vec<usize> {
    let calc = Pairs::new(w);
    let mut cps: Vec<usize> = Vec::new();
    loop {
        let iv = intervals(&cps, w.len());
        let mut best: Option<(usize, f64)> = None;
        for &(s, e) in iv.iter().filter(|(s, e)| e - s > 1) {
            let c = calc.candidate(s, e);
            // Python's max keeps the first of equal values
            if best.is_none_or(|b| c.1 > b.1) {
                best = Some(c);
            }
        }
        let Some((index, _)) = best else { break };
        // NaN is not significant, as in Python
        if stats_at(index, w, &iv).pvalue <= max_pvalue {
            cps.push(index);
            cps.sort_unstable();
        } else {
            break;
        }
    }
    cps
}

/// The merge step: drop the weakest point until all are strong (see the module doc).
fn merge(
    mut cps: Vec<ChangePoint>,
    series: &[f64],
    max_pvalue: f64,
    min_magnitude: f64,
) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        // Python's max / min keep the first of equal keys (and NaN's comparisons are false)
        let mut weakest = 0;
        for (i, c) in cps.iter().enumerate() {
            if c.stats.pvalue > cps[weakest].stats.pvalue {
                weakest = i;
            }
        }
        if cps[weakest].stats.pvalue < max_pvalue {
            weakest = 0;
            for (i, c) in cps.iter().enumerate() {
                if c.stats.magnitude() < cps[weakest].stats.magnitude() {
                    weakest = i;
                }
            }
            if cps[weakest].stats.magnitude() > min_magnitude {
                return cps;
            }
        }
        cps.remove(weakest);
        let idx: Vec<usize> = cps.iter().map(|c| c.index).collect();
        let iv = intervals(&idx, series.len());
        for i in [weakest, weakest + 1] {
            if let Some(c) = cps.get_mut(i) {
                c.stats = stats_at(c.index, series, &iv);
            }
        }
    }
    cps
}

/// The pairwise distances of one window and their running sums (Otava's
/// `PairDistanceCalculator`, power 1), from which Q̂ of every split of a segment follows.
struct Pairs {
    n: usize,
    /// |x_i - x_j|, row-major n × n.
    d: Vec<f64>,
    /// V[c] = sum over r <= c of d(r, c + 1), c < n - 1.
    v: Vec<f64>,
    /// H[r][c] = sum over r <= c' <= c of d(r, c' + 1), (n - 1) × (n - 1), row-major.
    h: Vec<f64>,
}

impl Pairs {
    fn new(x: &[f64]) -> Pairs {
        let n = x.len();
        let mut d = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                d[i * n + j] = (x[i] - x[j]).abs();
            }
        }
        let m = n.saturating_sub(1);
        let tri = |r: usize, c: usize| if c >= r { d[r * n + c + 1] } else { 0.0 };
        let mut v = vec![0.0; m];
        for r in 0..m {
            for (c, vc) in v.iter_mut().enumerate() {
                *vc += tri(r, c);
            }
        }
        let mut h = vec![0.0; m * m];
        for r in 0..m {
            let mut acc = 0.0;
            for c in 0..m {
                acc += tri(r, c);
                h[r * m + c] = acc;
            }
        }
        Pairs { n, d, v, h }
    }

    /// The best split of `start..end`: (index of the first point after it, Q̂), the first
    /// maximum in row-major order of Otava's Q matrix (zeros where a split is not defined,
    /// as numpy leaves them: they win when every Q̂ is negative).
    fn candidate(&self, start: usize, end: usize) -> (usize, f64) {
        let (n, m) = (self.n, self.n - 1);
        let l = end - 1 - start;
        let vs: Vec<f64> = (0..l)
            .map(|k| {
                let below: f64 = (0..start).map(|r| self.d[r * n + start + 1 + k]).sum();
                self.v[start + k] - below
            })
            .collect();
        let hs = |a: usize, b: usize| self.h[(start + a) * m + start + b];
        let cv: Vec<f64> = vs
            .iter()
            .scan(0.0, |acc, x| {
                *acc += x;
                Some(*acc)
            })
            .collect();
        // cH[a][b]: cumulative over a; R[a][b]: sum of Hs[p][b] for a < p <= l - 1
        let mut ch = vec![0.0; l * l];
        for a in 0..l {
            for b in 0..l {
                ch[a * l + b] = hs(a, b) + if a > 0 { ch[(a - 1) * l + b] } else { 0.0 };
            }
        }
        let mut r = vec![0.0; l * l];
        for a in (0..l.saturating_sub(1)).rev() {
            for b in 1..l {
                r[a * l + b] = hs(a + 1, b) + if a + 2 < l { r[(a + 1) * l + b] } else { 0.0 };
            }
        }
        let mut best = (start + 1, f64::NEG_INFINITY);
        for a in 0..l {
            for b in 0..l {
                let q = q_at(a, b, l, ch[a * l + b], &cv, r[a * l + b]);
                if q > best.1 || (q.is_nan() && !best.1.is_nan()) {
                    best = (a + 1 + start, q);
                }
            }
        }
        best
    }
}

/// Q(τ, κ) = A - B - C at row `a` (τ = start + 1 + a), column `b` (κ = start + 2 + b), with the
/// zeros numpy leaves outside each matrix's triangle.
fn q_at(a: usize, b: usize, l: usize, ch: f64, cv: &[f64], r: f64) -> f64 {
    let (af, bf) = (a as f64, b as f64);
    let prev = if a >= 1 { cv[a - 1] } else { 0.0 };
    let big_a = if b >= a {
        2.0 / (bf + 2.0) * (ch - prev)
    } else {
        0.0
    };
    let big_b = if a >= 1 && b >= a {
        (2.0 * (bf - af + 1.0)) / ((bf + 2.0) * af) * prev
    } else {
        0.0
    };
    let big_c = if a + 1 < l && b > a {
        (2.0 * (af + 1.0)) / ((bf + 2.0) * (bf - af)) * r
    } else {
        0.0
    };
    big_a - big_b - big_c
}
