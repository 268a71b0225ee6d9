//! `compare`'s second deciding signal: the latency at a fixed busy step, the median of ok
//! requests at the busiest step every round of both sides passed below its knee
//! (`rounds::latency_step`), B/A with its interval by the same test as the CPU signal (paired
//! or not) at its share of the false-alarm budget (`Settings::per_signal`); and how it joins
//! the CPU and capacity verdict (`join`): a verdict names the signals that moved. Of the
//! candidates (p95, mean, median of ok requests; at the lowest step, the busiest passing one,
//! or over the passing steps) the median at the busiest passing step had the least
//! round-to-round noise on the recorded batches the rule was made from
//! (`signals::latency_noise`, docs/regression.md); pairs loaded together read the p95 over the
//! passing steps instead (`rounds::latency_read`). `same` asks the latency's interval to lie
//! within its own margin (`LATENCY_MARGIN_PCT`). Pure.
use super::paired::Pairing;
use super::rounds::{LatencyRead, Rounds};
use super::sequential::{Plan, Settings};
use super::verdict::{Measured, Signal, Verdict, ratio_text, step_signal};

/// A round's median latency is not known better than this (SD of the logs).
pub(crate) const LATENCY_SD_FLOOR: f64 = 0.01;

/// The latency's own equivalence margin, in %: `same` needs the latency's interval within
/// ±this (or ±`--margin` when that is wider), where the CPU's is ±`--margin`. A latency is
/// read near the knee or over steps up to it, where queueing multiplies any change of service
/// time or of the host's seconds: the busiest step's median had 10-12 % paired noise on the
/// A/A batches loaded together (against 1-2.5 % for the CPU) and could not be called the same
/// at ±5 % within a plan of 10 pairs; the p95 over the passing steps that replaced it there
/// still reads 4-10 %. The value is the latency change the verdict is required to find
/// (+20 % at unchanged CPU, issue 39; docs/regression.md), not a fit to any batch: `same`
/// claims that no latency change of that size happened, and says so.
pub const LATENCY_MARGIN_PCT: f64 = 20.0;

/// The settings the latency signal is tested with: its share of the budget
/// (`Settings::per_signal`) and its own margin (`LATENCY_MARGIN_PCT`).
pub fn settings(s: &Settings) -> Settings {
    Settings {
        margin_pct: s.margin_pct.max(LATENCY_MARGIN_PCT),
        ..s.per_signal()
    }
}

/// The latency of ok requests as `rounds::LatencyRead` reads it, both sides: `step` its lowest
/// step and `steps` all of them (None, empty: no step every kept round passed), `stat` the
/// statistic, medians and the test as the CPU signal has them.
pub type LatencySignal = super::verdict::CpuSignal;

/// The latency signal from both sides' per-round latencies at `step`, paired or not as
/// `pairing` says, over the rounds that have one (`rounds::latency_rounds`): paired, a pair
/// with a round left out is left out whole; unpaired, the round alone.
pub(crate) fn latency_signal(
    read: Option<&LatencyRead>,
    (a, b): (&Rounds, &Rounds),
    plan: &Plan,
    pairing: &Pairing,
) -> LatencySignal {
    let steps: Vec<u32> = read.map(LatencyRead::steps).unwrap_or_default();
    let kept = kept_pairing(pairing, (&a.latency_ms, &b.latency_ms));
    let side = |r: &Rounds| {
        let values: Vec<f64> = match kept {
            // indexed by round: a left-out round's place holds a value no kept pair reads
            Pairing::Paired(..) => r.latency_ms.iter().map(|v| v.unwrap_or(1.0)).collect(),
            Pairing::Unpaired(_) => r.latency_ms.iter().flatten().copied().collect(),
        };
        Measured {
            rounds: values.len(),
            values,
            median: r.latency_median,
        }
    };
    LatencySignal {
        stat: read.map(LatencyRead::stat),
        ..step_signal(&steps, (side(a), side(b)), (plan, &kept), LATENCY_SD_FLOOR)
    }
}

