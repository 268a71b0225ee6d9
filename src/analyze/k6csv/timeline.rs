//! The per-second timeline of a k6 CSV (completions, latency, in-flight time, drops, VUs),
//! with 100 ms buckets of successes and drops for step windows that do not align with seconds.
use crate::analyze::hist::SecondHist;

/// One second of the run (by completion time unless stated).
#[derive(Clone, Default)]
pub struct SecondAgg {
    /// Requests completed in this second (all tags, including ramp and warm-up).
    pub done: u32,
    pub ok: u32,
    pub non200: u32,
    /// Requests started in this second.
    pub started: u32,
    /// Sum of request-time overlapping this second (ms): average in-flight = busy_ms / 1000.
    pub busy_ms: f64,
    pub dropped: u32,
    /// Largest `vus` sample in this second.
    pub vus: Option<f64>,
    pub hist: Option<Box<SecondHist>>,
}

/// The per-second timeline; index 0 is `base_s` (unix seconds).
///
/// While it is being filled, earlier seconds may arrive: the arrays then grow at the front by
/// at least their length (slots no row touched yet, counted in `pad_*`), so rows in descending
/// order cost linear time, not quadratic; `trim` drops the untouched front slots at the end.
#[derive(Clone, Default)]
pub struct Timeline {
    pub base_s: i64,
    pub secs: Vec<SecondAgg>,
    /// Successful completions and drops per 100 ms (step windows rarely align with seconds).
    pub fine_base: i64,
    pub fine: Vec<(u32, u32)>,
    pad_secs: usize,
    pad_fine: usize,
}

/// Index of `key` in `v`, whose index 0 is `*base`, growing `v` at either end: at the front by
/// at least `v.len()` (geometrically), the new slots counted in `*pad` until one is touched.
fn slot<T>(
    v: &mut Vec<T>,
    base: &mut i64,
    pad: &mut usize,
    key: i64,
    fill: impl FnMut() -> T,
) -> usize {
    if v.is_empty() {
        *base = key;
        *pad = 0;
    }
    let i = if key < *base {
        let need = (*base - key) as usize;
        let grow = need.max(v.len());
        v.splice(0..0, std::iter::repeat_with(fill).take(grow));
        *base -= grow as i64;
        *pad += grow;
        grow - need
    } else {
        let i = (key - *base) as usize;
        if i >= v.len() {
            v.resize_with(i + 1, fill);
        }
        i
    };
    *pad = (*pad).min(i);
    i
}

