//! The per-second (and per-100 ms) timeline of a run: arrays indexed by time that grow at
//! either end in amortized constant time, so rows in any order cost linear time.
use super::hist::SecondHist;

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
/// While it is being filled, earlier seconds may be added: the arrays then grow at the front
/// by at least their length (unused `pad` slots), and `trim` drops the slots never touched.
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

/// Index of `key` in `v` whose index 0 is `*base`, growing `v` at either end (geometrically at
/// the front, so keys arriving in descending order cost linear time, not quadratic).
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
    if key < *base {
        let need = (*base - key) as usize;
        let grow = need.max(v.len());
        v.splice(0..0, std::iter::repeat_with(fill).take(grow));
        *base -= grow as i64;
        *pad += grow;
        let i = grow - need;
        *pad = (*pad).min(i);
        return i;
    }
    let i = (key - *base) as usize;
    if i >= v.len() {
        v.resize_with(i + 1, fill);
    }
    *pad = (*pad).min(i);
    i
}

impl Timeline {
    pub fn get_mut(&mut self, sec: i64) -> &mut SecondAgg {
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
    pub fn fine_mut(&mut self, t_ms: i64) -> &mut (u32, u32) {
        let d = t_ms.div_euclid(100);
        let i = slot(
            &mut self.fine,
            &mut self.fine_base,
            &mut self.pad_fine,
            d,
            Default::default,
        );
        &mut self.fine[i]
    }
    /// Drop the front slots that growth added but no second touched; call when filling is done.
    pub fn trim(&mut self) {
        self.secs.drain(..self.pad_secs);
        self.base_s += self.pad_secs as i64;
        self.pad_secs = 0;
        self.fine.drain(..self.pad_fine);
        self.fine_base += self.pad_fine as i64;
        self.pad_fine = 0;
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
    fn descending_seconds_grow_linearly_and_trim_exactly() {
        let mut t = Timeline::default();
        for s in (1000..21000).rev() {
            t.get_mut(s).done += 1;
            t.fine_mut(s * 1000).0 += 1;
        }
        // geometric growth: capacity stays within 2x, then trim leaves exactly the touched span
        assert!(t.secs.len() < 2 * 20_000 + 2, "{}", t.secs.len());
        t.trim();
        assert_eq!((t.base_s, t.secs.len()), (1000, 20_000));
        assert_eq!(t.fine_base, 10_000);
        assert_eq!(t.fine.len(), (20_000 - 1) * 10 + 1);
        assert!(t.secs.iter().all(|s| s.done == 1));
        assert_eq!(t.ok_and_drops(1_000_000, 21_000_000), (20_000, 0));
    }
}
