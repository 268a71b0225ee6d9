//! The candidate signals for the verdict and their round-to-round noise on recorded rounds of
//! one configuration, by which the primary signal was chosen (docs/regression.md): (a) app CPU
//! ms per ok request at the lowest step measured in every round, (b) the same combined (mean
//! of logs) over every step that passed below the knee in every round, (c) the max sustainable
//! rate (refined, else the last passing step: coarse). The verdict uses (b) where the rounds
//! share two or more passing steps, else (a) (`primary`). Pure.
use super::rounds::{
    RoundIn, common_step, cpu_at, cpu_over, cpu_steps, latency_rounds, latency_step,
    max_sustainable, passed_any, passing_steps, spread_pct,
};
use super::stats::sd_of_logs;
use crate::analyze::model::{Report, StepReport};
use serde::Serialize;

/// The candidates, in the order of `values`.
pub(crate) const CANDIDATES: [&str; 3] = [
    "(a) CPU ms/ok at the lowest common step",
    "(b) CPU ms/ok over the passing steps below the knee (mean of logs)",
    "(c) max sustainable rate",
];

/// Each candidate's value per round (None where a round has none; (c) counts a round with no
/// passing step as half the lowest step, as the capacity test does).
pub fn values(rounds: &[RoundIn]) -> [Vec<Option<f64>>; 3] {
    let step = common_step(rounds, &[]);
    let a = rounds
        .iter()
        .map(|(_, r)| step.and_then(|t| cpu_at(r, t)))
        .collect();
    let steps = passing_steps(rounds);
    let b = rounds
        .iter()
        .map(|(_, r)| {
            let logs: Vec<f64> = steps
                .iter()
                .filter_map(|t| cpu_at(r, *t))
                .map(f64::ln)
                .collect();
            (!steps.is_empty() && logs.len() == steps.len())
                .then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
        })
        .collect();
    let lowest = super::rounds::lowest_step(rounds) as f64;
    let c = rounds
        .iter()
        .map(|(_, r)| match max_sustainable(r).0 {
            0 => Some(lowest / 2.0),
            v => Some(v as f64),
        })
        .collect();
    [a, b, c]
}

/// The verdict's CPU signal per round of one batch taken as one side (`rounds::cpu_steps`):
/// (b) where the rounds share two or more passing steps, else (a).
pub fn primary(rounds: &[RoundIn]) -> Vec<Option<f64>> {
    let steps = cpu_steps(rounds, &[]);
    rounds.iter().map(|(_, r)| cpu_over(r, &steps)).collect()
}

/// One candidate's noise over batches of rounds of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CandidateNoise {
    pub candidate: &'static str,
    pub rounds: usize,
    /// Rounds where the candidate has a value when all batches are taken as one side.
    pub measured: usize,
    /// SD of the logs over all rounds, in % (when every round has a value).
    pub sd_log_pct: Option<f64>,
    /// `(max - min) / median` over all rounds, in %.
    pub spread_pct: Option<f64>,
    /// The SD of the logs within each batch, pooled, in % (batches where every round has a
    /// value): the noise of rounds made close together, as interleaved rounds are.
    pub within_batch_sd_log_pct: Option<f64>,
    /// Rounds in the batches that count for `within_batch_sd_log_pct`.
    pub within_batch_rounds: usize,
}

/// Each candidate's noise over `batches` (each a list of rounds made together).
pub fn noise(batches: &[Vec<RoundIn>]) -> Vec<CandidateNoise> {
    noise_of(batches, &CANDIDATES, |r| values(r).to_vec())
}

/// The latency signal's candidates, in the order of `latency_values`: a statistic of a step's
/// latency (p95 of ok requests, mean of all requests: the report keeps no mean of the ok ones,
/// median of ok requests) at the lowest common step, at the busiest step every round passed
/// below its knee, and over all those steps (geometric mean).
pub(crate) const LATENCY_CANDIDATES: [&str; 9] = [
    "p95 of ok requests at the lowest common step",
    "p95 of ok requests at the busiest passing step",
    "p95 of ok requests over the passing steps (mean of logs)",
    "mean of all requests at the lowest common step",
    "mean of all requests at the busiest passing step",
    "mean of all requests over the passing steps (mean of logs)",
    "median of ok requests at the lowest common step",
    "median of ok requests at the busiest passing step (the verdict's)",
    "median of ok requests over the passing steps (mean of logs)",
];

