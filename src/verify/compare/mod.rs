//! `perflab compare A B`: did B regress against A? Each side is one run or several rounds.
//! Pure: `pair` (one run against one run: steps side by side, knee shift, versions and config
//! that differ), `rounds` (each side's rounds: max sustainable rates, CPU per ok request at the
//! common step, steal), `sides` (what is refused), `stats` and `sequential` (the test and its
//! boundary), `verdict` (the rule below), `speed` and `drift` (the host), `signals` (the
//! candidate signals' noise), `simulate` (the measured power), `render` (text).
//!
//! The verdict comes from a test on the rounds, never from one number (docs/regression.md
//! has the rule, its measured power and the noise that chose the signal):
//!
//! * the CPU signal, the primary one: app-box CPU ms per ok response over the steps that every
//!   round of both sides passed below its knee, their geometric mean, when they are two or
//!   more; else at the common step, the lowest step measured with CPU samples, and at most 5 %
//!   of its requests failed, in every round of both sides (`rounds::cpu_steps`; the candidates
//!   with the least round-to-round noise: SD of the logs 2-4 % between the rounds of a batch
//!   at the common step on the hosts of 2026-11-30 and 12-01, where the rounds shared one
//!   passing step; 12 % there and 4-6 % over the passing steps on the host of 2026-12-04,
//!   where they shared five; 35-45 % for the max sustainable rate);
//! * per round the log of the signal; B/A = the ratio of the geometric means, with an interval
//!   from Student's t on the logs with the pooled SD (floored at 0.5 %), at the level
//!   1 - α' of the plan's boundary: α' is calibrated by simulation so that looking after every
//!   A/B pair from 2 to `--max-rounds` rounds a side (default 10) gives any false `regressed`
//!   or `improved` a chance of at most 1 - `--confidence` (default 0.99); plain `compare A B`
//!   uses the same boundary for its round counts;
//! * paired (`paired`): when every round of both sides is one of the complete pairs of one
//!   `compare EXP --a ... --b ...` batch (`measurements.compare`: batch, side, pair), B/A and
//!   its interval come from the per-pair differences of the logs (paired Student t, n - 1
//!   degrees of freedom at n pairs, its own boundary calibrated the same way): drift shared
//!   by a pair's two rounds cancels. Otherwise the unpaired test above, and the verdict says
//!   which ("paired over N pairs" / "unpaired: why");
//! * CPU worse: the interval entirely above 1 and B/A at least 1 + `--min-effect` (3 %);
//!   better: the mirror; same: the whole interval within ±`--margin` (5 %), an equivalence
//!   test; anything else unclear, with the rounds a side that would decide at this estimate;
//! * the latency signal, the second deciding one (`latency`): the median latency of ok
//!   requests at the busiest step every round of both sides passed below its knee (rounds that
//!   passed no step left out of it, with their pairs), the same
//!   test; each deciding signal at half the comparison's false-alarm budget
//!   (`Settings::per_signal`; a matrix splits over its rows first, `Settings::family`). Latency
//!   worse is `regressed`, better `improved` (unless the CPU regressed); `same` needs the CPU
//!   within ±`--margin` and the latency within its own ±20 % (`latency::LATENCY_MARGIN_PCT`),
//!   or the latency missing; `moved` names the signals that moved;
//! * the capacity signal: each round's max sustainable rate (refined with `--refine`, else the
//!   last passing step below the knee; none passing counts as half the lowest step), the same
//!   test with its SD floored at 5 % (whole steps); it never decides alone but is never hidden:
//! * CPU worse (better) and capacity not better (worse): `regressed` (`improved`); CPU same and
//!   capacity not moved: `same`; the signals disagree, capacity moved with the CPU the same or
//!   unclear, the CPU unclear, fewer than 2 rounds a side or no CPU signal: `inconclusive`,
//!   saying what to look at;
//! * the host: a `regressed` on rounds whose host ran more than 15 % slower than A's (an
//!   `improved` on a faster one) is `inconclusive` (`speed`); so is a decided verdict whose
//!   sides differ in the hypervisor's steal beyond the rounds' noise (`drift`).
//!
//! Refused (exit 2, naming the runs, `sides`): a run twice, runs of different experiments, a
//! side mixing configurations, sides differing in more than the suite and `--set` overrides.
//! Exit codes: 0 no regression, 1 regressed, 3 inconclusive (`verdict::exit_code`).
pub mod calibration;
pub mod drift;
pub mod hosts;
pub mod latency;
pub mod pair;
pub mod paired;
pub mod render;
pub mod resample;
pub mod rounds;
pub mod sequential;
pub mod sides;
pub mod signals;
pub mod simulate;
pub mod speed;
pub mod stats;
pub mod verdict;

pub(crate) use drift::StealSignal;
pub use latency::LatencySignal;
pub use pair::{Comparison, Diff, Side, StepPair, compare, render_text};
pub use rounds::{RateBasis, Rounds};
pub use sequential::{Boundary, Call, Family, LogTest, Plan, Settings};
pub use speed::SpeedSignal;
pub use verdict::{CapacitySignal, CpuSignal, HELP, Signal, Verdict, exit_code};

use crate::rundir;
use serde::Serialize;

pub(crate) use rounds::Run;