/// The pairing restricted to the pairs whose two rounds both have a latency.
fn kept_pairing(pairing: &Pairing, (a, b): (&[Option<f64>], &[Option<f64>])) -> Pairing {
    match pairing {
        Pairing::Paired(pairs, turns) => {
            let (kept, turns) = pairs
                .iter()
                .zip(turns)
                .filter(|((i, j), _)| a[*i].is_some() && b[*j].is_some())
                .map(|(p, t)| (*p, *t))
                .unzip();
            Pairing::Paired(kept, turns)
        }
        Pairing::Unpaired(why) => Pairing::Unpaired(why.clone()),
    }
}

/// The rounds left out of the latency signal (they passed no step), by label.
pub(crate) fn left_out(r: &Rounds) -> Vec<&str> {
    r.runs
        .iter()
        .zip(&r.latency_ms)
        .filter(|(_, v)| v.is_none())
        .map(|(l, _)| l.as_str())
        .collect()
}

/// Whether the signal is read over the passing steps (pairs loaded together,
/// `LatencyRead::PassingP95`) rather than at the busiest one.
pub(crate) fn over_passing_steps(l: &LatencySignal) -> bool {
    l.stat == Some(LatencyRead::P95)
}

/// Where and how the latency signal reads a round: "median of ok requests at 175 rps", "p95
/// of ok requests over 25-100 rps (geometric mean)".
pub(crate) fn read_text(l: &LatencySignal, unit: &str) -> String {
    let stat = l.stat.unwrap_or("median");
    match l.steps.as_slice() {
        [] => format!("{stat} of ok requests"),
        [s] => format!("{stat} of ok requests at {s} {unit}"),
        [first, .., last] => {
            format!("{stat} of ok requests over {first}-{last} {unit} (geometric mean)")
        }
    }
}

/// "latency (median of ok requests at 175 rps) B/A 1.21 (+21.0 %), ...".
fn text(l: &LatencySignal, unit: &str) -> String {
    match (&l.test, l.step) {
        (Some(t), Some(_)) => format!("latency ({}) {}", read_text(l, unit), ratio_text(t)),
        _ => "no latency at a step every round passed".into(),
    }
}

/// The deciding signals that moved (`cpu`, `latency`), in that order.
pub(crate) fn moved(cpu: Signal, lat: Signal) -> Vec<&'static str> {
    let m = |s: Signal| matches!(s, Signal::Worse | Signal::Better);
    [("cpu", cpu), ("latency", lat)]
        .into_iter()
        .filter(|(_, s)| m(*s))
        .map(|(n, _)| n)
        .collect()
}

