//! The hypervisor's steal on each side of a comparison (each round's figure is in `Rounds`):
//! rounds over `rounds::STEAL_FLAG_PCT` are named, and a decided verdict whose sides differ in
//! steal beyond the rounds' noise is `inconclusive`, since the host's own drift then lands on
//! one side (rounds run in blocks, AAA then BBB, see it most). A change of the code moves the
//! steal too: the hypervisor steals from a vCPU while it is runnable, and at a fixed offered
//! load the app's busy time follows its CPU per request, so B's steal is compared with A's
//! scaled by the CPU signal's B/A (what A's host would have stolen from B's code); only the
//! excess is the host's drift. A +10 % regression on a host stealing 30 % would otherwise
//! raise B's steal by 3 points and be vetoed (`simulate::steal_veto`,
//! tests/offline/compare_power.rs). Pure.
use super::rounds::Rounds;
use super::stats::{mean, variance};
use super::verdict::Verdict;
use serde::Serialize;

/// Sides differ in steal when their means are this many points of a CPU's time apart ...
pub(crate) const STEAL_DIFF_PTS: f64 = 2.0;
/// ... and more than this many standard errors of the difference (the rounds' own noise).
pub(crate) const STEAL_DIFF_SE: f64 = 2.0;

/// Both sides' steal on the app's and the database's CPUs, in % of their time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StealSignal {
    pub a_mean_pct: Option<f64>,
    pub b_mean_pct: Option<f64>,
    /// B - A, in points.
    pub diff_pts: Option<f64>,
    /// The CPU signal's B/A that A's steal is scaled by before the sides are compared (1
    /// without one).
    pub cpu_scale: f64,
    /// B - A x `cpu_scale`, in points: the steal the code change does not explain.
    pub excess_pts: Option<f64>,
    /// The standard error of `diff_pts` from the rounds' spread.
    pub se_pts: Option<f64>,
    /// The sides differ beyond the noise (`STEAL_DIFF_PTS` and `STEAL_DIFF_SE`).
    pub differs: bool,
    /// Rounds of either side over `rounds::STEAL_FLAG_PCT`.
    pub flagged: Vec<String>,
    /// Rounds without a steal figure.
    pub unmeasured_rounds: usize,
}

/// The steal signal of two sides; `cpu_ratio`: the CPU signal's B/A when it has one.
pub(crate) fn steal_signal(a: &Rounds, b: &Rounds, cpu_ratio: Option<f64>) -> StealSignal {
    let known = |r: &Rounds| -> Vec<f64> { r.steal_pct.iter().flatten().copied().collect() };
    let (ka, kb) = (known(a), known(b));
    let unmeasured = a.steal_pct.len() + b.steal_pct.len() - ka.len() - kb.len();
    let side_mean = |v: &[f64]| (!v.is_empty()).then(|| mean(v));
    let (ma, mb) = (side_mean(&ka), side_mean(&kb));
    let scale = cpu_ratio
        .filter(|r| r.is_finite() && *r > 0.0)
        .unwrap_or(1.0);
    let excess = Excess::of(&ka, &kb, scale);
    StealSignal {
        a_mean_pct: ma,
        b_mean_pct: mb,
        diff_pts: ma.zip(mb).map(|(x, y)| y - x),
        se_pts: excess.as_ref().and_then(|e| e.se),
        cpu_scale: scale,
        excess_pts: excess.as_ref().map(|e| e.pts),
        differs: excess.is_some_and(|e| e.beyond_noise()),
        flagged: a
            .steal_flagged
            .iter()
            .chain(&b.steal_flagged)
            .cloned()
            .collect(),
        unmeasured_rounds: unmeasured,
    }
}

/// B's steal beyond A's scaled by `scale`, in points, and its standard error from the rounds'
/// spread (two rounds a side or more).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Excess {
    pub pts: f64,
    pub se: Option<f64>,
}

impl Excess {
    /// None when a side has no steal figure.
    pub(crate) fn of(a: &[f64], b: &[f64], scale: f64) -> Option<Excess> {
        if a.is_empty() || b.is_empty() {
            return None;
        }
        let se = (a.len() >= 2 && b.len() >= 2).then(|| {
            (variance(a) * scale * scale / a.len() as f64 + variance(b) / b.len() as f64).sqrt()
        });
        Some(Excess {
            pts: mean(b) - mean(a) * scale,
            se,
        })
    }

    /// At least `STEAL_DIFF_PTS` and more than `STEAL_DIFF_SE` standard errors.
    pub(crate) fn beyond_noise(&self) -> bool {
        self.se.is_some_and(|se| {
            self.pts.abs() >= STEAL_DIFF_PTS && self.pts.abs() > STEAL_DIFF_SE * se
        })
    }
}

