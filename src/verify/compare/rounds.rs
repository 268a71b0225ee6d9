//! One side of a comparison (one or more rounds): each round's max sustainable rate and knee,
//! the steps of the CPU signal (those every round of both sides passed below its knee, else
//! the common step), the app CPU per ok request there, and the hypervisor's steal during the
//! round. Pure.
use crate::analyze::model::{Report, StepReport, Verdict};
use crate::rundir::Manifest;
use serde::Serialize;

/// One round given to `compare_rounds`: label, report, manifest.
pub(crate) type Run<'a> = (&'a str, &'a Report, &'a Manifest);

/// A round as the comparison reads it: its label and its report.
pub(crate) type RoundIn<'a> = (&'a str, &'a Report);

/// Where a round's max sustainable rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RateBasis {
    /// `perflab run --refine`: the bisected rate (`report.refine.max_sustainable`).
    Refined,
    /// The last passing step below the knee (transient steps before it allowed).
    PassingStep,
}

/// The figures of one side's rounds, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rounds {
    pub runs: Vec<String>,
    /// Per round: the refined max sustainable rate, else the last passing step below the knee
    /// (0 when no step passed).
    pub max_sustainable: Vec<u32>,
    pub max_sustainable_from: Vec<RateBasis>,
    pub knee: Vec<Option<u32>>,
    /// Per round: app-box CPU ms per ok response over the CPU signal's steps (`cpu_steps`:
    /// the geometric mean when they are several), when every round has samples there.
    pub cpu_ms_per_ok: Vec<f64>,
    pub cpu_median: Option<f64>,
    /// `(max - min) / median` of `cpu_ms_per_ok`, in %.
    pub cpu_spread_pct: Option<f64>,
    /// Per round: the hypervisor's steal on the app's and the database's CPUs, in % of their
    /// time (`steal_pct`; None in runs recorded before steal was sampled).
    pub steal_pct: Vec<Option<f64>>,
    /// The rounds whose steal is over `STEAL_FLAG_PCT`.
    pub steal_flagged: Vec<String>,
    /// Per round: the median latency of ok requests at the latency signal's step
    /// (`latency_step`); None (null) for a round left out of that signal, having passed no
    /// step (`latency_rounds`).
    pub latency_ms: Vec<Option<f64>>,
    pub latency_median: Option<f64>,
    /// Work injected on purpose in any round (`stack.<lab>.burn_us`).
    pub injected: Vec<String>,
}

/// A round's max sustainable rate and where it comes from.
pub(crate) fn max_sustainable(r: &Report) -> (u32, RateBasis) {
    match r.refine.as_ref().and_then(|f| f.max_sustainable) {
        Some(v) => (v, RateBasis::Refined),
        None => (
            r.passing_below_knee.or(r.last_passing).unwrap_or(0),
            RateBasis::PassingStep,
        ),
    }
}

/// A step counts for the CPU signal when at most this share of its requests failed (failed
/// requests spend CPU without an ok response, inflating CPU per ok request).
pub(crate) const MAX_FAILED_RATE: f64 = 0.05;

/// The common step: the lowest step measured with CPU samples, and at most
/// `MAX_FAILED_RATE` failed, in every round of both sides (see the module doc of `compare`
/// for why the lowest, and why not only passing steps).
pub(crate) fn common_step(a: &[RoundIn], b: &[RoundIn]) -> Option<u32> {
    let all: Vec<RoundIn> = a.iter().chain(b).copied().collect();
    lowest_step_where(&all, |s| s.failed_rate <= MAX_FAILED_RATE)
}

/// The lowest step of the first round measured with CPU samples, and passing `keep`, in every
/// round given.
pub(crate) fn lowest_step_where(
    rounds: &[RoundIn],
    keep: impl Fn(&crate::analyze::model::StepReport) -> bool,
) -> Option<u32> {
    let (_, first) = rounds.first()?;
    let measured = |r: &Report, t: u32| {
        r.steps
            .iter()
            .any(|s| s.target == t && keep(s) && s.ms_cpu_per_ok.is_some_and(|v| v > 0.0))
    };
    first
        .steps
        .iter()
        .map(|s| s.target)
        .filter(|t| rounds.iter().all(|(_, r)| measured(r, *t)))
        .min()
}

