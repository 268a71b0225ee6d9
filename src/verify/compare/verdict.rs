//! The verdict of `compare` from tests on the rounds: the CPU signal (app CPU per ok request
//! over the steps every round passed, else at the common step: the primary one) and the
//! capacity signal (max sustainable rates), each the B/A ratio with its interval at the plan's
//! boundary (`sequential`), and how the two combine (the rule is written out in the module doc
//! of `compare`). Pure.
use super::paired::Pairing;
use super::rounds::{Rounds, median};
use super::sequential::{Call, LogTest, Plan};
use serde::Serialize;

/// The CPU per ok request of a round is not known better than this (SD of the logs): a side
/// whose rounds agree to the digit does not make the interval vanish.
pub(crate) const CPU_SD_FLOOR: f64 = 0.005;
/// Max sustainable rates move by whole steps: their SD of the logs counts as at least this.
pub(crate) const CAPACITY_SD_FLOOR: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Same,
    Regressed,
    Improved,
    Inconclusive,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::Inconclusive => "inconclusive",
        }
    }

    /// Decided: `regressed`, `improved` or `same` (a sequential comparison stops there).
    pub(crate) fn decided(self) -> bool {
        self != Verdict::Inconclusive
    }
}

/// `perflab compare --help`'s closing text: the verdict's rule and the exit codes ([`exit_code`]),
/// and where the rule is written.
pub const HELP: &str = "\
Verdict: B/A of the rounds' app CPU per ok request over the steps every round passed (their \
geometric mean; else at the lowest common step), with an interval \
from Student's t on the logs at a boundary that accounts for looking after every pair of rounds \
(up to --max-rounds a side). regressed: the interval is above 1 and B/A >= 1 + --min-effect; \
improved: the mirror; same: the interval lies within +-(--margin), and the latency's within \
+-20 %; else inconclusive, with the rounds a side that would decide. See docs/regression.md.

Exit codes:
  0  no regression (same or improved)
  1  regressed
  2  bad input (unreadable run, a run twice, runs of different experiments, sides that differ in \
more than the suite and --set overrides, settings out of range); nothing compared
  3  inconclusive, and nothing regressed

With one TARGET (an experiment or group) and --a/--b, the rounds of the two configurations run \
alternately, each on a fresh stack, until each experiment's verdict is decided or --max-rounds \
a side; complete rounds of either configuration already under --out count. The exit code is \
over the experiments' rows (1 when one regressed, else 3 when one is inconclusive, else 0), \
130 when interrupted (the complete rounds are kept), 1 when a round's harness failed. \
docs/ci/regression.yml is a CI job that fails on 1.

Example:
  perflab compare 2a --a suite=trixie --b suite=forky --quick --html cmp.html";

/// `perflab compare`'s exit code for one or more verdicts (one per row): 1 when any regressed,
/// else 3 when any is inconclusive, else 0.
pub fn exit_code(verdicts: impl IntoIterator<Item = Verdict>) -> u8 {
    let v: Vec<Verdict> = verdicts.into_iter().collect();
    if v.contains(&Verdict::Regressed) {
        1
    } else if v.contains(&Verdict::Inconclusive) {
        3
    } else {
        0
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
    /// The interval lies within ±margin.
    Same,
    /// The interval is too wide to decide.
    Unclear,
    /// Not measurable (no common step with CPU samples, fewer than 2 rounds a side).
    Missing,
}

/// App CPU per ok request over the signal's steps, both sides (and the latency signal, read
/// at one step: `latency::LatencySignal`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuSignal {
    /// The lowest of the signal's steps (its target, in `unit`): the common step when it is one.
    pub step: Option<u32>,
    /// The signal's steps when they are several (`rounds::cpu_steps`): each round's value is
    /// its geometric mean over them.
    #[serde(skip_serializing_if = "one_or_none")]
    pub steps: Vec<u32>,
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// B / A of the geometric means - 1, in %.
    pub delta_pct: Option<f64>,
    /// B / A with its interval (None below 2 rounds a side or without a common step).
    pub test: Option<LogTest>,
    /// With a test: "paired over N pairs", or "unpaired: why" (`paired::Pairing::text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing: Option<String>,
    pub says: Signal,
    /// The latency signal's statistic ("median", "p95": `latency::LatencyRead`); absent for
    /// the CPU signal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<&'static str>,
}

/// The max sustainable rates of both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapacitySignal {
    pub a_median: Option<f64>,
    pub b_median: Option<f64>,
    /// B / A of the geometric means - 1, in % (a round with no passing step counts as half the
    /// lowest step).
    pub delta_pct: Option<f64>,
    pub test: Option<LogTest>,
    pub says: Signal,
}

fn one_or_none(v: &[u32]) -> bool {
    v.len() <= 1
}