/// The verdict of the CPU and capacity signals (`verdict::decide`) joined with the latency
/// signal: latency worse makes it `regressed` (better: `improved`, unless the CPU regressed),
/// naming the signal; a latency not decided keeps a `same` from being claimed.
pub(crate) fn join(
    (v, why): (Verdict, String),
    cpu: Signal,
    l: &LatencySignal,
    (unit, margin_pct): (&str, f64),
) -> (Verdict, String) {
    let lat = text(l, unit);
    let cpu_state = match cpu {
        Signal::Same => "at the same CPU per request",
        Signal::Worse => "and spends more CPU per request",
        Signal::Better => "though it spends less CPU per request",
        Signal::Unclear | Signal::Missing => "with the CPU per request not decided",
    };
    match (l.says, v) {
        (Signal::Worse, Verdict::Regressed) => {
            (v, format!("B answers slower too (latency): {why}; {lat}"))
        }
        (Signal::Worse, _) => (
            Verdict::Regressed,
            format!("B answers slower (latency) {cpu_state}: {lat}; {why}"),
        ),
        (Signal::Better, Verdict::Improved) => {
            (v, format!("B answers faster too (latency): {why}; {lat}"))
        }
        (Signal::Better, Verdict::Regressed) => (v, format!("{why}; {lat} (B faster)")),
        (Signal::Better, _) => (
            Verdict::Improved,
            format!("B answers faster (latency) {cpu_state}: {lat}; {why}"),
        ),
        (Signal::Same, Verdict::Same) => (
            v,
            format!("{why}; {lat}: the latency within ±{margin_pct} %"),
        ),
        (Signal::Unclear, Verdict::Same) => (
            Verdict::Inconclusive,
            format!(
                "the CPU per request is the same but the latency is not decided (its `same` asks ±{margin_pct} %): {why}; {lat}"
            ),
        ),
        _ => (v, format!("{why}; {lat}")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::sequential::Settings;
    use super::super::{RoundsComparison, Verdict, compare_rounds_with};
    use super::*;
    use crate::analyze::model::Report;
    use crate::rundir::Manifest;
    use std::path::PathBuf;

    /// The ten clean rounds of 2a recorded on 2026-12-04 (steps 50-175 rps passed in every one).
    fn dec04() -> Vec<(String, Report, Manifest)> {
        let dir =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compare/2a-dec04/2a");
        let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        runs.sort();
        runs.iter()
            .map(|d| {
                let m = std::fs::read_to_string(d.join("manifest.json")).unwrap();
                (
                    d.file_name().unwrap().to_string_lossy().into_owned(),
                    crate::rundir::read_report(d).unwrap(),
                    Manifest::parse(&m).unwrap(),
                )
            })
            .collect()
    }

    /// The same rounds on both sides, B's latency at every step multiplied by `lat` and its
    /// CPU per ok request by `cpu`: unpaired (B's rounds tagged as the batch's A side too), so
    /// the rounds' own spread is the noise (5.7 % for the latency, 6.4 % for the CPU).
    fn judged(lat: f64, cpu: f64) -> RoundsComparison {
        shifted(lat, cpu, false)
    }

    /// As `judged`; `paired`: B's round i tagged as the B side of pair i, so that each pair's
    /// difference is the shift alone.
    fn shifted(lat: f64, cpu: f64, paired: bool) -> RoundsComparison {
        shifted_with(lat, cpu, paired, |_| {})
    }

    /// As `shifted`, B's rounds edited by `edit` after the shift.
    fn shifted_with(
        lat: f64,
        cpu: f64,
        paired: bool,
        edit: impl Fn(&mut [(String, Report, Manifest)]),
    ) -> RoundsComparison {
        let a = dec04();
        let mut b = dec04();
        for (l, r, m) in &mut b {
            l.insert_str(0, "b-");
            if paired {
                m.measurements.compare.as_mut().unwrap().side =
                    crate::rundir::batch::CompareSide::B;
            }
            for s in &mut r.steps {
                s.ok_p50_ms *= lat;
                s.ms_cpu_per_ok = s.ms_cpu_per_ok.map(|c| c * cpu);
            }
        }
        edit(&mut b);
        let side =
            |v: &[(String, Report, Manifest)]| -> Vec<(String, Report, Manifest)> { v.to_vec() };
        let (a, b) = (side(&a), side(&b));
        let ra: Vec<super::super::Run> = a.iter().map(|(l, r, m)| (l.as_str(), r, m)).collect();
        let rb: Vec<super::super::Run> = b.iter().map(|(l, r, m)| (l.as_str(), r, m)).collect();
        compare_rounds_with(&ra, &rb, &Settings::default())
    }

    /// +20 % latency at unchanged CPU: the latency signal finds it, the CPU signal does not,
    /// and the verdict names the latency.
    #[test]
    fn a_latency_only_shift_is_found_by_the_latency_signal_and_named() {
        let c = judged(1.2, 1.0);
        assert_eq!(c.latency.step, Some(175), "{:?}", c.latency);
        assert_eq!(c.latency.says, Signal::Worse, "{}", c.why);
        assert_ne!(c.cpu.says, Signal::Worse, "{}", c.why);
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.why);
        assert_eq!(c.moved, ["latency"]);
        assert!(c.why.starts_with("B answers slower (latency)"), "{}", c.why);
        let t = c.latency.test.as_ref().unwrap();
        assert!((t.ratio - 1.2).abs() < 1e-9 && t.low > 1.0, "{t:?}");
        let text = super::super::render::text(&c);
        assert!(text.contains("moved: latency\n"), "{text}");
        assert!(
            text.contains("latency (median of ok requests) at 175 rps"),
            "{text}"
        );
        // the mirror is an improvement, named too
        let c = judged(1.0 / 1.2, 1.0);
        assert_eq!(
            (c.verdict, c.moved.clone()),
            (Verdict::Improved, vec!["latency"]),
            "{}",
            c.why
        );
        // +20 % CPU with the latency unchanged: the CPU names it, not the latency
        let c = judged(1.0, 1.2);
        assert_eq!(
            (c.verdict, c.moved.clone()),
            (Verdict::Regressed, vec!["cpu"]),
            "{}",
            c.why
        );
        // its unchanged latency (interval 0.90-1.11 over ten rounds a side) is within ±20 %
        assert_eq!(c.latency.says, Signal::Same, "{:?}", c.latency);
        // both moved: both named
        let c = judged(1.2, 1.2);
        assert_eq!(c.moved, ["cpu", "latency"]);
        assert!(
            c.why
                .starts_with("B answers slower too (latency): B spends more CPU"),
            "{}",
            c.why
        );
    }

    /// No change: neither signal moves; `same` is claimed when both are within the margin
    /// (paired rounds that differ by nothing), and not while the latency is undecided.
    #[test]
    fn no_change_moves_no_signal() {
        let c = judged(1.0, 1.0);
        assert!(c.moved.is_empty(), "{}", c.why);
        assert_eq!(c.verdict, Verdict::Inconclusive, "{}", c.why);
        let c = shifted(1.0, 1.0, true);
        assert!(c.moved.is_empty(), "{}", c.why);
        assert_eq!(c.verdict, Verdict::Same, "{}", c.why);
        assert!(c.why.ends_with("the latency within ±20 %"), "{}", c.why);
        assert_eq!(c.latency.pairing.as_deref(), Some("paired over 10 pairs"));
        // paired, +20 % latency alone: found at once, the CPU the same
        let c = shifted(1.2, 1.0, true);
        assert_eq!(
            (c.verdict, c.cpu.says, c.latency.says),
            (Verdict::Regressed, Signal::Same, Signal::Worse)
        );
        assert!(
            c.why
                .starts_with("B answers slower (latency) at the same CPU per request"),
            "{}",
            c.why
        );
        let l = LatencySignal {
            says: Signal::Unclear,
            ..c.latency.clone()
        };
        let (v, why) = join(
            (Verdict::Same, "same".into()),
            Signal::Same,
            &l,
            ("rps", LATENCY_MARGIN_PCT),
        );
        assert_eq!(v, Verdict::Inconclusive);
        assert!(why.contains("latency is not decided"), "{why}");
    }

    /// The latency's `same` is at its own ±20 % (or --margin when wider), the CPU's at
    /// --margin: an unchanged estimate whose interval reaches ±15 % is the same for the
    /// latency and undecided for the CPU; at ±25 % undecided for both; a --margin of 30 %
    /// widens both.
    #[test]
    fn the_latency_is_the_same_within_its_own_margin() {
        use super::super::sequential::{Call, call};
        let s = Settings::default();
        let half = |pct: f64| (1.0_f64 + pct / 100.0).ln();
        assert_eq!(settings(&s).margin_pct, LATENCY_MARGIN_PCT);
        assert_eq!(settings(&s).confidence, s.per_signal().confidence);
        assert_eq!(call(0.0, half(15.0), &settings(&s)), Call::Within);
        assert_eq!(call(0.0, half(15.0), &s.per_signal()), Call::Undecided);
        assert_eq!(call(0.0, half(25.0), &settings(&s)), Call::Undecided);
        let wide = Settings {
            margin_pct: 30.0,
            ..s
        };
        assert_eq!(settings(&wide).margin_pct, 30.0);
        assert_eq!(call(0.0, half(25.0), &settings(&wide)), Call::Within);
        // the rule line says both margins
        let c = shifted(1.0, 1.0, true);
        let text = super::super::render::text(&c);
        assert!(
            text.contains("same when it lies within ±5 % (the latency's within ±20 %)"),
            "{text}"
        );
    }

    /// One round that passed no step (on a busy host, its lowest step's p95 over the SLO) no
    /// longer removes the latency signal from the whole batch: paired, its pair is left out
    /// and named, and +20 % is still found over the other nine; unpaired, the round alone.
    #[test]
    fn a_round_that_passed_no_step_leaves_only_its_pair_out_of_the_latency() {
        let fail_third = |b: &mut [(String, Report, Manifest)]| {
            for s in &mut b[2].1.steps {
                s.verdict = crate::analyze::model::Verdict::Fail;
            }
        };
        let c = shifted_with(1.2, 1.0, true, fail_third);
        assert_eq!(c.latency.step, Some(175), "{:?}", c.latency);
        assert_eq!(c.latency.pairing.as_deref(), Some("paired over 9 pairs"));
        assert_eq!(c.cpu.pairing.as_deref(), Some("paired over 10 pairs"));
        assert_eq!(c.latency.says, Signal::Worse, "{}", c.why);
        assert_eq!(c.verdict, Verdict::Regressed, "{}", c.why);
        assert_eq!(c.rounds_b.latency_ms[2], None);
        assert_eq!(c.rounds_b.latency_ms.iter().flatten().count(), 9);
        let label = c.rounds_b.runs[2].clone();
        let text = super::super::render::text(&c);
        assert!(
            text.contains(&format!(
                "(left out with their pairs: {label}, which passed no step)"
            )),
            "{text}"
        );
        // unpaired: the round alone is left out, B keeps nine rounds against A's ten
        let c = shifted_with(1.2, 1.0, false, fail_third);
        assert_eq!(c.latency.says, Signal::Worse, "{}", c.why);
        let t = c.latency.test.as_ref().unwrap();
        assert!((t.ratio - 1.2).abs() < 0.05, "{t:?}");
        assert!(
            text_has_left_out(&c, &label),
            "{}",
            super::super::render::text(&c)
        );
    }

    fn text_has_left_out(c: &RoundsComparison, label: &str) -> bool {
        super::super::render::text(c)
            .contains(&format!("(left out: {label}, which passed no step)"))
    }

    /// A mixed batch (pairs 0 and 2 by turns, pair 1 by whole rounds) whose pair 0 lost a
    /// round: the kept pairing names one pair by turns and one by whole rounds, not two by
    /// turns (a count cut to the kept pairs' number named one turn too many).
    #[test]
    fn the_kept_pairing_keeps_each_pairs_own_design() {
        use crate::rundir::batch::Design::{Rounds as R, Steps as S};
        let p = Pairing::Paired(vec![(0, 0), (1, 1), (2, 2)], vec![S, R, S]);
        let (a, b) = (vec![None, Some(1.0), Some(1.0)], vec![Some(1.0); 3]);
        let kept = kept_pairing(&p, (&a, &b));
        assert_eq!(kept, Pairing::Paired(vec![(1, 1), (2, 2)], vec![R, S]));
        assert!(
            kept.text().starts_with("paired over 2 pairs (1 of "),
            "{}",
            kept.text()
        );
    }
}