/// Each latency candidate's value per round (None where a round has none).
pub fn latency_values(rounds: &[RoundIn]) -> Vec<Vec<Option<f64>>> {
    let common = common_step(rounds, &[]);
    let passing = passing_steps(rounds);
    let busiest = latency_step(rounds, &[]);
    let stats: [fn(&Report, u32) -> Option<f64>; 3] = [
        |r, t| step_field(r, t, |s| s.ok_p95_ms),
        |r, t| step_field(r, t, |s| s.avg_ms),
        |r, t| step_field(r, t, |s| s.ok_p50_ms),
    ];
    let mut out = Vec::new();
    for stat in stats {
        let at = |t: Option<u32>| -> Vec<Option<f64>> {
            rounds
                .iter()
                .map(|(_, r)| t.and_then(|t| stat(r, t)))
                .collect()
        };
        out.push(at(common));
        // the verdict's step, rounds that passed no step left out (`rounds::latency_step`)
        out.push(
            rounds
                .iter()
                .map(|r| busiest.filter(|_| passed_any(r)).and_then(|t| stat(r.1, t)))
                .collect(),
        );
        out.push(
            rounds
                .iter()
                .map(|(_, r)| {
                    let logs: Option<Vec<f64>> =
                        passing.iter().map(|t| stat(r, *t).map(f64::ln)).collect();
                    logs.filter(|l| !l.is_empty())
                        .map(|l| (l.iter().sum::<f64>() / l.len() as f64).exp())
                })
                .collect(),
        );
    }
    out
}

fn step_field(r: &Report, t: u32, f: fn(&StepReport) -> f64) -> Option<f64> {
    r.steps
        .iter()
        .find(|s| s.target == t)
        .map(f)
        .filter(|v| *v > 0.0)
}

/// Each latency candidate's noise over `batches`.
pub fn latency_noise(batches: &[Vec<RoundIn>]) -> Vec<CandidateNoise> {
    noise_of(batches, &LATENCY_CANDIDATES, latency_values)
}

/// The verdict's latency signal per round of one batch taken as one side (`rounds::latency_step`).
pub fn latency_primary(rounds: &[RoundIn]) -> Vec<Option<f64>> {
    latency_rounds(rounds, latency_step(rounds, &[]))
}

/// The noise of candidates `names` whose per-round values `values` gives.
fn noise_of(
    batches: &[Vec<RoundIn>],
    names: &[&'static str],
    values: impl Fn(&[RoundIn]) -> Vec<Vec<Option<f64>>>,
) -> Vec<CandidateNoise> {
    let all: Vec<RoundIn> = batches.iter().flatten().copied().collect();
    let overall = values(&all);
    let per_batch: Vec<Vec<Vec<Option<f64>>>> = batches.iter().map(|b| values(b)).collect();
    (0..names.len())
        .map(|i| {
            let v: Vec<f64> = overall[i].iter().flatten().copied().collect();
            let complete = v.len() == all.len() && v.len() >= 2;
            let (mut ss, mut df, mut n) = (0.0, 0.0, 0);
            for b in &per_batch {
                let bv: Vec<f64> = b[i].iter().flatten().copied().collect();
                if bv.len() == b[i].len() && bv.len() >= 2 {
                    ss += sd_of_logs(&bv).powi(2) * (bv.len() - 1) as f64;
                    df += (bv.len() - 1) as f64;
                    n += bv.len();
                }
            }
            CandidateNoise {
                candidate: names[i],
                rounds: all.len(),
                measured: v.len(),
                sd_log_pct: complete.then(|| sd_of_logs(&v) * 100.0),
                spread_pct: complete.then(|| spread_pct(&v)).flatten(),
                within_batch_sd_log_pct: (df > 0.0).then(|| (ss / df).sqrt() * 100.0),
                within_batch_rounds: n,
            }
        })
        .collect()
}
