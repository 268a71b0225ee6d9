//! The verdict of `compare` from the rounds' spread: the CPU signal (app CPU per ok request at
//! the common step), the capacity signal (max sustainable rates) and how they combine
//! (the rule is written out in the module doc of `compare`). Pure.
use super::rounds::{Rounds, median};
use serde::Serialize;

/// A CPU rise counts only beyond `SPREAD_K` x the pooled spread of the rounds ...
pub const SPREAD_K: f64 = 1.5;
/// ... and beyond this floor, in %.
pub const FLOOR_PCT: f64 = 8.0;
/// Rounds needed on each side before any verdict but `inconclusive`.
pub const MIN_ROUNDS: usize = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Same,
    Regressed,
    Improved,
    Inconclusive,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// What one signal says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Signal {
    /// B is worse: more CPU per request, or a lower max sustainable rate.
    Worse,
    /// B is better.
    Better,
    /// Within the spread.
    Same,
    /// Beyond the threshold, but the rounds' ranges overlap.
    Unclear,
    /// Not measurable (no common step with CPU samples, too few rounds).
    Missing,
}

/// App CPU per ok request at the common step, both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuSignal {
    /// The common step (its target, in `unit`).
    pub step: Option<u32>,
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// (B - A) / A, in %.
    pub delta_pct: Option<f64>,
    /// Root mean square of the two sides' `(max - min) / median`, in %.
    pub pooled_spread_pct: Option<f64>,
    /// max(SPREAD_K x pooled spread, FLOOR_PCT).
    pub threshold_pct: Option<f64>,
    /// The rounds' ranges [min, max] of the two sides overlap.
    pub ranges_overlap: Option<bool>,
    pub says: Signal,
}

/// The max sustainable rates of both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacitySignal {
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// Every B round below (above) every A round: worse (better); else same.
    pub says: Signal,
}

fn range(v: &[f64]) -> (f64, f64) {
    (
        v.iter().copied().fold(f64::MAX, f64::min),
        v.iter().copied().fold(f64::MIN, f64::max),
    )
}

/// The CPU signal from both sides' per-round CPU ms per ok request at `step`.
pub fn cpu_signal(step: Option<u32>, a: &Rounds, b: &Rounds) -> CpuSignal {
    let (ca, cb) = (&a.cpu_ms_per_ok, &b.cpu_ms_per_ok);
    let mut s = CpuSignal {
        step,
        a_median: a.cpu_median,
        b_median: b.cpu_median,
        delta_pct: None,
        pooled_spread_pct: None,
        threshold_pct: None,
        ranges_overlap: None,
        says: Signal::Missing,
    };
    let (Some(ma), Some(mb), Some(sa), Some(sb)) = (
        a.cpu_median,
        b.cpu_median,
        a.cpu_spread_pct,
        b.cpu_spread_pct,
    ) else {
        return s;
    };
    if ca.len() < MIN_ROUNDS || cb.len() < MIN_ROUNDS {
        return s;
    }
    let delta = (mb - ma) / ma * 100.0;
    let pooled = ((sa * sa + sb * sb) / 2.0).sqrt();
    let threshold = (SPREAD_K * pooled).max(FLOOR_PCT);
    let ((a_lo, a_hi), (b_lo, b_hi)) = (range(ca), range(cb));
    let overlap = b_lo <= a_hi && a_lo <= b_hi;
    s.says = if delta.abs() <= threshold {
        Signal::Same
    } else if overlap {
        Signal::Unclear
    } else if delta > 0.0 {
        Signal::Worse
    } else {
        Signal::Better
    };
    s.delta_pct = Some(delta);
    s.pooled_spread_pct = Some(pooled);
    s.threshold_pct = Some(threshold);
    s.ranges_overlap = Some(overlap);
    s
}

/// The capacity signal from both sides' max sustainable rates.
pub fn capacity_signal(a: &Rounds, b: &Rounds) -> CapacitySignal {
    let f = |r: &Rounds| -> Vec<f64> { r.max_sustainable.iter().map(|v| *v as f64).collect() };
    let (ra, rb) = (f(a), f(b));
    let says = if ra.len() < MIN_ROUNDS || rb.len() < MIN_ROUNDS {
        Signal::Missing
    } else {
        let ((a_lo, a_hi), (b_lo, b_hi)) = (range(&ra), range(&rb));
        if b_hi < a_lo {
            Signal::Worse
        } else if b_lo > a_hi {
            Signal::Better
        } else {
            Signal::Same
        }
    };
    CapacitySignal {
        a_median: median(&ra),
        b_median: median(&rb),
        says,
    }
}