fn says(test: &Option<LogTest>, higher_is_worse: bool) -> Signal {
    match test.as_ref().map(|t| t.call) {
        None => Signal::Missing,
        Some(Call::Within) => Signal::Same,
        Some(Call::Undecided) => Signal::Unclear,
        Some(Call::Higher) if higher_is_worse => Signal::Worse,
        Some(Call::Lower) if !higher_is_worse => Signal::Worse,
        Some(_) => Signal::Better,
    }
}

fn logs(v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| x.ln()).collect()
}

/// The CPU signal from both sides' per-round CPU ms per ok request over `steps`, paired or
/// not as `pairing` says.
pub(crate) fn cpu_signal(
    steps: &[u32],
    (a, b): (&Rounds, &Rounds),
    plan: &Plan,
    pairing: &Pairing,
) -> CpuSignal {
    let side = |r: &Rounds| Measured {
        values: r.cpu_ms_per_ok.clone(),
        rounds: r.runs.len(),
        median: r.cpu_median,
    };
    step_signal(steps, (side(a), side(b)), (plan, pairing), CPU_SD_FLOOR)
}

/// One side's per-round values of a signal read at steps (one per round when complete).
pub(crate) struct Measured {
    pub values: Vec<f64>,
    pub rounds: usize,
    pub median: Option<f64>,
}

/// A signal read at `steps` (none: not measurable) from both sides' values, tested (paired
/// or not as the pairing says) when every round has a value, its SD floored at `floor`.
pub(crate) fn step_signal(
    steps: &[u32],
    (a, b): (Measured, Measured),
    (plan, pairing): (&Plan, &Pairing),
    floor: f64,
) -> CpuSignal {
    let complete = a.values.len() == a.rounds && b.values.len() == b.rounds;
    let test = (!steps.is_empty() && complete)
        .then(|| pairing.test(plan, &logs(&a.values), &logs(&b.values), floor))
        .flatten();
    CpuSignal {
        step: steps.first().copied(),
        steps: steps.to_vec(),
        a_median: a.median,
        b_median: b.median,
        delta_pct: test.as_ref().map(|t| (t.ratio - 1.0) * 100.0),
        says: says(&test, true),
        pairing: test.as_ref().map(|_| pairing.text()),
        test,
        stat: None,
    }
}

/// A round's max sustainable rate for the capacity test: none passing counts as half the
/// lowest step (`lowest`).
fn rate(v: u32, lowest: u32) -> f64 {
    if v > 0 {
        v as f64
    } else {
        (lowest.max(1) as f64) / 2.0
    }
}

/// The capacity signal from both sides' max sustainable rates (`lowest`: the lowest step),
/// paired or not as `pairing` says.
pub(crate) fn capacity_signal(
    (a, b): (&Rounds, &Rounds),
    lowest: u32,
    plan: &Plan,
    pairing: &Pairing,
) -> CapacitySignal {
    let f =
        |r: &Rounds| -> Vec<f64> { r.max_sustainable.iter().map(|v| rate(*v, lowest)).collect() };
    let (ra, rb) = (f(a), f(b));
    let test = pairing.test(plan, &logs(&ra), &logs(&rb), CAPACITY_SD_FLOOR);
    let med = |r: &Rounds| {
        median(
            &r.max_sustainable
                .iter()
                .map(|v| *v as f64)
                .collect::<Vec<_>>(),
        )
    };
    CapacitySignal {
        a_median: med(a),
        b_median: med(b),
        delta_pct: test.as_ref().map(|t| (t.ratio - 1.0) * 100.0),
        says: says(&test, false),
        test,
    }
}

/// "B/A 1.12 (+12.0 %), 99.7 % interval 1.08-1.16" for a test.
pub(crate) fn ratio_text(t: &LogTest) -> String {
    format!(
        "B/A {:.3} ({:+.1} %), {}",
        t.ratio,
        (t.ratio - 1.0) * 100.0,
        interval_text(t.boundary.level, t.low, t.high)
    )
}

/// An interval wider than this factor (high / low) is shown as too wide to read: at 2 pairs the
/// paired t has 1 degree of freedom, and at a 99.8 % level its interval runs from 0.000 to 5e5.
pub(crate) const UNREADABLE_WIDTH: f64 = 100.0;

/// "99.84 % interval 1.08-1.16"; past `UNREADABLE_WIDTH`, bounds under 0.001 or over 1000 are
/// written as such and the text says the rounds are too few.
pub(crate) fn interval_text(level: f64, low: f64, high: f64) -> String {
    let level = level * 100.0;
    if high / low.max(f64::MIN_POSITIVE) <= UNREADABLE_WIDTH {
        return format!("{level:.2} % interval {low:.3}-{high:.3}");
    }
    let bound = |x: f64| match x {
        x if x < 0.001 => "under 0.001".to_string(),
        x if x > 1000.0 => "over 1000".to_string(),
        x => format!("{x:.3}"),
    };
    format!(
        "{level:.2} % interval {} to {} (too few rounds for a usable interval at this level)",
        bound(low),
        bound(high)
    )
}

