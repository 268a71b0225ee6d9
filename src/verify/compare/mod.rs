//! `perflab compare A B`: did B regress against A? Each side is one run or several rounds.
//! Pure: `pair` (one run against one run: steps side by side, knee shift, versions and config
//! that differ), `rounds` (each side's rounds: max sustainable rates, CPU per ok request at the
//! common step), `verdict` (the rule below), `render` (text).
//!
//! The verdict comes from the rounds' spread, never from one number:
//!
//! * fewer than 2 rounds on a side: `inconclusive`;
//! * the CPU signal, the primary one: app-box CPU ms per ok response at the common step, the
//!   lowest step measured with CPU samples, and at most 5 % of its requests failed, in every
//!   round of both sides. The lowest, and not only passing steps: on a shared host the latency
//!   criteria fail early (2a quick rounds here, the host's other processes using 1.2-1.5 of its
//!   2 cores: knees at 50-150 rps, 1,000 µs burnt per request failing at 50 rps) while the CPU
//!   per request at the lowest step stays within 2 % across rounds (6.97, 6.97, 7.11 ms); higher
//!   steps are cut by k6's abort or saturated, and queueing adds CPU. Per side the median and
//!   the spread `(max - min) / median`; pooled spread = the root mean square of the two sides'.
//!   B is *worse* when its median exceeds A's by more than
//!   `max(SPREAD_K x pooled spread, FLOOR_PCT)` and the two sides' ranges do not overlap,
//!   *better* symmetrically, *same* within the threshold, *unclear* beyond it with overlapping
//!   ranges;
//! * the capacity signal: each round's max sustainable rate (refined with `--refine`, else the
//!   last passing step below the knee). B is worse when every B round is below every A round,
//!   better when above, else same. It moves by whole steps and with host stalls, so it only
//!   confirms or contradicts the CPU signal;
//! * CPU worse (better) and capacity not better (worse): `regressed` (`improved`); CPU same and
//!   capacity same: `same`; the signals disagree, capacity moved with the CPU the same, the CPU
//!   change unclear, or no CPU signal: `inconclusive`.
//!
//! * the host's speed (`speed`): a `regressed` on rounds whose host ran more than 15 % slower
//!   than A's (an `improved` on a faster one) is `inconclusive`.
//!
//! The constants and the detection power measured on this project's host are in the README
//! ("Checking the findings").
pub mod pair;
pub mod render;
pub mod rounds;
pub mod speed;
pub mod verdict;

pub use pair::{Comparison, Diff, Side, StepPair, compare, render_text};
pub use rounds::{RateBasis, Rounds};
pub use speed::SpeedSignal;
pub use verdict::{CapacitySignal, CpuSignal, Signal, Verdict};

use crate::analyze::model::Report;
use crate::rundir::Manifest;
use serde::Serialize;

/// One round given to `compare_rounds`: label, report, manifest.
pub type Run<'a> = (&'a str, &'a Report, &'a Manifest);

/// The thresholds the verdict used.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rule {
    pub spread_k: f64,
    pub floor_pct: f64,
    pub min_rounds: usize,
}

/// The whole comparison: the verdict, both sides' rounds, the two signals, and the first
/// round of each side side by side (with the versions and config that differ).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundsComparison {
    pub verdict: Verdict,
    pub why: String,
    pub rule: Rule,
    pub rounds_a: Rounds,
    pub rounds_b: Rounds,
    pub cpu: CpuSignal,
    pub capacity: CapacitySignal,
    /// Both sides' host speeds (a verdict the host's own change explains is inconclusive).
    pub host_speed: SpeedSignal,
    /// The first round of A against the first round of B (in JSON, at the top level: `a`, `b`,
    /// `unit`, `steps`, the knees, `versions` and `config` that differ).
    #[serde(flatten)]
    pub first: Comparison,
}

fn injected(side: &[Run]) -> Vec<String> {
    let mut v: Vec<String> = side
        .iter()
        .flat_map(|(_, _, m)| m.experiment.stack.injected())
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Compare two sides of one or more rounds each (neither may be empty).
pub fn compare_rounds(a: &[Run], b: &[Run]) -> RoundsComparison {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "compare: a side without runs"
    );
    let ra: Vec<rounds::RoundIn> = a.iter().map(|(l, r, _)| (*l, *r)).collect();
    let rb: Vec<rounds::RoundIn> = b.iter().map(|(l, r, _)| (*l, *r)).collect();
    let step = rounds::common_step(&ra, &rb);
    let side_a = rounds::rounds(&ra, injected(a), step);
    let side_b = rounds::rounds(&rb, injected(b), step);
    let cpu = verdict::cpu_signal(step, &side_a, &side_b);
    let capacity = verdict::capacity_signal(&side_a, &side_b);
    let (v, why) = verdict::decide((a.len(), b.len()), &cpu, &capacity);
    let host_speed = speed::speed_signal(a, b);
    let (v, why) = speed::temper(v, why, &host_speed);
    RoundsComparison {
        verdict: v,
        why,
        rule: Rule {
            spread_k: verdict::SPREAD_K,
            floor_pct: verdict::FLOOR_PCT,
            min_rounds: verdict::MIN_ROUNDS,
        },
        rounds_a: side_a,
        rounds_b: side_b,
        cpu,
        capacity,
        host_speed,
        first: compare(a[0], b[0]),
    }
}
