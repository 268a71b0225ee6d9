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
#[derive(Clone, Default)]
pub struct Timeline {
    pub base_s: i64,
    pub secs: Vec<SecondAgg>,
    /// Successful completions and drops per 100 ms (step windows rarely align with seconds).
    pub fine_base: i64,
    pub fine: Vec<(u32, u32)>,
}

impl Timeline {
    pub fn get_mut(&mut self, sec: i64) -> &mut SecondAgg {
        if self.secs.is_empty() {
            self.base_s = sec;
        }
        if sec < self.base_s {
            let extra = (self.base_s - sec) as usize;
            self.secs
                .splice(0..0, std::iter::repeat_with(SecondAgg::default).take(extra));
            self.base_s = sec;
        }
        let i = (sec - self.base_s) as usize;
        if i >= self.secs.len() {
            self.secs.resize_with(i + 1, SecondAgg::default);
        }
        &mut self.secs[i]
    }
    /// The 100 ms bucket holding unix ms `t`.
    pub fn fine_mut(&mut self, t_ms: i64) -> &mut (u32, u32) {
        let d = t_ms.div_euclid(100);
        if self.fine.is_empty() {
            self.fine_base = d;
        }
        if d < self.fine_base {
            let extra = (self.fine_base - d) as usize;
            self.fine.splice(0..0, std::iter::repeat_n((0, 0), extra));
            self.fine_base = d;
        }
        let i = (d - self.fine_base) as usize;
        if i >= self.fine.len() {
            self.fine.resize(i + 1, (0, 0));
        }
        &mut self.fine[i]
    }
    /// (successful completions, drops) in [from_ms, to_ms), to 100 ms.
    pub fn ok_and_drops(&self, from_ms: i64, to_ms: i64) -> (u64, u64) {
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
    pub fn record_request(
        &mut self,
        start_ms: i64,
        end_ms: i64,
        dur_ms: f64,
        status: u16,
        ok: bool,
    ) {
        let s = self.get_mut(end_ms.div_euclid(1000));
        s.done += 1;
        if ok {
            s.ok += 1;
        }
        if status != 200 {
            s.non200 += 1;
        }
        s.hist
            .get_or_insert_with(Default::default)
            .record_ms(dur_ms);
        if ok {
            self.fine_mut(end_ms).0 += 1;
        }
        self.get_mut(start_ms.div_euclid(1000)).started += 1;
        let mut t = start_ms;
        while t < end_ms {
            let sec_end = (t.div_euclid(1000) + 1) * 1000;
            let upto = sec_end.min(end_ms);
            self.get_mut(t.div_euclid(1000)).busy_ms += (upto - t) as f64;
            t = upto;
        }
    }
    /// Count `n` iterations k6 dropped at `t_ms`.
    pub fn record_drop(&mut self, t_ms: i64, n: u32) {
        self.get_mut(t_ms.div_euclid(1000)).dropped += n;
        self.fine_mut(t_ms).1 += n;
    }
    pub fn get(&self, sec: i64) -> Option<&SecondAgg> {
        if sec < self.base_s {
            return None;
        }
        self.secs.get((sec - self.base_s) as usize)
    }
    pub fn end_s(&self) -> i64 {
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
}