/// The whole comparison: the verdict, both sides' rounds, the two signals, and the first
/// round of each side side by side (with the versions and config that differ).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoundsComparison {
    pub verdict: Verdict,
    pub why: String,
    /// `regressed`, `improved` or `same`: a sequential comparison stops here.
    pub decided: bool,
    /// Undecided: the rounds a side that would decide the CPU signal at this estimate and SD
    /// (the latency's when the CPU is within the margin and the latency undecided).
    pub rounds_needed: Option<usize>,
    /// ... and how many more a side that is (the larger side's count taken).
    pub more_rounds: Option<usize>,
    pub settings: Settings,
    /// The boundary at these round counts (None below 2 rounds a side).
    pub boundary: Option<Boundary>,
    pub rounds_a: Rounds,
    pub rounds_b: Rounds,
    pub cpu: CpuSignal,
    /// The second deciding signal: the median latency of ok requests at the busiest step every
    /// round passed.
    pub latency: LatencySignal,
    /// The deciding signals that moved (`cpu`, `latency`): what a decided verdict rests on.
    pub moved: Vec<&'static str>,
    pub capacity: CapacitySignal,
    /// Both sides' host speeds (a verdict the host's own change explains is inconclusive).
    pub host_speed: SpeedSignal,
    /// Which hosts ran each side (rounds from different hosts are marked; a decided verdict on
    /// them needs agreeing speed readings).
    pub hosts: hosts::HostsSignal,
    /// Both sides' steal (a decided verdict on sides apart in steal is inconclusive).
    pub steal: StealSignal,
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

/// Each round's comparison tag (`measurements.compare`), if it has one.
fn tags<'r>(side: &[Run<'r>]) -> Vec<Option<&'r rundir::batch::CompareTag>> {
    side.iter()
        .map(|(_, _, m)| m.measurements.compare.as_ref())
        .collect()
}

/// Compare two sides of one or more rounds each (neither may be empty) with the default
/// settings (confidence 0.99, min effect 3 %, margin 5 %, a plan of 10 rounds a side).
pub fn compare_rounds(a: &[Run], b: &[Run]) -> RoundsComparison {
    compare_rounds_with(a, b, &Settings::default())
}

/// Compare two sides with these settings (checked by the caller: `Settings::check`). Call it
/// again after every new pair of rounds: the boundary accounts for the looks.
pub(crate) fn compare_rounds_with(a: &[Run], b: &[Run], settings: &Settings) -> RoundsComparison {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "compare: a side without runs"
    );
    let ra: Vec<rounds::RoundIn> = a.iter().map(|(l, r, _)| (*l, *r)).collect();
    let rb: Vec<rounds::RoundIn> = b.iter().map(|(l, r, _)| (*l, *r)).collect();
    let steps = rounds::cpu_steps(&ra, &rb);
    let together = a
        .iter()
        .chain(b)
        .all(|(_, _, m)| crate::verify::load::loaded_together(m));
    let lat_read = rounds::latency_read(&ra, &rb, together);
    let side_a = rounds::rounds(a, injected(a), &steps, lat_read.as_ref());
    let side_b = rounds::rounds(b, injected(b), &steps, lat_read.as_ref());
    // each deciding signal at its share of the comparison's false-alarm budget
    let plan = Plan::new(&settings.per_signal(), a.len().max(b.len()));
    let pairing = paired::pairing(&tags(a), &tags(b));
    let sides = (&side_a, &side_b);
    let cpu = verdict::cpu_signal(&steps, sides, &plan, &pairing);
    let lat_plan = Plan::new(&latency::settings(settings), a.len().max(b.len()));
    let lat = latency::latency_signal(lat_read.as_ref(), sides, &lat_plan, &pairing);
    let capacity = verdict::capacity_signal(sides, rounds::lowest_step(&ra), &plan, &pairing);
    let first = compare(a[0], b[0]);
    let (v, why) = verdict::decide((a.len(), b.len()), &cpu, &capacity);
    let (v, why) = match a.len().min(b.len()) {
        0 | 1 => (v, why),
        _ => latency::join(
            (v, why),
            cpu.says,
            &lat,
            (&first.unit, lat_plan.settings.margin_pct),
        ),
    };
    let host_speed = speed::speed_signal(a, b);
    let (v, why) = speed::temper(v, why, &host_speed);
    let hosts = hosts::hosts_signal(a, b, &host_speed);
    let (v, why) = hosts::temper(v, why, &hosts);
    let steal = drift::steal_signal(&side_a, &side_b, cpu.test.as_ref().map(|t| t.ratio));
    let (v, why) = drift::temper(v, why, &steal);
    let why = speed::explain_noise(v, why, &host_speed);
    // the CPU's, else (a CPU within the margin, the latency undecided) the latency's
    let rounds_needed = [&cpu.test, &lat.test]
        .into_iter()
        .flatten()
        .filter(|_| !v.decided())
        .find_map(|t| t.rounds_needed);
    RoundsComparison {
        verdict: v,
        why,
        decided: v.decided(),
        rounds_needed,
        more_rounds: rounds_needed.map(|n| n.saturating_sub(a.len().max(b.len()))),
        settings: *settings,
        boundary: cpu
            .test
            .as_ref()
            .map(|t| t.boundary.clone())
            .or_else(|| (a.len() >= 2 && b.len() >= 2).then(|| plan.boundary(a.len(), b.len()))),
        rounds_a: side_a,
        rounds_b: side_b,
        moved: latency::moved(cpu.says, lat.says),
        cpu,
        latency: lat,
        capacity,
        host_speed,
        hosts,
        steal,
        first,
    }
}
