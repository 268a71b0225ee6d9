//! Latency histograms (HDR, constant memory) with k6's percentile definition.
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest recordable latency in microseconds (10 minutes); larger values saturate.
const MAX_US: u64 = 600_000_000;

/// Latencies of one group of requests, in microseconds, 3 significant digits (0.1 %).
#[derive(Clone)]
pub struct LatencyHist {
    h: Histogram<u64>,
    /// Exact extremes and sum (ms), kept beside the histogram.
    pub max_ms: f64,
    pub min_ms: f64,
    pub sum_ms: f64,
}

impl Default for LatencyHist {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LatencyHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatencyHist(n={}, max={})", self.count(), self.max_ms)
    }
}

/// The usual latency figures of one group, in ms (k6's definitions).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl LatencyHist {
    pub(crate) fn new() -> Self {
        LatencyHist {
            h: Histogram::new_with_bounds(1, MAX_US, 3).expect("valid HDR bounds"),
            max_ms: 0.0,
            min_ms: f64::INFINITY,
            sum_ms: 0.0,
        }
    }

    pub(crate) fn record_ms(&mut self, ms: f64) {
        let us = (ms * 1000.0).round().clamp(1.0, MAX_US as f64) as u64;
        self.h.saturating_record(us);
        if ms > self.max_ms {
            self.max_ms = ms;
        }
        if ms < self.min_ms {
            self.min_ms = ms;
        }
        self.sum_ms += ms;
    }

    pub(crate) fn count(&self) -> u64 {
        self.h.len()
    }

    pub(crate) fn add(&mut self, other: &LatencyHist) {
        self.h.add(&other.h).expect("same bounds");
        self.max_ms = self.max_ms.max(other.max_ms);
        self.min_ms = self.min_ms.min(other.min_ms);
        self.sum_ms += other.sum_ms;
    }

    /// The histogram corrected for coordinated omission: every recorded latency `v` again
    /// through HdrHistogram's `record_correct(v, interval)`, which adds the requests a sender
    /// meaning to send one every `expected_interval_ms` would have sent while it waited
    /// (`v - interval`, `v - 2 interval`, ... down to the interval). Sum and extremes follow.
    pub(crate) fn corrected(&self, expected_interval_ms: f64) -> LatencyHist {
        // At least 1 ms and 1/10,000 of the largest value: at most 10,000 added values per
        // recorded one, whatever interval a hostile input asks for.
        let floor = (self.h.max() / 10_000).max(1000);
        let interval = ((expected_interval_ms * 1000.0).round().max(0.0) as u64).max(floor);
        let mut out = LatencyHist::new();
        for v in self.h.iter_recorded() {
            let us = v.value_iterated_to();
            let n = v.count_at_value();
            out.h
                .record_n_correct(us, n, interval)
                .expect("within the bounds it was recorded in");
        }
        out.max_ms = self.max_ms;
        out.min_ms = self.min_ms;
        out.sum_ms = out.h.mean() * out.h.len() as f64 / 1000.0;
        out
    }

    /// Number of samples strictly above `ms` (to the histogram's precision).
    pub(crate) fn count_above_ms(&self, ms: f64) -> u64 {
        let us = (ms * 1000.0).round().max(0.0) as u64;
        let at_or_below = if us == 0 {
            0
        } else {
            self.h.count_between(0, us)
        };
        self.count().saturating_sub(at_or_below)
    }

    /// k6's percentile: sort, i = p x (n - 1), interpolate linearly between ranks floor(i) and ceil(i).
    pub(crate) fn quantiles_ms(&self, ps: &[f64]) -> Vec<f64> {
        let n = self.count();
        if n == 0 {
            return vec![0.0; ps.len()];
        }
        // Ranks (0-based) needed, then one pass over the recorded buckets.
        let mut wanted: Vec<u64> = Vec::with_capacity(ps.len() * 2);
        for &p in ps {
            let i = p * (n as f64 - 1.0);
            wanted.push(i.floor() as u64);
            wanted.push(i.ceil() as u64);
        }
        let mut sorted = wanted.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let mut values = std::collections::HashMap::with_capacity(sorted.len());
        let mut seen: u64 = 0;
        let mut k = 0;
        for v in self.h.iter_recorded() {
            let c = v.count_at_value();
            let val_ms = self.h.median_equivalent(v.value_iterated_to()) as f64 / 1000.0;
            while k < sorted.len() && sorted[k] < seen + c {
                values.insert(sorted[k], val_ms);
                k += 1;
            }
            seen += c;
            if k == sorted.len() {
                break;
            }
        }
        ps.iter()
            .map(|&p| {
                let i = p * (n as f64 - 1.0);
                let lo = values
                    .get(&(i.floor() as u64))
                    .copied()
                    .unwrap_or(self.max_ms);
                let hi = values
                    .get(&(i.ceil() as u64))
                    .copied()
                    .unwrap_or(self.max_ms);
                // The top rank is the exact maximum; never report a percentile above it.
                (lo + (hi - lo) * (i - i.floor())).min(self.max_ms)
            })
            .collect()
    }

    pub fn percentiles(&self) -> Percentiles {
        let n = self.count();
        if n == 0 {
            return Percentiles::default();
        }
        let q = self.quantiles_ms(&[0.5, 0.9, 0.95, 0.99]);
        Percentiles {
            count: n,
            avg_ms: self.sum_ms / n as f64,
            p50_ms: q[0],
            p90_ms: q[1],
            p95_ms: q[2],
            p99_ms: q[3],
            max_ms: self.max_ms,
        }
    }
}

