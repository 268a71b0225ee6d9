//! Power measured on recorded pairs as they are: whole pairs drawn with replacement from a
//! batch's pairs (no smoothing), judged by the paired sequential test `compare` ships. The
//! held-out A/A batches' table in docs/regression.md comes from here
//! (`tests/offline/compare_heldout_power.rs`).
use super::paired::PairedPlan;
use super::sequential::Settings;
use super::simulate::{Tally, paired_sequential};
use super::stats::{Rng, mean};

/// `trials` sequential comparisons on whole pairs resampled from recorded ones, judged by the
/// paired test `compare` ships: each trial draws the plan's pairs' differences of logs (B - A)
/// with replacement from `diffs`, centred on 0 (recorded A/A pairs: their own mean is an
/// estimate of no change, not a change), B shifted by `effect_pct`.
pub fn pairs_resampled(
    diffs: &[f64],
    effect_pct: f64,
    settings: &Settings,
    (trials, seed): (usize, u64),
) -> Tally {
    let plan = PairedPlan::new(settings, settings.max_rounds);
    let (m, shift) = (mean(diffs), (1.0 + effect_pct / 100.0).ln());
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        trials,
        ..Tally::default()
    };
    for _ in 0..trials {
        let d: Vec<f64> = (0..plan.planned_rounds)
            .map(|_| {
                let i = ((rng.uniform() * diffs.len() as f64) as usize).min(diffs.len() - 1);
                diffs[i] - m + shift
            })
            .collect();
        let (c, n) = paired_sequential(&plan, &d);
        t.add(c, n);
    }
    t
}