/// CPU ms per ok response of a round at step `t` (None when not measured there).
pub(crate) fn cpu_at(r: &Report, t: u32) -> Option<f64> {
    r.steps
        .iter()
        .find(|s| s.target == t)
        .and_then(|s| s.ms_cpu_per_ok)
}

/// Steps that passed below the knee (not merely recovered), with CPU measured, in every round
/// given.
pub(crate) fn passing_steps(rounds: &[RoundIn]) -> Vec<u32> {
    let Some((_, first)) = rounds.first() else {
        return Vec::new();
    };
    let passed = |r: &Report, t: u32| {
        r.knee.is_none_or(|k| t < k)
            && r.steps.iter().any(|s| {
                s.target == t
                    && s.verdict == Verdict::Pass
                    && s.ms_cpu_per_ok.is_some_and(|v| v > 0.0)
            })
    };
    first
        .steps
        .iter()
        .map(|s| s.target)
        .filter(|t| rounds.iter().all(|(_, r)| passed(r, *t)))
        .collect()
}

/// The steps of the CPU signal: every step that each round of both sides passed below its knee,
/// when there are two or more (the signal is then their geometric mean: the busier steps are
/// the steadier ones, docs/regression.md); else the common step alone, or none.
pub(crate) fn cpu_steps(a: &[RoundIn], b: &[RoundIn]) -> Vec<u32> {
    let all: Vec<RoundIn> = a.iter().chain(b).copied().collect();
    let passing = passing_steps(&all);
    if passing.len() >= 2 {
        return passing;
    }
    common_step(a, b).into_iter().collect()
}

/// A round's CPU signal over `steps`: its CPU ms per ok response at the one step, or the
/// geometric mean over several (None when a step has no measurement).
pub(crate) fn cpu_over(r: &Report, steps: &[u32]) -> Option<f64> {
    match steps {
        [] => None,
        [t] => cpu_at(r, *t),
        _ => {
            let logs = steps
                .iter()
                .map(|t| cpu_at(r, *t).filter(|v| *v > 0.0).map(f64::ln))
                .collect::<Option<Vec<f64>>>()?;
            Some((logs.iter().sum::<f64>() / logs.len() as f64).exp())
        }
    }
}

/// The latency signal's step: the busiest step that every round of both sides passed below its
/// knee (a latency at a failing step is the queue's, unbounded; the busiest of the passing
/// ones had the least noise of the candidates, `signals::latency_noise`), among the rounds
/// that passed any step at all: a round that passed none (on a busy host, the lowest step's
/// p95 over its SLO) has no latency a passing step could give, and is left out of this signal
/// alone (`latency_rounds`) instead of removing it for the whole batch. None when the rounds
/// kept share no passing step.
pub(crate) fn latency_step(a: &[RoundIn], b: &[RoundIn]) -> Option<u32> {
    kept_passing_steps(a, b).last().copied()
}

/// The steps every round of both sides that passed any step passed (`passing_steps` over
/// the rounds `passed_any` keeps).
fn kept_passing_steps(a: &[RoundIn], b: &[RoundIn]) -> Vec<u32> {
    let kept: Vec<RoundIn> = a
        .iter()
        .chain(b)
        .filter(|r| passed_any(r))
        .copied()
        .collect();
    passing_steps(&kept)
}

/// Whether a round passed any step below its knee, with CPU measured (what `passing_steps`
/// asks of a step).
pub(crate) fn passed_any(r: &RoundIn) -> bool {
    !passing_steps(std::slice::from_ref(r)).is_empty()
}

/// Per round, its latency at the latency signal's step `lat`: None for a round left out
/// (it passed no step) or not measured there.
pub(crate) fn latency_rounds(side: &[RoundIn], lat: Option<u32>) -> Vec<Option<f64>> {
    let read = lat.map(LatencyRead::BusiestMedian);
    latency_read_rounds(side, read.as_ref())
}

/// How the latency signal reads a round (`latency_read` chooses).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LatencyRead {
    /// The median of ok requests at the busiest step every kept round passed (`latency_step`):
    /// rounds and turns, where a side runs alone.
    BusiestMedian(u32),
    /// The p95 of ok requests over the steps every kept round passed, their geometric mean:
    /// pairs loaded together, where each side's requests also wait behind its twin's.
    PassingP95(Vec<u32>),
}

