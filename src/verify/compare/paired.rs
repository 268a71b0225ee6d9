//! Paired rounds for `compare`: which rounds of A and B were run as pairs of one comparison
//! batch (`measurements.compare`: the batch, the side and the pair number of each round), and
//! the paired Student t test on the per-pair differences of the logs with its sequential
//! boundary (a per-look level calibrated by simulation as the unpaired one is, with n - 1
//! degrees of freedom at n pairs). Slow drift of the host lands on both rounds of a pair, so
//! the differences within pairs are quieter than the rounds are (docs/regression.md). Rounds
//! that cannot be paired fall back to the unpaired test, and say why. Pure.
use super::sequential::{
    Boundary, Call, Crit, FIRST_LOOK, LogTest, MAX_PLANNED_ROUNDS, Plan, Settings, calibrated,
    call, first_deciding,
};
use super::stats::{mean, variance};
use crate::rundir::batch::{CompareTag, Design};
use std::collections::BTreeMap;

/// How a comparison's rounds are tested.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pairing {
    /// Every round of A and of B in one pair of one batch: (index in A, index in B) of each
    /// pair, by pair number; and for each pair how it was made (whole rounds where its two
    /// rounds' designs differ: a side that caught up).
    Paired(Vec<(usize, usize)>, Vec<Design>),
    /// The unpaired test, and why the rounds could not be paired.
    Unpaired(String),
}

impl Pairing {
    /// "paired over 3 pairs" or "unpaired: why".
    pub(crate) fn text(&self) -> String {
        match self {
            Pairing::Paired(p, d) if d.iter().all(|x| *x == Design::Rounds) => {
                format!("paired over {} pairs", p.len())
            }
            Pairing::Paired(p, d) if d.iter().all(|x| *x == d[0]) => {
                format!("paired over {} pairs, each of {}", p.len(), d[0].describe())
            }
            Pairing::Paired(p, d) => {
                let parts: Vec<String> = [Design::Together, Design::Steps, Design::Rounds]
                    .into_iter()
                    .map(|k| (k, d.iter().filter(|x| **x == k).count()))
                    .filter(|(_, n)| *n > 0)
                    .map(|(k, n)| format!("{n} of {}", k.describe()))
                    .collect();
                format!("paired over {} pairs ({})", p.len(), parts.join(", "))
            }
            Pairing::Unpaired(why) => format!("unpaired: {why}"),
        }
    }

    /// The test on per-round logs `a` and `b` (None below 2 rounds, or pairs, a side): paired
    /// on the differences within pairs, or unpaired with the pooled SD.
    pub(crate) fn test(&self, plan: &Plan, a: &[f64], b: &[f64], sd_floor: f64) -> Option<LogTest> {
        match self {
            Pairing::Unpaired(_) => plan.test(a, b, sd_floor),
            Pairing::Paired(pairs, _) => {
                let (pa, pb): (Vec<f64>, Vec<f64>) =
                    pairs.iter().map(|(i, j)| (a[*i], b[*j])).unzip();
                PairedPlan::new(&plan.settings, pairs.len()).test(&pa, &pb, sd_floor)
            }
        }
    }
}

