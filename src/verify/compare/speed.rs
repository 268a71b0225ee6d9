//! The host's speed on each side of a comparison (`host::speed`, read before each round's first
//! load): a host that ran slower on B's rounds spends more CPU per request for the same code,
//! so a `regressed` (or, faster, an `improved`) that the host's own change explains is
//! `inconclusive`. Each round whose slower reading (before or after its loads) fell more than
//! `COMPUTE_DRIFT_PCT` below the fastest round's is named as run on a slowed host, and an
//! undecided verdict says so: the rounds' noise is then the host's. Pure.
use super::rounds::Run;
use super::rounds::median;
use super::verdict::Verdict;
use crate::host::speed::{COMPUTE_DRIFT_PCT, HostSpeed, SpeedReading, change_pct, moved};
use serde::Serialize;

/// Both sides' host speeds: the median over each side's rounds of the per-CPU median.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedSignal {
    pub a_compute_mops: Option<f64>,
    pub b_compute_mops: Option<f64>,
    pub a_memory_msteps: Option<f64>,
    pub b_memory_msteps: Option<f64>,
    /// B against A, in %.
    pub compute_change_pct: Option<f64>,
    pub memory_change_pct: Option<f64>,
    /// Rounds without a reading (recorded before perflab measured the host's speed).
    pub unmeasured_rounds: usize,
    /// Rounds of either side run on a slowed host: label and % below the fastest reading.
    pub slowed: Vec<(String, f64)>,
    /// The fastest round's compute reading (Mops/s), the reference of `slowed`.
    pub fastest_mops: Option<f64>,
}

/// A round's compute readings, before and after its loads.
fn readings(h: &HostSpeed) -> impl Iterator<Item = f64> + '_ {
    std::iter::once(&h.before)
        .chain(h.after.as_ref())
        .filter_map(SpeedReading::compute)
}

/// The rounds whose slower compute reading is more than `COMPUTE_DRIFT_PCT` below the fastest
/// reading of all rounds, with how far below, and that fastest reading.
fn slowed_rounds(runs: &[&Run]) -> (Vec<(String, f64)>, Option<f64>) {
    let fastest = runs
        .iter()
        .filter_map(|(_, _, m)| m.measurements.host_speed.as_ref())
        .flat_map(readings)
        .reduce(f64::max)
        .filter(|f| *f > 0.0);
    let Some(top) = fastest else {
        return (Vec::new(), None);
    };
    let slowed = runs
        .iter()
        .filter_map(|(l, _, m)| {
            let low = readings(m.measurements.host_speed.as_ref()?).reduce(f64::min)?;
            let below = (1.0 - low / top) * 100.0;
            (below > COMPUTE_DRIFT_PCT).then(|| (l.to_string(), below))
        })
        .collect();
    (slowed, fastest)
}

/// The speed signal of two sides.
pub(crate) fn speed_signal(a: &[Run], b: &[Run]) -> SpeedSignal {
    let side = |runs: &[Run], kernel: fn(&SpeedReading) -> Option<f64>| {
        let v: Vec<f64> = runs
            .iter()
            .filter_map(|(_, _, m)| kernel(&m.measurements.host_speed.as_ref()?.before))
            .collect();
        median(&v)
    };
    let (ac, bc) = (
        side(a, SpeedReading::compute),
        side(b, SpeedReading::compute),
    );
    let (am, bm) = (side(a, SpeedReading::memory), side(b, SpeedReading::memory));
    let all: Vec<&Run> = a.iter().chain(b).collect();
    let (slowed, fastest_mops) = slowed_rounds(&all);
    SpeedSignal {
        a_compute_mops: ac,
        b_compute_mops: bc,
        a_memory_msteps: am,
        b_memory_msteps: bm,
        compute_change_pct: change_pct(ac, bc),
        memory_change_pct: change_pct(am, bm),
        unmeasured_rounds: a
            .iter()
            .chain(b)
            .filter(|(_, _, m)| m.measurements.host_speed.is_none())
            .count(),
        slowed,
        fastest_mops,
    }
}

impl SpeedSignal {
    /// One line for the text and the page.
    pub(crate) fn line(&self) -> String {
        let f = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
        let mut l = format!(
            "host speed (probe before each round's loads): compute A {} B {} Mops/s, memory A {} B {} M loads/s",
            f(self.a_compute_mops, 0),
            f(self.b_compute_mops, 0),
            f(self.a_memory_msteps, 1),
            f(self.b_memory_msteps, 1)
        );
        if let (Some(c), Some(m)) = (self.compute_change_pct, self.memory_change_pct) {
            l.push_str(&format!(" ({c:+.1} %, {m:+.1} %)"));
        }
        if self.unmeasured_rounds > 0 {
            l.push_str(&format!(
                "; {} round(s) have no reading",
                self.unmeasured_rounds
            ));
        }
        if let Some(s) = self.slowed_line() {
            l.push_str("; ");
            l.push_str(&s);
        }
        l
    }