impl LatencyRead {
    /// `stat()` of a `PassingP95` read.
    pub(crate) const P95: &'static str = "p95";

    /// Its steps, lowest first.
    pub(crate) fn steps(&self) -> Vec<u32> {
        match self {
            LatencyRead::BusiestMedian(t) => vec![*t],
            LatencyRead::PassingP95(v) => v.clone(),
        }
    }

    pub(crate) fn stat(&self) -> &'static str {
        match self {
            LatencyRead::BusiestMedian(_) => "median",
            LatencyRead::PassingP95(_) => Self::P95,
        }
    }

    /// A round's value (None when a step is not measured).
    fn of(&self, r: &Report) -> Option<f64> {
        match self {
            LatencyRead::BusiestMedian(t) => latency_at(r, *t),
            LatencyRead::PassingP95(v) => {
                let logs = v
                    .iter()
                    .map(|t| ok_ms_at(r, *t, |s| s.ok_p95_ms).map(f64::ln))
                    .collect::<Option<Vec<f64>>>()?;
                (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
            }
        }
    }
}

/// The latency signal's read of both sides: over the rounds that passed any step, the busiest
/// step they all passed with its median, or (`together`: every round's pair loaded together)
/// the p95 over every step they all passed. Chosen on the candidates' paired noise: on the
/// rounds of 2026-12-03/04 the busiest step's median (`signals::latency_noise`); loaded
/// together, on a 10-pair A/A design batch of 2026-12-06 (not a fixture of the held-out set),
/// the p95 over the passing steps (5.8 % against 42 % for the busiest step's median: each app
/// waits behind its twin on the shared core, and the median flips between waiting and not;
/// docs/regression.md). None when the rounds kept share no passing step.
pub(crate) fn latency_read(a: &[RoundIn], b: &[RoundIn], together: bool) -> Option<LatencyRead> {
    if !together {
        return latency_step(a, b).map(LatencyRead::BusiestMedian);
    }
    let steps = kept_passing_steps(a, b);
    (!steps.is_empty()).then_some(LatencyRead::PassingP95(steps))
}

/// Per round, its latency as `read` reads it: None for a round left out (it passed no step)
/// or not measured there.
pub(crate) fn latency_read_rounds(
    side: &[RoundIn],
    read: Option<&LatencyRead>,
) -> Vec<Option<f64>> {
    side.iter()
        .map(|r| read.filter(|_| passed_any(r)).and_then(|l| l.of(r.1)))
        .collect()
}

/// The median latency of ok requests (ms) of a round at step `t` (None when not measured).
pub(crate) fn latency_at(r: &Report, t: u32) -> Option<f64> {
    ok_ms_at(r, t, |s| s.ok_p50_ms)
}

/// A latency of ok requests (ms) of a round at step `t`, as `pick` reads it from the step
/// (None when not measured).
fn ok_ms_at(r: &Report, t: u32, pick: fn(&StepReport) -> f64) -> Option<f64> {
    r.steps
        .iter()
        .find(|s| s.target == t)
        .map(pick)
        .filter(|v| *v > 0.0)
}

/// "at 50 rps" for one step, "over 50-175 rps (the 5 steps every round passed; geometric
/// mean)" for several: where the CPU signal was read.
pub(crate) fn steps_text(steps: &[u32], unit: &str) -> String {
    match steps {
        [] => "at no common step".into(),
        [t] => format!("at {t} {unit}"),
        [lo, .., hi] => format!(
            "over {lo}-{hi} {unit} (the {} steps every round passed; geometric mean)",
            steps.len()
        ),
    }
}

/// The rounds table's CPU column head: "CPU ms/ok", "CPU ms/ok @50" or "CPU ms/ok @50-175".
pub(crate) fn cpu_head(steps: &[u32]) -> String {
    match steps {
        [] => "CPU ms/ok".into(),
        [t] => format!("CPU ms/ok @{t}"),
        [lo, .., hi] => format!("CPU ms/ok @{lo}-{hi}"),
    }
}

pub(crate) fn median(v: &[f64]) -> Option<f64> {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some((s[n / 2 - 1] + s[n / 2]) / 2.0),
    }
}

/// `(max - min) / median` in %.
pub(crate) fn spread_pct(v: &[f64]) -> Option<f64> {
    let m = median(v).filter(|m| *m > 0.0)?;
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    Some((max - min) / m * 100.0)
}