impl Timeline {
    pub(crate) fn get_mut(&mut self, sec: i64) -> &mut SecondAgg {
        let i = slot(
            &mut self.secs,
            &mut self.base_s,
            &mut self.pad_secs,
            sec,
            SecondAgg::default,
        );
        &mut self.secs[i]
    }
    /// The 100 ms bucket holding unix ms `t`.
    pub(crate) fn fine_mut(&mut self, t_ms: i64) -> &mut (u32, u32) {
        let i = slot(
            &mut self.fine,
            &mut self.fine_base,
            &mut self.pad_fine,
            t_ms.div_euclid(100),
            Default::default,
        );
        &mut self.fine[i]
    }
    /// Drop the front slots that growth added but no row touched; call when filling is done.
    pub(crate) fn trim(&mut self) {
        self.secs.drain(..self.pad_secs);
        self.base_s += self.pad_secs as i64;
        self.pad_secs = 0;
        self.fine.drain(..self.pad_fine);
        self.fine_base += self.pad_fine as i64;
        self.pad_fine = 0;
    }
    /// (successful completions, drops) in [from_ms, to_ms), to 100 ms.
    pub(crate) fn ok_and_drops(&self, from_ms: i64, to_ms: i64) -> (u64, u64) {
        let (a, b) = (
            (from_ms as f64 / 100.0).round() as i64,
            (to_ms as f64 / 100.0).round() as i64,
        );
        let mut out = (0u64, 0u64);
        for d in a.max(self.fine_base)..b.min(self.fine_base + self.fine.len() as i64) {
            let x = self.fine[(d - self.fine_base) as usize];
            out.0 += x.0 as u64;
            out.1 += x.1 as u64;
        }
        out
    }
    /// Count a request that started at `start_ms` and completed at `end_ms` (all tags): its
    /// completion, its latency, its start, and its time in flight spread over the seconds.
    pub(crate) fn record_request(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        dur_ms: f64,
        status: u16,
        ok: bool,
    ) {
        let s = self.get_mut(end_ms.div_euclid(1000));
        s.done = s.done.saturating_add(1);
        if ok {
            s.ok = s.ok.saturating_add(1);
        }
        if status != 200 {
            s.non200 = s.non200.saturating_add(1);
        }
        s.hist
            .get_or_insert_with(Default::default)
            .record_ms(dur_ms);
        if ok {
            let f = self.fine_mut(end_ms);
            f.0 = f.0.saturating_add(1);
        }
        let s = self.get_mut(start_ms.div_euclid(1000));
        s.started = s.started.saturating_add(1);
        let mut t = start_ms;
        while t < end_ms {
            let sec_end = (t.div_euclid(1000) + 1) * 1000;
            let upto = sec_end.min(end_ms);
            self.get_mut(t.div_euclid(1000)).busy_ms += (upto - t) as f64;
            t = upto;
        }
    }
    /// Count `n` iterations k6 dropped at `t_ms`.
    pub(crate) fn record_drop(&mut self, t_ms: i64, n: u32) {
        let s = self.get_mut(t_ms.div_euclid(1000));
        s.dropped = s.dropped.saturating_add(n);
        let f = self.fine_mut(t_ms);
        f.1 = f.1.saturating_add(n);
    }
    pub(crate) fn get(&self, sec: i64) -> Option<&SecondAgg> {
        if sec < self.base_s {
            return None;
        }
        self.secs.get((sec - self.base_s) as usize)
    }
    pub(crate) fn end_s(&self) -> i64 {
        self.base_s + self.secs.len() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_counts_where_it_ended_and_is_in_flight_in_every_second_it_spans() {
        let mut t = Timeline::default();
        // 10.600 s .. 12.200 s, failed with a 503.
        t.record_request(10_600, 12_200, 1600.0, 503, false);
        t.record_drop(11_050, 2);
        assert_eq!((t.base_s, t.end_s()), (10, 13));
        let busy: Vec<f64> = (10..13).map(|s| t.get(s).unwrap().busy_ms).collect();
        assert_eq!(busy, [400.0, 1000.0, 200.0]);
        let end = t.get(12).unwrap();
        assert_eq!((end.done, end.ok, end.non200), (1, 0, 1));
        assert_eq!(t.get(10).unwrap().started, 1);
        assert_eq!(t.get(11).unwrap().dropped, 2);
        assert_eq!(t.ok_and_drops(11_000, 11_100), (0, 2));
        t.record_request(11_900, 12_050, 150.0, 200, true);
        assert_eq!(t.ok_and_drops(12_000, 13_000), (1, 0));
        assert_eq!(t.get(11).unwrap().started, 1);
    }

    #[test]
    fn descending_seconds_grow_linearly_and_trim_exactly() {
        let mut t = Timeline::default();
        for s in (1000..21_000).rev() {
            t.get_mut(s).done += 1;
            t.fine_mut(s * 1000).0 += 1;
        }
        // geometric growth: within 2x of the span, and trim leaves exactly the touched span
        assert!(t.secs.len() < 2 * 20_000 + 2, "{}", t.secs.len());
        t.trim();
        assert_eq!((t.base_s, t.secs.len()), (1000, 20_000));
        assert_eq!((t.fine_base, t.fine.len()), (10_000, 19_999 * 10 + 1));
        assert!(t.secs.iter().all(|s| s.done == 1));
        assert_eq!(t.ok_and_drops(1_000_000, 21_000_000), (20_000, 0));
    }

    #[test]
    fn descending_rows_cost_linear_time() {
        // 200k seconds in descending order: inserting at the front one at a time moved 2e10
        // seconds (and 2e12 100 ms buckets)
        let t0 = std::time::Instant::now();
        let mut t = Timeline::default();
        for s in (0..200_000).rev() {
            t.get_mut(s).done += 1;
            t.fine_mut(s * 1000).0 += 1;
        }
        t.trim();
        assert_eq!((t.secs.len(), t.fine.len()), (200_000, 1_999_991));
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            t0.elapsed()
        );
    }
}