/// How many more rounds would decide the CPU signal, as words.
pub(crate) fn more_rounds_text(t: &LogTest) -> String {
    let now = t.n_a.max(t.n_b);
    match t.rounds_needed {
        Some(n) if n > t.boundary.planned_rounds => format!(
            "about {} more round(s) a side ({n} a side, beyond the plan of {}) would decide at this estimate and SD",
            n - now,
            t.boundary.planned_rounds
        ),
        Some(n) => format!(
            "about {} more round(s) a side ({n} a side) would decide at this estimate and SD",
            n - now
        ),
        None => format!(
            "at this estimate and SD no number of rounds up to {} a side decides (the estimate sits between the margin and the min effect, or the noise is too high)",
            super::sequential::ROUNDS_SEARCH_CAP
        ),
    }
}

const LOOK_AT: &str = "look at the steps' p95 and failures side by side and at the host's other load (report caveats)";

/// The verdict and why, from the round counts and the two signals.
pub(crate) fn decide(
    rounds: (usize, usize),
    cpu: &CpuSignal,
    cap: &CapacitySignal,
) -> (Verdict, String) {
    use Signal::*;
    let (na, nb) = rounds;
    if na < 2 || nb < 2 {
        return (
            Verdict::Inconclusive,
            format!(
                "{na} round(s) for A, {nb} for B: the verdict needs the spread of at least 2 rounds a side (`perflab run EXP --rounds 3`)"
            ),
        );
    }
    let cpu_txt = match (&cpu.test, &cpu.pairing) {
        (Some(t), Some(p)) => format!("CPU per ok request {} ({p})", ratio_text(t)),
        (Some(t), None) => format!("CPU per ok request {}", ratio_text(t)),
        (None, _) => "no CPU per ok request at a common step".to_string(),
    };
    let cap_txt = match (&cap.test, cap.says) {
        (Some(t), Worse | Better) => format!(
            "max sustainable {} ({})",
            ratio_text(t),
            if cap.says == Worse {
                "B lower"
            } else {
                "B higher"
            }
        ),
        _ => match (cap.a_median, cap.b_median) {
            (Some(a), Some(b)) => format!("max sustainable median {a:.0} -> {b:.0}"),
            _ => "no max sustainable rates".to_string(),
        },
    };
    let more = cpu.test.as_ref().map(more_rounds_text).unwrap_or_default();
    let (v, how) = match (cpu.says, cap.says) {
        (Worse, Better) | (Better, Worse) => (
            Verdict::Inconclusive,
            format!("the CPU and capacity signals disagree ({LOOK_AT})"),
        ),
        (Worse, _) => (Verdict::Regressed, "B spends more CPU per request".into()),
        (Better, _) => (Verdict::Improved, "B spends less CPU per request".into()),
        (Same, Worse | Better) => (
            Verdict::Inconclusive,
            format!(
                "the CPU per request is the same but the max sustainable rate moved: a change that is not CPU (latency, a pool, failures) or host noise ({LOOK_AT})"
            ),
        ),
        (Same, _) => (
            Verdict::Same,
            "the CPU per request is the same within the margin".into(),
        ),
        (Unclear, Worse | Better) => (
            Verdict::Inconclusive,
            format!(
                "the max sustainable rate moved while the CPU per request is not decided: {more} ({LOOK_AT})"
            ),
        ),
        (Unclear, _) => (
            Verdict::Inconclusive,
            format!("the CPU interval is too wide to decide: {more}"),
        ),
        (Missing, _) => (
            Verdict::Inconclusive,
            "without CPU per request the max sustainable rate alone is too coarse a signal".into(),
        ),
    };
    (v, format!("{how}: {cpu_txt}; {cap_txt}"))
}