/// A round is flagged when the hypervisor stole more than this share of the app's or the
/// database's CPUs, in %: the share that makes a step host-limited in its report.
pub(crate) const STEAL_FLAG_PCT: f64 = crate::analyze::samples::HOST_LIMITED_PCT;

/// The hypervisor's steal during a round, in % of the stolen CPUs' time: per step the higher of
/// the app's and the database's pinned CPUs' steal (`server.app_cpus`, `server.db_cpus`),
/// averaged over the steps. Reports made before that split keep only the host-wide figure
/// (`checks.host_share.steal_cores`, summed over the CPUs): over the online CPUs, which on a
/// host whose app and database CPUs are all its CPUs (2 CPUs) is the same thing.
pub(crate) fn steal_pct(r: &Report, m: &Manifest) -> Option<f64> {
    let per_step: Vec<f64> = r
        .steps
        .iter()
        .filter_map(|s| {
            let w = s.server.as_ref()?;
            let app = w.app_cpus.as_ref().and_then(|c| c.steal_pct);
            let db = w.db_cpus.as_ref().and_then(|c| c.steal_pct);
            app.into_iter().chain(db).reduce(f64::max)
        })
        .collect();
    if !per_step.is_empty() {
        return Some(per_step.iter().sum::<f64>() / per_step.len() as f64);
    }
    let cores = r.checks.host_share.as_ref()?.steal_cores?;
    Some(cores / m.host.online_cpu_count.max(1) as f64 * 100.0)
}

/// One side's figures; `steps` are the CPU signal's steps of both sides (`cpu_steps`), `lat`
/// how the latency signal reads a round (`latency_read`).
pub(crate) fn rounds(
    side: &[Run],
    injected: Vec<String>,
    steps: &[u32],
    lat: Option<&LatencyRead>,
) -> Rounds {
    let rates: Vec<(u32, RateBasis)> = side.iter().map(|(_, r, _)| max_sustainable(r)).collect();
    let cpu: Vec<f64> = side
        .iter()
        .filter_map(|(_, r, _)| cpu_over(r, steps))
        .collect();
    let steal: Vec<Option<f64>> = side.iter().map(|(_, r, m)| steal_pct(r, m)).collect();
    let ins: Vec<RoundIn> = side.iter().map(|(l, r, _)| (*l, *r)).collect();
    let latency = latency_read_rounds(&ins, lat);
    let present: Vec<f64> = latency.iter().flatten().copied().collect();
    Rounds {
        runs: side.iter().map(|(l, _, _)| l.to_string()).collect(),
        max_sustainable: rates.iter().map(|r| r.0).collect(),
        max_sustainable_from: rates.iter().map(|r| r.1).collect(),
        knee: side.iter().map(|(_, r, _)| r.knee).collect(),
        cpu_median: median(&cpu),
        cpu_spread_pct: spread_pct(&cpu),
        cpu_ms_per_ok: cpu,
        steal_flagged: side
            .iter()
            .zip(&steal)
            .filter(|(_, s)| s.is_some_and(|s| s > STEAL_FLAG_PCT))
            .map(|((l, _, _), _)| l.to_string())
            .collect(),
        steal_pct: steal,
        latency_median: median(&present),
        latency_ms: latency,
        injected,
    }
}