    /// The rounds run on a slowed host, in a clause (None when there are none).
    pub(crate) fn slowed_line(&self) -> Option<String> {
        let top = self.fastest_mops.filter(|_| !self.slowed.is_empty())?;
        let list: Vec<String> = self
            .slowed
            .iter()
            .map(|(l, p)| format!("{l} -{p:.0} %"))
            .collect();
        Some(format!(
            "{} round(s) ran on a slowed host (compute probe over {COMPUTE_DRIFT_PCT:.0} % below the fastest round's {top:.0} Mops/s): {}",
            self.slowed.len(),
            list.join(", ")
        ))
    }
}

/// An undecided verdict whose rounds ran partly on a slowed host says so: the rounds' spread
/// is then the host's, and a quiet host decides sooner. A decided verdict is left as it is
/// (the paired test cancels drift a pair shares; `temper` catches drift between the sides).
pub(crate) fn explain_noise(verdict: Verdict, why: String, s: &SpeedSignal) -> String {
    match (verdict.decided(), s.slowed_line()) {
        (false, Some(line)) => format!(
            "{why}; {line}: the noise may be the host's, so run the rounds again on a quiet host (`perflab noise-check` reads it)"
        ),
        _ => why,
    }
}

/// The verdict once the hosts' speeds are known: a regression on a host that ran slower on
/// B's rounds (its compute kernel more than `host::speed::COMPUTE_DRIFT_PCT`, 15 %;
/// an improvement on one that ran that much faster) is `inconclusive`, since the host alone
/// moves CPU per request that way.
pub(crate) fn temper(verdict: Verdict, why: String, s: &SpeedSignal) -> (Verdict, String) {
    let sign = match verdict {
        Verdict::Regressed => -1.0,
        Verdict::Improved => 1.0,
        _ => return (verdict, why),
    };
    let Some(moved) = moved(s.compute_change_pct, Some(sign)) else {
        return (verdict, why);
    };
    (
        Verdict::Inconclusive,
        format!(
            "B's host ran {} than A's ({}, host speed probe): that alone moves CPU per request this way, so the runtime cannot be told from the host; run both sides on the host in one state (would have been {}: {why})",
            if sign < 0.0 { "slower" } else { "faster" },
            moved,
            verdict.as_str()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(compute: f64, memory: f64) -> SpeedSignal {
        SpeedSignal {
            a_compute_mops: Some(400.0),
            b_compute_mops: Some(400.0 * (1.0 + compute / 100.0)),
            a_memory_msteps: Some(10.0),
            b_memory_msteps: Some(10.0 * (1.0 + memory / 100.0)),
            compute_change_pct: Some(compute),
            memory_change_pct: Some(memory),
            unmeasured_rounds: 0,
            slowed: Vec::new(),
            fastest_mops: None,
        }
    }

    #[test]
    fn a_regression_on_a_slower_host_is_inconclusive() {
        let (v, why) = temper(Verdict::Regressed, "cpu +30 %".into(), &signal(-20.0, -2.0));
        assert_eq!(v, Verdict::Inconclusive);
        assert!(
            why.contains("slower than A's (compute -20 %, host"),
            "{why}"
        );
        assert!(
            why.contains("would have been regressed: cpu +30 %"),
            "{why}"
        );
    }

    #[test]
    fn a_steady_or_faster_host_keeps_the_regression() {
        // The memory kernel is shown, never judged: it is too noisy on a VM.
        for s in [signal(-12.0, 4.0), signal(30.0, 25.0), signal(-2.0, -45.0)] {
            let (v, why) = temper(Verdict::Regressed, "cpu +30 %".into(), &s);
            assert_eq!((v, why.as_str()), (Verdict::Regressed, "cpu +30 %"));
        }
        let (v, _) = temper(Verdict::Improved, "cpu -30 %".into(), &signal(18.0, 0.0));
        assert_eq!(v, Verdict::Inconclusive);
        let (v, _) = temper(Verdict::Same, "same".into(), &signal(-50.0, -50.0));
        assert_eq!(v, Verdict::Same);
    }

    #[test]
    fn without_readings_nothing_changes() {
        let s = SpeedSignal {
            a_compute_mops: None,
            b_compute_mops: Some(1.0),
            a_memory_msteps: None,
            b_memory_msteps: Some(1.0),
            compute_change_pct: None,
            memory_change_pct: None,
            unmeasured_rounds: 3,
            slowed: Vec::new(),
            fastest_mops: None,
        };
        assert_eq!(
            temper(Verdict::Regressed, "x".into(), &s).0,
            Verdict::Regressed
        );
        assert!(
            s.line().ends_with("; 3 round(s) have no reading"),
            "{}",
            s.line()
        );
    }
}