/// The verdict and why, from the round counts and the two signals.
pub fn decide(rounds: (usize, usize), cpu: &CpuSignal, cap: &CapacitySignal) -> (Verdict, String) {
    use Signal::*;
    let (na, nb) = rounds;
    if na < MIN_ROUNDS || nb < MIN_ROUNDS {
        return (
            Verdict::Inconclusive,
            format!(
                "{na} round(s) for A, {nb} for B: the verdict needs the spread of at least \
                 {MIN_ROUNDS} rounds a side (`perflab run EXP --rounds 3`)"
            ),
        );
    }
    let cpu_txt = match (cpu.delta_pct, cpu.threshold_pct) {
        (Some(d), Some(t)) => format!("CPU per ok request {d:+.1} % (threshold {t:.1} %)"),
        _ => "no CPU per ok request at a common step".to_string(),
    };
    let cap_txt = match (cap.a_median, cap.b_median) {
        (Some(a), Some(b)) => format!("max sustainable median {a:.0} -> {b:.0}"),
        _ => "no max sustainable rates".to_string(),
    };
    let (v, how) = match (cpu.says, cap.says) {
        (Worse, Better) | (Better, Worse) => (Verdict::Inconclusive, "the signals disagree"),
        (Worse, _) => (Verdict::Regressed, "B spends more CPU per request"),
        (Better, _) => (Verdict::Improved, "B spends less CPU per request"),
        (Same, Same | Missing | Unclear) => (Verdict::Same, "within the rounds' spread"),
        (Same, _) => (
            Verdict::Inconclusive,
            "the max sustainable rate moved but the CPU per request did not (host noise, or a \
             change that is not CPU: look at the steps)",
        ),
        (Unclear, _) => (
            Verdict::Inconclusive,
            "the CPU change is beyond the threshold but the rounds' ranges overlap: run more rounds",
        ),
        (Missing, _) => (
            Verdict::Inconclusive,
            "without CPU per request the knee alone is too coarse a signal",
        ),
    };
    (v, format!("{how}: {cpu_txt}; {cap_txt}"))
}

#[cfg(test)]
mod tests {
    use super::super::rounds::spread_pct;
    use super::*;

    fn side(rates: &[u32], cpu: &[f64]) -> Rounds {
        Rounds {
            runs: (1..=rates.len()).map(|i| format!("x/r{i}")).collect(),
            max_sustainable: rates.to_vec(),
            max_sustainable_from: vec![super::super::RateBasis::PassingStep; rates.len()],
            knee: rates.iter().map(|_| None).collect(),
            cpu_ms_per_ok: cpu.to_vec(),
            cpu_median: median(cpu),
            cpu_spread_pct: spread_pct(cpu),
            injected: Vec::new(),
        }
    }

    fn verdict(a: &Rounds, b: &Rounds) -> (Verdict, CpuSignal) {
        let cpu = cpu_signal(Some(150), a, b);
        let cap = capacity_signal(a, b);
        let (v, _) = decide((a.runs.len(), b.runs.len()), &cpu, &cap);
        (v, cpu)
    }

    #[test]
    fn more_cpu_with_ranges_apart_is_a_regression() {
        let a = side(&[175, 175, 150], &[4.0, 4.1, 3.95]);
        let b = side(&[150, 150, 150], &[5.1, 5.2, 5.0]);
        let (v, cpu) = verdict(&a, &b);
        assert_eq!(v, Verdict::Regressed);
        assert_eq!(cpu.says, Signal::Worse);
        assert!((cpu.delta_pct.unwrap() - 27.5).abs() < 0.01, "{cpu:?}");
        // and the other way round
        assert_eq!(verdict(&b, &a).0, Verdict::Improved);
    }

    #[test]
    fn a_rise_within_the_floor_or_the_spread_is_the_same() {
        let a = side(&[175, 175, 175], &[4.0, 4.05, 4.1]);
        let b = side(&[175, 175, 150], &[4.2, 4.25, 4.3]); // +4.9 %: under the floor
        assert_eq!(verdict(&a, &b).0, Verdict::Same);
        // +20 %, but the rounds spread by 30 %: within 1.5 x the pooled spread
        let a = side(&[175, 175, 175], &[3.5, 4.0, 4.7]);
        let b = side(&[175, 175, 175], &[4.3, 4.8, 5.7]);
        let (v, cpu) = verdict(&a, &b);
        assert_eq!((v, cpu.says), (Verdict::Same, Signal::Same), "{cpu:?}");
    }

    #[test]
    fn overlapping_ranges_beyond_the_threshold_are_inconclusive() {
        // +18.5 %, threshold 17.9 % (spreads 2.5 % and 16.7 %), one B round below A's highest
        let a = side(&[175, 175, 175], &[4.0, 4.05, 4.1]);
        let b = side(&[175, 175, 175], &[4.05, 4.8, 4.85]);
        let (v, cpu) = verdict(&a, &b);
        assert_eq!(cpu.says, Signal::Unclear, "{cpu:?}");
        assert_eq!(v, Verdict::Inconclusive);
    }

    #[test]
    fn one_round_a_side_is_inconclusive() {
        let a = side(&[175], &[4.0]);
        let b = side(&[100], &[8.0]);
        let (v, cpu) = verdict(&a, &b);
        assert_eq!(v, Verdict::Inconclusive);
        assert_eq!(cpu.says, Signal::Missing);
    }

    #[test]
    fn signals_that_disagree_are_inconclusive() {
        // more CPU per request, yet every B round sustains more
        let a = side(&[150, 150, 150], &[4.0, 4.1, 4.0]);
        let b = side(&[200, 200, 175], &[5.0, 5.1, 5.2]);
        assert_eq!(verdict(&a, &b).0, Verdict::Inconclusive);
        // same CPU, every B round lower: host noise or not CPU
        let b = side(&[125, 125, 100], &[4.0, 4.05, 4.1]);
        assert_eq!(verdict(&a, &b).0, Verdict::Inconclusive);
    }

    #[test]
    fn without_cpu_the_knee_alone_decides_nothing() {
        let a = side(&[175, 175, 175], &[]);
        let b = side(&[100, 100, 100], &[]);
        let (v, cpu) = verdict(&a, &b);
        assert_eq!(cpu.says, Signal::Missing);
        assert_eq!(v, Verdict::Inconclusive);
    }
}