/// Pair the rounds of A and B by their comparison tags (`None`: a round without one). Paired
/// only when every round of both sides carries a tag of one batch, A's rounds all of one side
/// and B's of the other, and each pair number appears once on each side.
pub(crate) fn pairing(a: &[Option<&CompareTag>], b: &[Option<&CompareTag>]) -> Pairing {
    let untagged = a.iter().chain(b).filter(|t| t.is_none()).count();
    if untagged > 0 {
        return Pairing::Unpaired(format!(
            "{untagged} round(s) without a pair number, not run by an interleaved `perflab compare EXP --a ... --b ...`"
        ));
    }
    let a: Vec<&CompareTag> = a.iter().flatten().copied().collect();
    let b: Vec<&CompareTag> = b.iter().flatten().copied().collect();
    let batches: std::collections::BTreeSet<&str> =
        a.iter().chain(&b).map(|t| t.batch.as_str()).collect();
    if batches.len() > 1 {
        return Pairing::Unpaired(format!(
            "rounds from {} comparison batches ({}): pairs are only matched within one",
            batches.len(),
            batches.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let side_of = |v: &[&CompareTag]| {
        let s = v.first().map(|t| t.side);
        v.iter().all(|t| Some(t.side) == s).then_some(s).flatten()
    };
    match (side_of(&a), side_of(&b)) {
        (Some(x), Some(y)) if x != y => {}
        _ => {
            return Pairing::Unpaired(
                "a side mixes the batch's A and B rounds, or both sides are one side of the batch"
                    .into(),
            );
        }
    }
    let numbered = |v: &[&CompareTag]| -> Option<BTreeMap<u32, usize>> {
        let m: BTreeMap<u32, usize> = v.iter().enumerate().map(|(i, t)| (t.pair, i)).collect();
        (m.len() == v.len()).then_some(m)
    };
    let (Some(na), Some(nb)) = (numbered(&a), numbered(&b)) else {
        return Pairing::Unpaired("a pair number appears twice on one side".into());
    };
    let lone: Vec<String> = na
        .keys()
        .filter(|p| !nb.contains_key(p))
        .map(|p| format!("A{p}"))
        .chain(
            nb.keys()
                .filter(|p| !na.contains_key(p))
                .map(|p| format!("B{p}")),
        )
        .collect();
    if !lone.is_empty() {
        return Pairing::Unpaired(format!(
            "round(s) {} without the other side's round of their pair",
            lone.join(", ")
        ));
    }
    let designs = na
        .iter()
        .map(|(p, i)| match (a[*i].design, b[nb[p]].design) {
            (x, y) if x == y => x,
            _ => Design::Rounds,
        })
        .collect();
    Pairing::Paired(na.iter().map(|(p, i)| (*i, nb[p])).collect(), designs)
}

/// Mean and sample SD of the differences `d` (b - a of the logs, one per pair).
pub(crate) fn mean_sd(d: &[f64]) -> (f64, f64) {
    (mean(d), variance(d).sqrt())
}

/// The paired test's boundary under a plan: α' for looks after every pair from 2 to the
/// planned pairs, the critical t precomputed by degrees of freedom (n - 1 at n pairs).
#[derive(Debug, Clone)]
pub struct PairedPlan {
    pub settings: Settings,
    pub planned_rounds: usize,
    pub nominal_alpha: f64,
    crit: Crit,
}

impl PairedPlan {
    /// The plan for `settings`, long enough for `n_max` pairs.
    pub fn new(settings: &Settings, n_max: usize) -> PairedPlan {
        let planned = settings.max_rounds.max(n_max).min(MAX_PLANNED_ROUNDS);
        let a = calibrated(true, settings.confidence, planned);
        PairedPlan {
            settings: *settings,
            planned_rounds: planned,
            nominal_alpha: a,
            crit: Crit::new(a, planned - 1),
        }
    }

    fn crit_at(&self, df: usize) -> f64 {
        self.crit.at(df)
    }

    /// The boundary at `n` pairs (at least `FIRST_LOOK`).
    pub fn boundary(&self, n: usize) -> Boundary {
        Boundary {
            planned_rounds: self.planned_rounds,
            looks: self.planned_rounds - FIRST_LOOK + 1,
            nominal_alpha: self.nominal_alpha,
            level: 1.0 - self.nominal_alpha,
            df: (n - 1) as f64,
            t_crit: self.crit_at(n - 1),
        }
    }

    /// Mean difference, SD of the differences (floored at sqrt(2) x `sd_floor`, the floor of
    /// a difference of two rounds) and the interval's half-width at this look.
    pub(crate) fn interval(&self, d: &[f64], sd_floor: f64) -> Option<(f64, f64, f64)> {
        if d.len() < FIRST_LOOK {
            return None;
        }
        let (m, sd) = mean_sd(d);
        let sd = sd.max(sd_floor * std::f64::consts::SQRT_2);
        let half = self.crit_at(d.len() - 1) * sd / (d.len() as f64).sqrt();
        Some((m, sd, half))
    }

    /// The call on the per-pair differences `d` (the simulations' fast path).
    pub(crate) fn call(&self, d: &[f64], sd_floor: f64) -> Option<Call> {
        let (m, _, half) = self.interval(d, sd_floor)?;
        Some(call(m, half, &self.settings))
    }

    /// The test on the logs of matched pairs (`a[i]` and `b[i]` one pair).
    pub(crate) fn test(&self, a: &[f64], b: &[f64], sd_floor: f64) -> Option<LogTest> {
        let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
        let (m, sd, half) = self.interval(&d, sd_floor)?;
        let c = call(m, half, &self.settings);
        Some(LogTest {
            n_a: d.len(),
            n_b: d.len(),
            ratio: m.exp(),
            low: (m - half).exp(),
            high: (m + half).exp(),
            sd_log_pct: sd * 100.0,
            pairs: Some(d.len()),
            boundary: self.boundary(d.len()),
            call: c,
            rounds_needed: (c == Call::Undecided)
                .then(|| self.rounds_needed(m, sd, d.len()))
                .flatten(),
        })
    }

    /// Pairs at which the interval would decide if the mean difference `m` and the SD `sd` of
    /// the differences stayed as they are (the half-width shrinks with the pairs: bisection).
    pub(crate) fn rounds_needed(&self, m: f64, sd: f64, n_now: usize) -> Option<usize> {
        let decides = |n: usize| {
            let half = self.crit_at(n - 1) * sd / (n as f64).sqrt();
            call(m, half, &self.settings) != Call::Undecided
        };
        first_deciding(n_now, decides)
    }
}

#[cfg(test)]
#[path = "paired_tests.rs"]
mod tests;