#[cfg(test)]
mod tests {
    use super::super::rounds::spread_pct;
    use super::super::sequential::Settings;
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
            steal_pct: rates.iter().map(|_| None).collect(),
            steal_flagged: Vec::new(),
            latency_ms: Vec::new(),
            latency_median: None,
            injected: Vec::new(),
        }
    }

    fn verdict(a: &Rounds, b: &Rounds) -> (Verdict, CpuSignal, String) {
        let plan = Plan::new(&Settings::default(), a.runs.len().max(b.runs.len()));
        let unpaired = Pairing::Unpaired("untagged".into());
        let cpu = cpu_signal(&[150], (a, b), &plan, &unpaired);
        let cap = capacity_signal((a, b), 50, &plan, &unpaired);
        let (v, why) = decide((a.runs.len(), b.runs.len()), &cpu, &cap);
        (v, cpu, why)
    }

    #[test]
    fn more_cpu_beyond_the_interval_is_a_regression() {
        let a = side(&[175, 175, 150], &[4.0, 4.1, 3.95]);
        let b = side(&[150, 150, 150], &[5.1, 5.2, 5.0]);
        let (v, cpu, why) = verdict(&a, &b);
        assert_eq!(v, Verdict::Regressed, "{why}");
        assert_eq!(cpu.says, Signal::Worse);
        let t = cpu.test.unwrap();
        assert!(t.low > 1.1 && t.high < 1.45, "{t:?}");
        assert!(why.contains("B/A 1.27"), "{why}");
        // and the other way round
        assert_eq!(verdict(&b, &a).0, Verdict::Improved);
    }

    #[test]
    fn the_same_needs_a_narrow_interval_not_a_missed_change() {
        // ten rounds a side within 1 %: the interval lies within ±5 %
        let cpu: Vec<f64> = (0..10).map(|i| 4.0 + 0.01 * (i % 4) as f64).collect();
        let rates = [175; 10];
        let (v, _, why) = verdict(&side(&rates, &cpu), &side(&rates, &cpu));
        assert_eq!(v, Verdict::Same, "{why}");
        // +20 % seen on 3 rounds spreading 30 %: not the same, and not yet a regression
        let a = side(&[175, 175, 175], &[3.5, 4.0, 4.7]);
        let b = side(&[175, 175, 175], &[4.3, 4.8, 5.7]);
        let (v, cpu, why) = verdict(&a, &b);
        assert_eq!(
            (v, cpu.says),
            (Verdict::Inconclusive, Signal::Unclear),
            "{why}"
        );
        assert!(why.contains("more round(s) a side"), "{why}");
        assert!(cpu.test.unwrap().rounds_needed.unwrap() > 3);
    }

    #[test]
    fn one_round_a_side_is_inconclusive() {
        let (v, cpu, _) = verdict(&side(&[175], &[4.0]), &side(&[100], &[8.0]));
        assert_eq!(v, Verdict::Inconclusive);
        assert_eq!(cpu.says, Signal::Missing);
    }

    #[test]
    fn a_capacity_signal_is_never_hidden_behind_the_cpu_one() {
        // more CPU per request, yet every B round sustains far more
        let a = side(&[100, 100, 100], &[4.0, 4.1, 4.0]);
        let b = side(&[200, 200, 200], &[5.0, 5.1, 5.2]);
        let (v, _, why) = verdict(&a, &b);
        assert_eq!(v, Verdict::Inconclusive);
        assert!(
            why.contains("disagree") && why.contains("B higher"),
            "{why}"
        );
        // the first try: capacity fell in every round (100/125/125 -> 50/50/50) while
        // the CPU per request (+8 %, rounds spreading 12-27 %) is not decided
        let a = side(&[100, 125, 125], &[8.22, 8.91, 9.93]);
        let b = side(&[50, 50, 50], &[9.35, 9.37, 10.43]);
        let (v, cpu, why) = verdict(&a, &b);
        assert_eq!((v, cpu.says), (Verdict::Inconclusive, Signal::Unclear));
        assert!(why.contains("max sustainable rate moved"), "{why}");
        assert!(why.contains("(B lower)") && why.contains("p95"), "{why}");
    }

    #[test]
    fn without_cpu_the_knee_alone_decides_nothing() {
        let (v, cpu, _) = verdict(&side(&[175, 175, 175], &[]), &side(&[100, 100, 100], &[]));
        assert_eq!(cpu.says, Signal::Missing);
        assert_eq!(v, Verdict::Inconclusive);
    }

    #[test]
    fn exit_codes() {
        use Verdict::*;
        assert_eq!(exit_code([Same, Improved]), 0);
        assert_eq!(exit_code([Same, Inconclusive, Regressed]), 1);
        assert_eq!(exit_code([Inconclusive, Same]), 3);
        assert_eq!(exit_code([]), 0);
    }

    #[test]
    fn an_interval_too_wide_to_read_says_so() {
        assert_eq!(
            interval_text(0.9984, 0.949, 1.423),
            "99.84 % interval 0.949-1.423"
        );
        // 2 pairs: the recorded b15-1 batch of 2026-12-03 printed 0.000-383256.334
        assert_eq!(
            interval_text(0.9984, 0.000_003, 383_256.334),
            "99.84 % interval under 0.001 to over 1000 (too few rounds for a usable interval at this level)"
        );
        assert!(interval_text(0.9984, 0.366, 3.773).ends_with("0.366-3.773"));
        assert!(interval_text(0.99, 0.05, 20.0).contains("0.050 to 20.000 (too few"));
    }
}
