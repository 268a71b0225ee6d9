//! Small descriptive statistics (pure), shared by the analysis and the tools: nearest-rank percentiles, mean,
//! median, standard deviation and the spread figures the article quotes (±% around the median).
use serde::{Deserialize, Serialize};

/// Nearest-rank percentile of an ascending slice (`p` in 0..=100); None when empty.
pub(crate) fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// A sorted copy (NaN-free input assumed; NaNs sort last).
pub(crate) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

pub(crate) fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Median (mean of the two middle values for an even count).
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let s = sorted(values);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// Sample standard deviation (n - 1); None below 2 values.
pub(crate) fn stdev(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let m = mean(values)?;
    let ss: f64 = values.iter().map(|v| (v - m).powi(2)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// Summary of a list of values (durations, latenesses, ...), all in the input's unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub median: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub stdev: Option<f64>,
    /// (max - min) / mean, in %.
    pub range_pct_of_mean: f64,
    /// The larger distance of min or max from the median, in % of the median ("±x %").
    pub plus_minus_pct_of_median: f64,
}

/// Summarize `values`; None when empty.
pub(crate) fn summarize(values: &[f64]) -> Option<Summary> {
    let s = sorted(values);
    let (min, max) = (*s.first()?, *s.last()?);
    let mean = mean(&s)?;
    let median = median(&s)?;
    let pct = |x: f64, of: f64| if of == 0.0 { 0.0 } else { 100.0 * x / of };
    Some(Summary {
        count: s.len(),
        min,
        max,
        mean,
        median,
        p50: percentile_sorted(&s, 50.0)?,
        p95: percentile_sorted(&s, 95.0)?,
        p99: percentile_sorted(&s, 99.0)?,
        stdev: stdev(&s),
        range_pct_of_mean: pct(max - min, mean),
        plus_minus_pct_of_median: pct((max - median).max(median - min), median),
    })
}

/// Round to `digits` decimals (for reports).
pub(crate) fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 50.0), Some(50.0));
        assert_eq!(percentile_sorted(&v, 99.0), Some(99.0));
        assert_eq!(percentile_sorted(&v, 100.0), Some(100.0));
        assert_eq!(percentile_sorted(&v, 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&[7.0], 99.0), Some(7.0));
        assert_eq!(percentile_sorted(&[], 50.0), None);
    }

    #[test]
    fn summary_spread_figures() {
        // median 200, min 190 (-5 %), max 214 (+7 %): ±7 %; range 24 / mean 201 = 11.94 %
        let s = summarize(&[200.0, 190.0, 214.0, 200.0, 201.0]).unwrap();
        assert_eq!(s.count, 5);
        assert_eq!(s.median, 200.0);
        assert_eq!(s.mean, 201.0);
        assert!((s.plus_minus_pct_of_median - 7.0).abs() < 1e-9);
        assert!((s.range_pct_of_mean - 2400.0 / 201.0).abs() < 1e-9);
        assert!(s.stdev.unwrap() > 0.0);
        assert_eq!(median(&[1.0, 3.0, 2.0, 4.0]), Some(2.5));
        assert!(summarize(&[]).is_none());
        assert_eq!(summarize(&[5.0]).unwrap().stdev, None);
    }
}