/// A coarse histogram for one second of the timeline (2 significant digits, 0.1 ms unit).
///
/// A second keeps its values as a plain list until it has [`SECOND_LIST_MAX`] of them, then an
/// HDR histogram (about 8 KiB): a long, sparse timeline costs memory in proportion to its rows,
/// not 8 KiB per second. The quantiles are the same either way.
#[derive(Clone, Default)]
pub struct SecondHist {
    list: Vec<u32>,
    h: Option<Histogram<u32>>,
}

/// Values a second keeps as a list before it switches to an HDR histogram.
pub(crate) const SECOND_LIST_MAX: usize = 512;

fn second_hdr() -> Histogram<u32> {
    Histogram::new_with_bounds(1, 6_000_000, 2).expect("valid HDR bounds")
}

impl SecondHist {
    pub(crate) fn record_ms(&mut self, ms: f64) {
        self.record(((ms * 10.0).ceil().clamp(1.0, 6_000_000.0)) as u32);
    }
    /// Record a value in the histogram's unit (0.1 ms).
    fn record(&mut self, v: u32) {
        match &mut self.h {
            Some(h) => h.saturating_record(v as u64),
            None if self.list.len() < SECOND_LIST_MAX => self.list.push(v),
            None => self.hdr().saturating_record(v as u64),
        }
    }
    /// The HDR form, converting the list on first use.
    fn hdr(&mut self) -> &mut Histogram<u32> {
        let list = std::mem::take(&mut self.list);
        self.h.get_or_insert_with(|| {
            let mut h = second_hdr();
            list.iter().for_each(|v| h.saturating_record(*v as u64));
            h
        })
    }
    /// Merge another second's histogram (several generators' requests in the same second).
    pub(crate) fn add(&mut self, other: &SecondHist) {
        match &other.h {
            Some(oh) => self.hdr().add(oh).expect("same bounds"),
            None => other.list.iter().for_each(|v| self.record(*v)),
        }
    }
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        let tmp;
        let h = match &self.h {
            Some(h) => h,
            None => {
                let mut t = second_hdr();
                self.list
                    .iter()
                    .for_each(|v| t.saturating_record(*v as u64));
                tmp = t;
                &tmp
            }
        };
        if h.is_empty() {
            return 0.0;
        }
        h.median_equivalent(h.value_at_quantile(q)) as f64 / 10.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_as_list_or_hdr_gives_the_same_quantiles() {
        let ms = |i: usize| (i * 37 % 1000) as f64 + 0.25;
        let (mut a, mut b) = (SecondHist::default(), SecondHist::default());
        for i in 0..2000 {
            a.record_ms(ms(i));
            if i < 100 {
                b.record_ms(ms(i));
            }
        }
        assert!(a.h.is_some() && b.h.is_none());
        let mut hb = second_hdr();
        (0..100).for_each(|i| hb.saturating_record((ms(i) * 10.0).ceil() as u64));
        for q in [0.5, 0.95, 0.99] {
            let want = hb.median_equivalent(hb.value_at_quantile(q)) as f64 / 10.0;
            assert_eq!(b.quantile_ms(q), want);
        }
        let mut m = b.clone();
        m.add(&a);
        let mut both = second_hdr();
        (0..100)
            .chain(0..2000)
            .for_each(|i| both.saturating_record((ms(i) * 10.0).ceil() as u64));
        let want = both.median_equivalent(both.value_at_quantile(0.95)) as f64 / 10.0;
        assert_eq!((m.quantile_ms(0.95), m.h.is_some()), (want, true));
        assert!(std::mem::size_of::<SecondHist>() < 128);
    }

    #[test]
    fn k6_interpolation_on_small_sets() {
        let mut h = LatencyHist::new();
        for v in [10.0, 20.0, 30.0, 40.0] {
            h.record_ms(v);
        }
        // i = 0.5 x 3 = 1.5 -> 20 + 0.5 x 10 = 25 ; i = 0.95 x 3 = 2.85 -> 30 + 0.85 x 10 = 38.5
        let q = h.quantiles_ms(&[0.5, 0.95, 1.0]);
        assert!((q[0] - 25.0).abs() < 0.05, "{q:?}");
        assert!((q[1] - 38.5).abs() < 0.05, "{q:?}");
        assert!((q[2] - 40.0).abs() < 0.05, "{q:?}");
    }

    #[test]
    fn precision_within_a_tenth_of_a_percent() {
        let mut h = LatencyHist::new();
        for i in 1..=10_000 {
            h.record_ms(i as f64 * 0.37);
        }
        let p = h.percentiles();
        let exact95 = 0.37 * (1.0 + 0.95 * 9999.0);
        assert!((p.p95_ms - exact95).abs() / exact95 < 0.001, "{p:?}");
        assert_eq!(p.count, 10_000);
        assert!((p.max_ms - 3700.0).abs() < 1e-9);
    }

    #[test]
    fn count_above_threshold() {
        let mut h = LatencyHist::new();
        for v in [100.0, 200.0, 600.0, 700.0] {
            h.record_ms(v);
        }
        assert_eq!(h.count_above_ms(500.0), 2);
        assert_eq!(h.count_above_ms(50.0), 4);
    }
}