impl StealSignal {
    /// One line for the text and the page.
    pub(crate) fn line(&self) -> String {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.1} %"));
        let mut l = format!(
            "steal on the app's and database's CPUs (hypervisor, mean over the steps): A {}, B {}",
            f(self.a_mean_pct),
            f(self.b_mean_pct)
        );
        if let (Some(d), Some(se)) = (self.diff_pts, self.se_pts) {
            let scaled = match (self.cpu_scale - 1.0).abs() < 0.005 {
                true => String::new(),
                false => format!(
                    ", {:+.1} beyond A's scaled by the CPU's B/A {:.3}",
                    self.excess_pts.unwrap_or(d),
                    self.cpu_scale
                ),
            };
            l.push_str(&format!(
                " ({d:+.1} points{scaled}, SE {se:.1}{})",
                if self.differs {
                    ": the sides differ"
                } else {
                    ""
                }
            ));
        }
        if !self.flagged.is_empty() {
            l.push_str(&format!(
                "; over {} %: {}",
                super::rounds::STEAL_FLAG_PCT,
                self.flagged.join(", ")
            ));
        }
        if self.unmeasured_rounds > 0 {
            l.push_str(&format!(
                "; {} round(s) have no figure",
                self.unmeasured_rounds
            ));
        }
        l
    }
}

/// A decided verdict whose sides differ in steal beyond the noise is `inconclusive`.
pub(crate) fn temper(verdict: Verdict, why: String, s: &StealSignal) -> (Verdict, String) {
    if !verdict.decided() || !s.differs {
        return (verdict, why);
    }
    let (a, b, d) = (
        s.a_mean_pct.unwrap_or(0.0),
        s.b_mean_pct.unwrap_or(0.0),
        s.diff_pts.unwrap_or(0.0),
    );
    (
        Verdict::Inconclusive,
        format!(
            "the hypervisor stole {a:.1} % of the app's and database's CPUs in A's rounds and {b:.1} % in B's ({d:+.1} points, beyond the rounds' spread and what B's CPU per request explains): the host drifted between the sides, so a change of the code cannot be told from the host's; run the sides interleaved, or again when steal is low (would have been {}: {why})",
            verdict.as_str()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(steal: &[Option<f64>]) -> Rounds {
        Rounds {
            runs: (1..=steal.len()).map(|i| format!("x/r{i}")).collect(),
            max_sustainable: vec![100; steal.len()],
            max_sustainable_from: vec![super::super::RateBasis::PassingStep; steal.len()],
            knee: vec![None; steal.len()],
            cpu_ms_per_ok: Vec::new(),
            cpu_median: None,
            cpu_spread_pct: None,
            steal_flagged: steal
                .iter()
                .enumerate()
                .filter(|(_, s)| s.is_some_and(|s| s > 10.0))
                .map(|(i, _)| format!("x/r{}", i + 1))
                .collect(),
            steal_pct: steal.to_vec(),
            latency_ms: Vec::new(),
            latency_median: None,
            injected: Vec::new(),
        }
    }

    #[test]
    fn sides_apart_in_steal_make_a_decided_verdict_inconclusive() {
        let a = side(&[Some(1.0), Some(1.5), Some(0.5)]);
        let b = side(&[Some(12.0), Some(9.0), Some(14.0)]);
        let s = steal_signal(&a, &b, None);
        assert!(s.differs, "{s:?}");
        assert_eq!(s.flagged, ["x/r1", "x/r3"]);
        let (v, why) = temper(Verdict::Regressed, "cpu +12 %".into(), &s);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(
            why.contains("1.0 % of the app's and database's CPUs in A's rounds and 11.7 % in B's"),
            "{why}"
        );
        assert!(
            why.ends_with("(would have been regressed: cpu +12 %)"),
            "{why}"
        );
        assert_eq!(
            temper(Verdict::Same, "x".into(), &s).0,
            Verdict::Inconclusive
        );
        assert!(s.line().contains("over 10 %: x/r1, x/r3"), "{}", s.line());
    }

    #[test]
    fn steal_within_the_noise_or_unknown_changes_nothing() {
        // this host's clean rounds: 0.3-3.8 % of each CPU
        let a = side(&[Some(1.0), Some(1.6), Some(2.5)]);
        let b = side(&[Some(3.8), Some(1.5), Some(2.7)]);
        let s = steal_signal(&a, &b, None);
        assert!(!s.differs, "{s:?}");
        assert_eq!(
            temper(Verdict::Regressed, "x".into(), &s).0,
            Verdict::Regressed
        );
        // 3 points apart but spread wide: within the noise
        let b = side(&[Some(0.5), Some(9.0), Some(3.5)]);
        assert!(!steal_signal(&a, &b, None).differs);
        let none = steal_signal(&side(&[None, None]), &side(&[None, Some(20.0)]), None);
        assert!(!none.differs);
        assert_eq!(none.unmeasured_rounds, 3);
    }

    /// A code change that raises the app's CPU per request by 10 % raises its busy time and so
    /// the steal it is exposed to: on a host stealing 30 %, B reads 33 %. Scaled by the CPU's
    /// B/A that is no drift; 5 points more is.
    #[test]
    fn steal_that_follows_the_cpu_change_is_not_drift() {
        let a = side(&[Some(29.5), Some(30.0), Some(30.5)]);
        let b = side(&[Some(32.5), Some(33.0), Some(33.5)]);
        assert!(
            steal_signal(&a, &b, None).differs,
            "unscaled, the veto fires"
        );
        let s = steal_signal(&a, &b, Some(1.10));
        assert!(!s.differs, "{s:?}");
        assert!(s.excess_pts.unwrap().abs() < 0.01, "{s:?}");
        assert!(
            s.line()
                .contains("beyond A's scaled by the CPU's B/A 1.100"),
            "{}",
            s.line()
        );
        let drifted = side(&[Some(37.5), Some(38.0), Some(38.5)]);
        assert!(steal_signal(&a, &drifted, Some(1.10)).differs);
    }
}
