//! Which rows of a k6 CSV are kept: timestamps a real run has (years 2000 to 2100) within
//! [`MAX_SPAN_MS`] of the run's anchor, the median time of its first [`ANCHOR_ROWS`] rows. A
//! stray row (pasted from another run, a clock jump), even the very first one, is skipped and
//! counted instead of stretching the timeline over years.
use super::data::{MAX_SPAN_MS, PLAUSIBLE_MS};

/// Rows held back (at most 64 KiB each) until the anchor is chosen from their median time.
pub(super) const ANCHOR_ROWS: usize = 64;

/// A row held back until the anchor is known.
pub(super) struct Pending {
    pub line: Vec<u8>,
    pub line_no: u64,
    pub ts_ms: i64,
}

/// The anchor, the rows waiting for it, and what was skipped.
#[derive(Default)]
pub(super) struct Window {
    anchor_ms: Option<i64>,
    pending: Vec<Pending>,
    pub skipped: u64,
    pub first_skipped_line: Option<u64>,
}

/// What to do with a row.
#[derive(Debug, PartialEq)]
pub(super) enum Admit {
    Keep,
    Skip,
    /// Held back: [`Window::settle`] returns it once the anchor is chosen.
    Wait,
}

impl Window {
    /// Keep, skip or hold back the row on `line_no` at `ts_ms`.
    pub(crate) fn admit(&mut self, ts_ms: i64, line_no: u64, line: &[u8]) -> Admit {
        if !PLAUSIBLE_MS.contains(&ts_ms) {
            self.skip(line_no);
            return Admit::Skip;
        }
        match self.anchor_ms {
            Some(a) if ts_ms.abs_diff(a) <= MAX_SPAN_MS as u64 => Admit::Keep,
            Some(_) => {
                self.skip(line_no);
                Admit::Skip
            }
            None => {
                self.pending.push(Pending {
                    line: line.to_vec(),
                    line_no,
                    ts_ms,
                });
                Admit::Wait
            }
        }
    }

    /// Enough rows held back to choose the anchor?
    pub(crate) fn ready(&self) -> bool {
        self.anchor_ms.is_none() && self.pending.len() >= ANCHOR_ROWS
    }

    /// Choose the anchor (the held-back rows' median time) if not done yet, and return the
    /// held-back rows within reach of it, in line order; the others are counted as skipped.
    pub(crate) fn settle(&mut self) -> Vec<Pending> {
        let pending = std::mem::take(&mut self.pending);
        if self.anchor_ms.is_some() || pending.is_empty() {
            return pending;
        }
        let mut times: Vec<i64> = pending.iter().map(|p| p.ts_ms).collect();
        times.sort_unstable();
        let anchor = times[times.len() / 2];
        self.anchor_ms = Some(anchor);
        let (keep, far): (Vec<Pending>, Vec<Pending>) = pending
            .into_iter()
            .partition(|p| p.ts_ms.abs_diff(anchor) <= MAX_SPAN_MS as u64);
        far.iter().for_each(|p| self.skip(p.line_no));
        keep
    }

    fn skip(&mut self, line_no: u64) {
        self.skipped += 1;
        self.first_skipped_line = Some(self.first_skipped_line.map_or(line_no, |l| l.min(line_no)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: i64 = 1_700_000_000_000;

    #[test]
    fn a_stray_first_row_does_not_become_the_anchor() {
        let mut w = Window::default();
        // line 2 is from a run a year earlier, then the real rows
        assert_eq!(w.admit(T - 365 * 86_400_000, 2, b"x"), Admit::Wait);
        for i in 0..ANCHOR_ROWS as u64 - 1 {
            assert_eq!(w.admit(T + i as i64 * 100, 3 + i, b"r"), Admit::Wait);
        }
        assert!(w.ready());
        let kept = w.settle();
        assert_eq!(kept.len(), ANCHOR_ROWS - 1);
        assert_eq!(kept[0].line_no, 3);
        assert_eq!((w.skipped, w.first_skipped_line), (1, Some(2)));
        assert_eq!(w.admit(T + 3_600_000, 99, b"r"), Admit::Keep);
        assert_eq!(w.admit(T + 2 * MAX_SPAN_MS, 100, b"r"), Admit::Skip);
        assert_eq!(w.admit(1000, 101, b"r"), Admit::Skip);
        assert_eq!((w.skipped, w.first_skipped_line), (3, Some(2)));
    }
}