/// The lowest step target of the first round (what a round with no passing step is below).
pub(crate) fn lowest_step(side: &[RoundIn]) -> u32 {
    side.first()
        .and_then(|(_, r)| r.steps.iter().map(|s| s.target).min())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Report {
        crate::rundir::report::parse(include_str!(
            "../../../tests/fixtures/compare/2a-base/2a/20261130T222220Z-r1/report.json"
        ))
        .unwrap()
    }

    fn manifest() -> Manifest {
        Manifest::parse(include_str!(
            "../../../tests/fixtures/compare/2a-base/2a/20261130T222220Z-r1/manifest.json"
        ))
        .unwrap()
    }

    #[test]
    fn the_common_step_is_the_lowest_measured_everywhere_with_few_failures() {
        let a = recorded();
        let mut b = recorded();
        let targets: Vec<u32> = a.steps.iter().map(|s| s.target).collect();
        assert_eq!(targets[..2], [50, 100]);
        assert_eq!(common_step(&[("a", &a)], &[("b", &b)]), Some(50));
        // a round that lost 20 % of its requests at 50 rps moves it up a step
        b.steps[0].failed_rate = 0.2;
        assert_eq!(common_step(&[("a", &a)], &[("b", &b)]), Some(100));
        // a round without CPU samples leaves no common step
        for s in &mut b.steps {
            s.ms_cpu_per_ok = None;
        }
        assert_eq!(common_step(&[("a", &a)], &[("b", &b)]), None);
        let m = manifest();
        let r = rounds(
            &[("a", &a, &m)],
            Vec::new(),
            &[50],
            Some(&LatencyRead::BusiestMedian(50)),
        );
        assert_eq!(r.cpu_ms_per_ok.len(), 1);
        assert_eq!(r.max_sustainable, [125]);
        assert_eq!(r.max_sustainable_from, [RateBasis::PassingStep]);
        assert_eq!(lowest_step(&[("a", &a)]), 50);
    }

    /// A round whose steps 50-150 rps passed below a knee at 175, with CPU ms per ok `cpu`.
    fn passed_to_150(cpu: [f64; 4]) -> Report {
        let mut r = recorded();
        r.steps.truncate(4);
        r.knee = Some(175);
        for (s, (t, c)) in r
            .steps
            .iter_mut()
            .zip([50, 100, 125, 150].into_iter().zip(cpu))
        {
            s.target = t;
            s.verdict = Verdict::Pass;
            s.failed_rate = 0.0;
            s.ms_cpu_per_ok = Some(c);
        }
        r
    }

    /// Loaded together the latency is the p95 over the steps every round passed (geometric
    /// mean); otherwise the median at the busiest of them.
    #[test]
    fn pairs_loaded_together_read_the_p95_over_the_passing_steps() {
        let mut a = passed_to_150([8.0, 4.0, 4.0, 2.0]);
        let b = passed_to_150([6.0, 5.0, 5.0, 5.0]);
        for (s, p95) in a.steps.iter_mut().zip([10.0, 20.0, 40.0, 80.0]) {
            s.ok_p95_ms = p95;
        }
        let (ra, rb) = ([("a", &a)], [("b", &b)]);
        let alone = latency_read(&ra, &rb, false).unwrap();
        assert_eq!(alone, LatencyRead::BusiestMedian(150));
        let together = latency_read(&ra, &rb, true).unwrap();
        assert_eq!(together, LatencyRead::PassingP95(vec![50, 100, 125, 150]));
        assert_eq!((alone.stat(), together.stat()), ("median", "p95"));
        let v = latency_read_rounds(&ra, Some(&together))[0].unwrap();
        assert!((v - 640_000f64.powf(0.25)).abs() < 1e-9, "{v}");
        assert_eq!(
            latency_read_rounds(&ra, Some(&alone)),
            [Some(a.steps[3].ok_p50_ms)]
        );
        // a step without a p95 leaves the round without a value
        a.steps[1].ok_p95_ms = 0.0;
        assert_eq!(latency_read_rounds(&[("a", &a)], Some(&together)), [None]);
    }

    #[test]
    fn the_cpu_signal_is_the_geometric_mean_over_the_steps_every_round_passed() {
        let mut a = passed_to_150([8.0, 4.0, 4.0, 2.0]);
        let mut b = passed_to_150([6.0, 5.0, 5.0, 5.0]);
        assert_eq!(cpu_steps(&[("a", &a)], &[("b", &b)]), [50, 100, 125, 150]);
        // the latency signal reads the busiest of them
        assert_eq!(latency_step(&[("a", &a)], &[("b", &b)]), Some(150));
        assert_eq!(latency_at(&a, 150), Some(a.steps[3].ok_p50_ms));
        assert!((cpu_over(&a, &[50, 100, 125, 150]).unwrap() - 4.0).abs() < 1e-12);
        assert_eq!(
            cpu_over(&a, &[50]),
            Some(8.0),
            "one step: its value as read"
        );
        assert_eq!(cpu_over(&a, &[]), None);
        // a step one round failed (or recovered from) leaves the others
        b.steps[2].verdict = Verdict::Transient;
        assert_eq!(cpu_steps(&[("a", &a)], &[("b", &b)]), [50, 100, 150]);
        assert!((cpu_over(&a, &[50, 100, 150]).unwrap() - 64f64.cbrt()).abs() < 1e-12);
        // steps at or above a round's knee do not count
        b.knee = Some(100);
        assert_eq!(cpu_steps(&[("a", &a)], &[("b", &b)]), [50]);
        assert_eq!(latency_step(&[("a", &a)], &[("b", &b)]), Some(50));
        // fewer than two shared passing steps: the common step, as before
        b.steps[0].verdict = Verdict::Fail;
        assert_eq!(cpu_steps(&[("a", &a)], &[("b", &b)]), [50]);
        b.steps[0].failed_rate = 0.2;
        assert_eq!(cpu_steps(&[("a", &a)], &[("b", &b)]), [100]);
        // b passed no step now: it is left out of the latency signal, a's busiest step stays
        assert_eq!(latency_step(&[("a", &a)], &[("b", &b)]), Some(150));
        assert_eq!(latency_rounds(&[("b", &b)], Some(150)), [None]);
        assert_eq!(
            latency_rounds(&[("a", &a)], Some(150)),
            [Some(a.steps[3].ok_p50_ms)]
        );
        // rounds that each passed a step, but none in common: no latency step
        let mut c = passed_to_150([6.0, 5.0, 5.0, 5.0]);
        for s in &mut c.steps[1..] {
            s.verdict = Verdict::Fail;
        }
        a.steps[0].verdict = Verdict::Fail;
        a.knee = None;
        for s in &mut a.steps[2..] {
            s.verdict = Verdict::Fail;
        }
        assert_eq!(
            latency_step(&[("a", &a)], &[("c", &c)]),
            None,
            "no step passed by all the rounds kept"
        );
        a.steps[0].verdict = Verdict::Pass;
        let m = manifest();
        let r = rounds(&[("a", &a, &m)], Vec::new(), &[50, 100, 125, 150], None);
        assert!((r.cpu_ms_per_ok[0] - 4.0).abs() < 1e-12);
        assert_eq!(steps_text(&[50], "rps"), "at 50 rps");
        assert_eq!(
            steps_text(&[50, 100, 150], "rps"),
            "over 50-150 rps (the 3 steps every round passed; geometric mean)"
        );
        assert_eq!(
            [cpu_head(&[]), cpu_head(&[50]), cpu_head(&[50, 100, 150])],
            ["CPU ms/ok", "CPU ms/ok @50", "CPU ms/ok @50-150"]
        );
    }

    #[test]
    fn steal_is_a_share_of_each_cpu_and_high_steal_is_flagged() {
        let mut a = recorded();
        let m = manifest();
        // 0.0199 cores stolen over the host's 2 CPUs: 1.0 % of each
        let s = steal_pct(&a, &m).unwrap();
        assert!((s - 0.995).abs() < 0.01, "{s}");
        let r = rounds(&[("a", &a, &m)], Vec::new(), &[], None);
        assert!(r.steal_flagged.is_empty());
        a.checks.host_share.as_mut().unwrap().steal_cores = Some(0.3);
        let r = rounds(
            &[("a", &a, &m), ("b", &recorded(), &m)],
            Vec::new(),
            &[],
            None,
        );
        assert_eq!(r.steal_flagged, ["a"]);
        assert_eq!(r.steal_pct[0], Some(15.0));
        // runs recorded before steal was sampled: unknown
        a.checks.host_share.as_mut().unwrap().steal_cores = None;
        assert_eq!(steal_pct(&a, &m), None);
        // the split of the pinned CPUs, where the report has it, wins: per step the higher of
        // the app's and the database's steal, averaged over the steps
        let split = |steal: f64| crate::analyze::samples::CpuSplit {
            steal_pct: Some(steal),
            ..Default::default()
        };
        for (i, s) in a.steps.iter_mut().enumerate() {
            let w = s.server.get_or_insert_with(Default::default);
            w.app_cpus = Some(split(4.0 * i as f64));
            w.db_cpus = Some(split(6.0));
        }
        // steps 0-3: max(0, 6), max(4, 6), max(8, 6), max(12, 6) = 6, 6, 8, 12
        assert_eq!(steal_pct(&a, &m), Some(8.0));
    }

    #[test]
    fn median_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let s = spread_pct(&[3.8, 4.0, 4.2]).unwrap();
        assert!((s - 10.0).abs() < 1e-9, "{s}");
        assert_eq!(spread_pct(&[]), None);
    }
}
