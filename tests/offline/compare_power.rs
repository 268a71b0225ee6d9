//! The measured power of `compare`'s verdict (docs/regression.md): the candidate signals'
//! noise on the recorded clean rounds (tests/fixtures/compare, every batch without `--set`
//! overrides), and the sequential procedure run on resampled recorded rounds and on log-normal
//! rounds of known SD, with multiplicative changes injected on B: false alarms, detection, and
//! detection that never falls as rounds are added. Seeded: the figures are the same every run.
use perflab::analyze::model::Report;
use perflab::rundir::Manifest;
use perflab::rundir::batch::CompareSide;
use perflab::verify::compare::paired::PairedPlan;
use perflab::verify::compare::sequential::{Plan, Settings};
use perflab::verify::compare::signals;
use perflab::verify::compare::simulate::{self, Noise, PairedNoise};
use std::path::{Path, PathBuf};

const FIX: &str = "tests/fixtures/compare";

/// A recorded round: its label, report and manifest.
struct Round(String, Report, Manifest);

/// A fixture batch holding this file is held out: recorded after the rule was set, never in
/// the pools the rule and its tables were made from.
const HELD_OUT: &str = "HELD-OUT.md";

/// The clean batches of an experiment (no `--set` override in any round), each oldest first,
/// the held-out ones left out.
fn clean_batches(exp: &str) -> Vec<(String, Vec<Round>)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(FIX)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(exp).is_dir() && !p.join(HELD_OUT).exists())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for batch in names {
        let rounds = read_rounds(&batch.join(exp));
        if !rounds.is_empty() && rounds.iter().all(|r| r.2.overrides.is_empty()) {
            let name = batch.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, rounds));
        }
    }
    out
}

/// The rounds of one experiment's folder in a batch, in their folders' order (oldest first).
fn read_rounds(dir: &Path) -> Vec<Round> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("report.json").exists())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| read(d)).collect()
}

fn read(dir: &Path) -> Round {
    let report = perflab::rundir::read_report(dir).unwrap();
    let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    let manifest = Manifest::parse(&text).unwrap();
    let label = dir.file_name().unwrap().to_string_lossy().into_owned();
    Round(label, report, manifest)
}

/// The primary signal's per-round values in one batch (its own steps: the passing steps every
/// round shares, else the common step).
fn cpu_values(batch: &[Round]) -> Vec<f64> {
    let ins: Vec<(&str, &Report)> = batch.iter().map(|r| (r.0.as_str(), &r.1)).collect();
    let v: Vec<f64> = signals::primary(&ins).iter().flatten().copied().collect();
    assert_eq!(v.len(), ins.len(), "the signal is measured in every round");
    v
}

/// Which clean batches make a pool of recorded noise.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Pool {
    /// Every clean batch.
    All,
    /// The 3-round batches (*-base, *-clean, *-clean2: 2026-11-30, the host's other load
    /// lighter).
    Small,
    /// The 16 interleaved rounds of 2026-12-01 (*-shared), while compilers used 1.5-1.7 of
    /// the host's 2 cores.
    Large,
}

/// The primary signal's round-to-round noise in `exp`'s clean batches of `pool`: each round's
/// log less its batch's mean (scaled by sqrt(k / (k - 1)) for a batch of k, so the residuals
/// keep the rounds' variance), as values around 1. Centring removes the level shifts between
/// batches made hours apart (2a read 7.0 ms on 2026-11-30 and 4.2 ms on 2026-12-01): the noise
/// within a batch is what interleaved rounds see.
fn residuals(exp: &str, pool: Pool) -> Vec<f64> {
    let mut out = Vec::new();
    for (name, batch) in clean_batches(exp) {
        let (small, large) = (batch.len() <= 3, name.ends_with("-shared"));
        if pool == Pool::Small && !small || pool == Pool::Large && !large || batch.len() < 2 {
            continue;
        }
        let logs: Vec<f64> = cpu_values(&batch).iter().map(|v| v.ln()).collect();
        let k = logs.len() as f64;
        let m = logs.iter().sum::<f64>() / k;
        let scale = (k / (k - 1.0)).sqrt();
        out.extend(logs.iter().map(|l| ((l - m) * scale).exp()));
    }
    out
}

const TRIALS: usize = 4000;

/// The recorded noise of a pool, resampled.
fn recorded(exp: &str, pool: Pool) -> Noise {
    Noise::recorded(&residuals(exp, pool))
}

/// The candidates' noise on the clean rounds of each experiment, per batch and pooled within
/// the batches, as the table in docs/regression.md: the primary signal is the candidate
/// measured in every round with the least SD of the logs within a batch.
#[test]
fn the_primary_signal_is_the_one_with_the_least_noise() {
    for exp in ["2a", "exp1"] {
        let batches = clean_batches(exp);
        assert!(batches.len() >= 3, "{exp}: at least 3 clean batches");
        let ins: Vec<Vec<(&str, &Report)>> = batches
            .iter()
            .map(|(_, b)| b.iter().map(|r| (r.0.as_str(), &r.1)).collect())
            .collect();
        for (name, b) in batches.iter().map(|b| &b.0).zip(&ins) {
            for c in signals::noise(std::slice::from_ref(b)) {
                println!("{name}: {c:?}");
            }
        }
        let table = signals::noise(&ins);
        for c in &table {
            println!("{exp} pooled within batches: {c:?}");
        }
        let [a, _, c] = [&table[0], &table[1], &table[2]];
        let sd = |x: &signals::CandidateNoise| x.within_batch_sd_log_pct.unwrap_or(f64::INFINITY);
        assert_eq!(
            a.within_batch_rounds, a.rounds,
            "{exp}: (a) exists in every round"
        );
        assert!(sd(a) < sd(c) / 3.0, "{exp}: (a) {a:?} against (c) {c:?}");
        // The verdict reads (b) in a batch whose rounds share two or more passing steps, (a)
        // elsewhere: where it reads (b), (b) must be the quieter of the two.
        let multi: Vec<Vec<(&str, &Report)>> = ins
            .iter()
            .filter(|b| signals::primary(b) != signals::values(b)[0])
            .cloned()
            .collect();
        if !multi.is_empty() {
            let t = signals::noise(&multi);
            for x in &t {
                println!("{exp}, batches sharing passing steps: {x:?}");
            }
            assert!(
                sd(&t[1]) < sd(&t[0]),
                "{exp}: over the passing steps (b) {:?} is not quieter than (a) {:?}",
                t[1],
                t[0]
            );
        }
    }
}

/// The pools of recorded noise the power is measured on, with their names.
fn pools() -> Vec<(String, Noise)> {
    let mut v = Vec::new();
    for exp in ["2a", "exp1"] {
        for (pool, what) in [
            (Pool::All, "all clean batches"),
            (Pool::Small, "3-round batches"),
            (Pool::Large, "16 interleaved rounds under load"),
        ] {
            v.push((format!("{exp}, {what}"), recorded(exp, pool)));
        }
    }
    v
}

/// Under no change, the sequential procedure (looks after every pair, 2 to 10 rounds a side)
/// calls regressed or improved in at most 1 % of the comparisons, on every pool of recorded
/// noise and on log-normal noise.
#[test]
fn no_change_raises_at_most_1_percent_false_alarms() {
    let s = Settings::default();
    let mut all = pools();
    all.push(("log-normal 3 %".into(), Noise::LogNormal(0.03)));
    all.push(("log-normal 15 %".into(), Noise::LogNormal(0.15)));
    for (name, noise) in all {
        let t = simulate::sequential_tally(&noise, 0.0, &s, 5000, 11);
        println!("{name} (SD {:.1} %): {t:?}", noise.sd_log() * 100.0);
        assert!(t.alarms() <= 0.01, "{name}: {} false alarms", t.alarms());
        // and neither direction takes the whole share
        assert!(
            t.share(t.higher) <= 0.006 && t.share(t.lower) <= 0.006,
            "{t:?}"
        );
    }
}

/// +10 % (and -10 %, +15 %, +25 %) within 10 rounds a side, where the recorded noise allows:
/// at least 80 % on the pools whose SD of logs is under 5 % (2a's, exp1's 3-round batches).
/// exp1's 16 rounds under compiler load (13 %) are out of reach: there the detection matches
/// log-normal noise of the same SD, as the table of rounds needed says.
#[test]
fn ten_percent_is_detected_within_10_rounds_where_the_noise_allows() {
    let s = Settings::default();
    for (name, noise) in pools() {
        let sd = noise.sd_log();
        for (effect, at_least) in [(10.0, 0.8), (-10.0, 0.8), (15.0, 0.95), (25.0, 0.99)] {
            let t = simulate::sequential_tally(&noise, effect, &s, 2000, 12);
            let got = t.detected(effect);
            println!(
                "{name} (SD {:.1} %) {effect:+} %: detected {got:.3}, mean rounds a side {:.1}",
                sd * 100.0,
                t.mean_rounds()
            );
            // the wrong way: rare, and only where the noise dwarfs the change
            assert!(t.detected(-effect) <= 0.005, "{name} {effect:+} %: {t:?}");
            if sd < 0.05 {
                assert!(got >= at_least, "{name} {effect:+} %: {t:?}");
            } else if effect == 10.0 {
                let model = simulate::sequential_tally(&Noise::LogNormal(sd), effect, &s, 2000, 12);
                let want = model.detected(effect);
                assert!(
                    (got - want).abs() < 0.08,
                    "{name}: {got} against log-normal {want}"
                );
            }
        }
    }
}

/// +5 % within 10 rounds a side needs a signal with about 2-2.5 % noise: 80 % at 2 %, about
/// half at 3 %.
#[test]
fn five_percent_needs_about_2_to_3_percent_noise() {
    let s = Settings::default();
    let d = |noise: &Noise| simulate::sequential_tally(noise, 5.0, &s, TRIALS, 13).detected(5.0);
    let (two, three, five) = (
        d(&Noise::LogNormal(0.02)),
        d(&Noise::LogNormal(0.03)),
        d(&Noise::LogNormal(0.05)),
    );
    println!("+5 %: log-normal 2 % {two}, 3 % {three}, 5 % {five}");
    assert!(two >= 0.8, "{two}");
    assert!((0.35..0.75).contains(&three), "{three}");
    assert!(five < three && three < two);
}

fn assert_never_falls(curve: &[f64], what: &str, tolerance: f64) {
    println!("{what}: {curve:?}");
    for w in curve.windows(2) {
        assert!(
            w[1] >= w[0] - tolerance,
            "{what}: detection fell from {} to {}",
            w[0],
            w[1]
        );
    }
}

/// Detection never falls as rounds are added, on the same draws (common random numbers): for a
/// plain comparison of the first n rounds a side (n = 2..10, the boundary of the 10-round
/// plan: strictly), and for the sequential procedure under plans of 2..10 rounds a side (a
/// longer plan looks at a stricter level: within half a point, the simulation's own noise).
#[test]
fn detection_never_falls_as_rounds_are_added() {
    let s = Settings::default();
    // changes from about the noise's SD to several times it (2a 3.7 %, exp1 10.8 %)
    for (exp, effects) in [("2a", [5.0, 10.0, 15.0]), ("exp1", [10.0, 15.0, 25.0])] {
        let noise = recorded(exp, Pool::All);
        for effect in effects {
            let what = format!("{exp} {effect:+} %");
            let per_look = simulate::per_look_detection(&noise, effect, &s, 1000, 14);
            assert_never_falls(&per_look, &format!("{what} per look"), 0.0);
            let per_plan = simulate::per_plan_detection(&noise, effect, &s, 10, 1000, 15);
            assert_never_falls(&per_plan, &format!("{what} per plan"), 0.005);
            assert!(
                per_plan[8] >= per_look[8] - 0.02,
                "looking early costs little"
            );
        }
    }
}

/// The pooled SD against Welch's at the boundary's level: as many false alarms (none to speak
/// of), and more detection at a few rounds a side, where Welch's degrees of freedom fall.
#[test]
fn the_pooled_t_test_detects_more_than_welch_at_the_same_level() {
    let s = Settings::default();
    let alpha = Plan::new(&s, 10).nominal_alpha;
    let noise = recorded("2a", Pool::Small);
    for n in [3, 5, 10] {
        let zero = simulate::fixed_n_detection(&noise, 0.0, &s, n, alpha, TRIALS, 16);
        let ten = simulate::fixed_n_detection(&noise, 10.0, &s, n, alpha, TRIALS, 17);
        println!("n {n}: false (pooled, welch) {zero:?}, +10 % {ten:?}");
        assert!(zero[0] <= 0.005 && zero[1] <= 0.005, "{zero:?}");
        assert!(ten[0] >= ten[1], "{ten:?}");
    }
    let three = simulate::fixed_n_detection(&noise, 10.0, &s, 3, alpha, TRIALS, 17);
    assert!(three[0] > three[1] + 0.05, "{three:?}");
}

/// A percentile bootstrap interval of the difference of the means of the logs, at `level`,
/// covers the true 0 (rounds of log-normal noise, `n` a side, `resamples` per interval): the
/// alternative to the t interval, measured.
fn bootstrap_coverage(n: usize, level: f64, trials: usize, resamples: usize) -> f64 {
    let mut rng = perflab::verify::compare::stats::Rng::new(21);
    let mut covered = 0;
    for _ in 0..trials {
        let a: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let b: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
        let mut d: Vec<f64> = (0..resamples)
            .map(|_| {
                let ma = (0..n).map(|_| a[rng.below(n)]).sum::<f64>() / n as f64;
                let mb = (0..n).map(|_| b[rng.below(n)]).sum::<f64>() / n as f64;
                mb - ma
            })
            .collect();
        d.sort_by(f64::total_cmp);
        let tail = ((1.0 - level) / 2.0 * resamples as f64) as usize;
        covered += usize::from(d[tail] <= 0.0 && 0.0 <= d[resamples - 1 - tail]);
    }
    covered as f64 / trials as f64
}

/// The SD of the difference of two rounds' logs measured on this host by A/A rounds: within a
/// pair (rounds run back to back) and between rounds of different pairs (docs/regression.md).
const PAIRED_SD_PCT: f64 = 3.4;
const UNPAIRED_SD_PCT: f64 = 6.1;

/// Paired rounds on a host drifting as measured (a drift component shared within a pair):
/// under no change the paired test, and the unpaired one on the same rounds, raise at most
/// 1.5 x the nominal 1 % of false alarms (5,000 seeded trials: the paired boundary is
/// calibrated to 0.85 %, so 1.5 % is about 5 standard errors above it), with ABBA order also
/// under a linear drift of 1 % a round; and the paired test detects +5 % and +10 % more often
/// than the unpaired one, in fewer rounds.
#[test]
fn paired_rounds_on_a_drifting_host_keep_false_alarms_and_detect_more() {
    let s = Settings::default();
    let measured = PairedNoise::measured(PAIRED_SD_PCT, UNPAIRED_SD_PCT);
    let trending = PairedNoise {
        trend: 0.01,
        ..measured
    };
    for (name, noise) in [("measured", measured), ("1 % a round, ABBA", trending)] {
        for paired in [true, false] {
            let t = simulate::paired_tally(&noise, 0.0, &s, paired, (5000, 31));
            println!("{name}, paired {paired}, no change: {t:?}");
            assert!(t.alarms() <= 0.015, "{name} paired {paired}: {t:?}");
        }
    }
    for effect in [5.0, 10.0] {
        let p = simulate::paired_tally(&measured, effect, &s, true, (2000, 32));
        let u = simulate::paired_tally(&measured, effect, &s, false, (2000, 32));
        println!("{effect:+} %: paired {p:?}, unpaired {u:?}");
        assert!(
            p.detected(effect) > u.detected(effect) && p.mean_rounds() < u.mean_rounds(),
            "{effect:+} %: paired {p:?} against unpaired {u:?}"
        );
    }
}

/// A suite matrix in CI under no change: 8 rows of 2 deciding signals each, each signal its
/// own paired rounds, at three noises (the measured 3.4 % paired SD, a quiet host's 1.5 %, a
/// busy one's 6 %) and with `--min-effect 0` (where the level alone guards). Each signal judged
/// at its share of the family (`Settings::family`, then `per_signal`: what `compare GROUP`
/// ships), a false exit 1 comes in at most 1 % of CI runs and a false decision of either sign
/// in at most 1.25 %; judged each at the matrix's own 99 %, as often or more (the figures are
/// printed and in docs/regression.md).
#[test]
fn a_matrix_of_rows_exits_1_under_no_change_in_at_most_1_percent_of_runs() {
    let defaults = Settings::default();
    let no_min_effect = Settings {
        min_effect_pct: 0.0,
        ..defaults
    };
    let (_, family) = defaults.family(8);
    assert!((family.row_confidence - 0.99875).abs() < 1e-12);
    assert!((family.signal_confidence - 0.999375).abs() < 1e-12);
    let signals = family.signals;
    assert_eq!(signals, 2);
    let noises = [(1.5, 3.0), (PAIRED_SD_PCT, UNPAIRED_SD_PCT), (6.0, 10.0)];
    for (s, (paired, unpaired)) in noises
        .iter()
        .map(|n| (defaults, *n))
        .chain([(no_min_effect, noises[1])])
    {
        let split = s.family(8).0.per_signal();
        let noise = PairedNoise::measured(paired, unpaired);
        let (exit1_split, any_split) =
            simulate::family_alarms(&noise, (8, signals), &split, (4000, 81));
        let (exit1_none, any_none) = simulate::family_alarms(&noise, (8, signals), &s, (4000, 81));
        println!(
            "| {paired} % | {} % | {:.2} % | {:.2} % | {:.2} % | {:.2} % |",
            s.min_effect_pct,
            exit1_none * 100.0,
            any_none * 100.0,
            exit1_split * 100.0,
            any_split * 100.0
        );
        assert!(exit1_split <= 0.01, "{paired} %: split {exit1_split}");
        assert!(
            any_split <= 0.0125,
            "{paired} %: split, either sign {any_split}"
        );
        assert!(
            any_none >= any_split,
            "{paired} %: {any_none} vs {any_split}"
        );
        if s.min_effect_pct == 0.0 {
            // the level alone guards: 8 rows x 2 signals at 99 % each alarm far beyond 1 %
            assert!(any_none >= 0.05, "{paired} %, no min effect: {any_none}");
        }
    }
}

/// A +10 % regression raises B's steal with its busy time. On steady hosts stealing 1 to 30 %
/// of a CPU, the veto as shipped (A's steal scaled by the CPU's B/A) reports the regression as
/// often as no veto would (within 1 point); compared raw, a steady 30 % host hides most of
/// them. On this project's recorded steal (2a-slowed's rounds: 0-3.8 %, a few high rounds)
/// the veto costs a few points by chance alone (B drawing the high rounds is what drift looks
/// like), and the regression's own rise adds at most 1 point to that.
#[test]
fn a_regression_that_raises_steal_is_still_reported() {
    let s = Settings::default();
    let noise = PairedNoise::measured(PAIRED_SD_PCT, UNPAIRED_SD_PCT);
    let recorded = vec![0.0, 0.0, 0.02, 0.14, 1.38, 3.76];
    let steady = |level: f64| -> Vec<f64> {
        (0..40)
            .map(|i| level * (1.0 + 0.03 * (i as f64).sin()))
            .collect()
    };
    let hosts = [
        ("recorded (2a-slowed)", recorded),
        ("steady 1 %", steady(1.0)),
        ("steady 5 %", steady(5.0)),
        ("steady 15 %", steady(15.0)),
        ("steady 30 %", steady(30.0)),
    ];
    let run = |steal: &[f64], raised, scaled| {
        simulate::steal_veto(&noise, (steal, raised), 10.0, (&s, scaled), (3000, 91))
    };
    for (name, steal) in &hosts {
        let (with, without) = run(steal, true, true);
        let (chance, _) = run(steal, false, true);
        let (raw, _) = run(steal, true, false);
        println!(
            "| {name} | {:.1} % | {:.1} % | {:.1} % | {:.1} % |",
            without * 100.0,
            with * 100.0,
            chance * 100.0,
            raw * 100.0
        );
        assert!(without > 0.5, "{name}: +10 % found in {without}");
        assert!(
            chance - with <= 0.01,
            "{name}: the rise hid {} beyond chance",
            chance - with
        );
        if name.starts_with("steady") {
            assert!(
                without - with <= 0.01,
                "{name}: the veto hid {}",
                without - with
            );
        }
        if *name == "steady 30 %" {
            assert!(without - raw >= 0.2, "{name}: raw {raw} against {without}");
        }
    }
}

/// A batch that stops at its first decided look reads the change high; batches run out to
/// the plan's end (`--run-out`) do not (docs/regression.md's table). Where the change is large
/// against the noise nearly every batch stops early and reads it right; the bias is where
/// power is low: at +10 % and 10 % paired noise (exp1 on a busy host) the early stops read
/// more than +13 %, batches run out within a point of +10 %.
#[test]
fn an_early_stop_reads_high_and_a_batch_run_out_does_not() {
    let s = Settings::default();
    for (effect, paired) in [(5.0, PAIRED_SD_PCT), (10.0, PAIRED_SD_PCT), (10.0, 10.0)] {
        let noise = PairedNoise::measured(paired, paired * 1.5);
        let (early, full, share) = simulate::stopping_bias(&noise, effect, &s, (4000, 61));
        println!(
            "| +{effect} % | {paired} % | {:.0} % | {early:+.1} % | {full:+.1} % |",
            share * 100.0
        );
        assert!(
            early >= full,
            "+{effect} % at {paired} %: early {early}, run out {full}"
        );
        assert!((full - effect).abs() < 1.0, "run out {full} at +{effect} %");
        if paired >= 10.0 {
            assert!(
                early > effect + 3.0,
                "+{effect} % at {paired} %: early {early}"
            );
        }
    }
}

/// The tables of docs/regression.md, printed (`cargo test --test offline
/// compare_power::the_tables -- --nocapture`, about a minute in a debug build), and every row
/// of its Markdown tables found verbatim in the page: the page cannot keep figures the
/// simulation no longer gives.
#[test]
fn the_tables_of_docs_regression_are_what_the_simulation_prints() {
    let mut rows = Vec::new();
    let s = Settings::default();
    println!("## measured on the recorded clean rounds (4,000 trials each, plan of 10)");
    // a share as the page writes it: 100 %, 0, else one decimal
    let pct = |x: f64| match format!("{:.1}", x * 100.0).as_str() {
        "100.0" => "100 %".to_string(),
        "0.0" => "0".to_string(),
        v => format!("{v} %"),
    };
    for (name, noise) in pools() {
        print!("{name} (SD of logs {:.1} %):", noise.sd_log() * 100.0);
        let mut cells = vec![format!("{:.1} %", noise.sd_log() * 100.0)];
        for e in [0.0, 5.0, 10.0, 15.0, -10.0] {
            let t = simulate::sequential_tally(&noise, e, &s, TRIALS, 1);
            let (hit, word) = if e == 0.0 {
                (t.alarms(), "false")
            } else {
                (t.detected(e), "detected")
            };
            print!(
                " | {e:+} %: {word} {:.1} %, same {:.1} %, {:.1} rounds",
                hit * 100.0,
                t.share(t.within) * 100.0,
                t.mean_rounds()
            );
            match e {
                0.0 => cells.extend([format!("{:.1} %", hit * 100.0), pct(t.share(t.within))]),
                10.0 => cells.push(format!("**{}** ({:.1})", pct(hit), t.mean_rounds())),
                _ => cells.push(pct(hit)),
            }
        }
        println!();
        rows.push(format!("| {name} | {} |", cells.join(" | ")));
    }
    println!("## rounds a side for 80 % detection (sequential, 2,000 trials a plan)");
    println!("| noise (SD of logs) | +5 % | +10 % | +15 % | +25 % |");
    for sd in [2.0, 3.0, 5.0, 10.0, 15.0, 25.0] {
        let noise = Noise::LogNormal(sd / 100.0);
        let cells: Vec<String> = [5.0, 10.0, 15.0, 25.0]
            .iter()
            .map(|e| {
                simulate::rounds_needed(&noise, *e, &s, 0.8, 2000, 3)
                    .map_or("> 50".to_string(), |n| n.to_string())
            })
            .collect();
        rows.push(format!("| {sd} % | {} |", cells.join(" | ")));
        println!("{}", rows.last().unwrap());
    }
    let plan = Plan::new(&s, 10);
    println!(
        "## the boundary of the default plan (alpha' {:.5})",
        plan.nominal_alpha
    );
    for n in 2..=10 {
        let b = plan.boundary(n, n);
        println!("n {n}: df {}, t {:.2}", b.df, b.t_crit);
    }
    for (conf, rounds) in [(0.99, 5), (0.99, 20), (0.95, 10), (0.999, 10)] {
        let p = Plan::new(
            &Settings {
                confidence: conf,
                max_rounds: rounds,
                ..s
            },
            rounds,
        );
        println!(
            "confidence {conf}, plan {rounds}: alpha' {:.5}",
            p.nominal_alpha
        );
    }
    let level = 1.0 - plan.nominal_alpha;
    println!("## percentile bootstrap coverage at {level:.4} (nominal), 2,000 trials");
    for n in [3, 5, 10] {
        println!("n {n}: {:.3}", bootstrap_coverage(n, level, 2000, 2000));
    }
    rows.extend(paired_tables(&s));
    assert_rows_in_page(&rows);
}

/// The paired tables of docs/regression.md: paired against unpaired on rounds drawn with a
/// drift component shared within pairs, and the paired boundary; returns the table's rows.
fn paired_tables(s: &Settings) -> Vec<String> {
    let mut rows = Vec::new();
    println!(
        "## paired against unpaired on a drifting host (SD of a difference of logs {PAIRED_SD_PCT} % within a pair, {UNPAIRED_SD_PCT} % between pairs; 4,000 trials each, plan of 10)"
    );
    println!(
        "| drift | test | no change: false | +5 % (rounds) | +10 % (rounds) | +15 % (rounds) |"
    );
    let measured = PairedNoise::measured(PAIRED_SD_PCT, UNPAIRED_SD_PCT);
    let models = [
        ("as measured, ABBA", measured),
        (
            "+ 1 % a round, ABBA",
            PairedNoise {
                trend: 0.01,
                ..measured
            },
        ),
        (
            "+ 1 % a round, AB every pair",
            PairedNoise {
                trend: 0.01,
                abba: false,
                ..measured
            },
        ),
    ];
    for (name, noise) in models {
        for paired in [true, false] {
            let cells: Vec<String> = [0.0, 5.0, 10.0, 15.0]
                .iter()
                .map(|e| {
                    let t = simulate::paired_tally(&noise, *e, s, paired, (TRIALS, 4));
                    if *e == 0.0 {
                        format!("{:.2} % ({:.1})", t.alarms() * 100.0, t.mean_rounds())
                    } else {
                        format!("{:.1} % ({:.1})", t.detected(*e) * 100.0, t.mean_rounds())
                    }
                })
                .collect();
            let test = if paired { "paired" } else { "unpaired" };
            rows.push(format!("| {name} | {test} | {} |", cells.join(" | ")));
            println!("{}", rows.last().unwrap());
        }
    }
    let plan = PairedPlan::new(s, 10);
    println!(
        "## the paired boundary of the default plan (alpha' {:.5})",
        plan.nominal_alpha
    );
    for n in 2..=10 {
        let b = plan.boundary(n);
        println!("n {n}: df {}, t {:.2}", b.df, b.t_crit);
    }
    rows
}

/// The latency signal's candidates on the clean rounds the rule was made from (held-out
/// batches left out), as docs/regression.md's table: the median of ok requests at the busiest
/// step every round passed (what the verdict reads) has the least noise within batches of the
/// candidates measured there, and the report's mean is quieter than the p95 (the choice the
/// issue put: p95 or mean).
#[test]
fn the_latency_signal_is_the_candidate_with_the_least_noise() {
    for exp in ["2a", "exp1"] {
        let batches = clean_batches(exp);
        let ins: Vec<Vec<(&str, &Report)>> = batches
            .iter()
            .map(|(_, b)| b.iter().map(|r| (r.0.as_str(), &r.1)).collect())
            .collect();
        let table = signals::latency_noise(&ins);
        let sd = |x: &signals::CandidateNoise| x.within_batch_sd_log_pct.unwrap_or(f64::INFINITY);
        for c in &table {
            println!(
                "| {exp} | {} | {:.1} % | {} of {} |",
                c.candidate,
                sd(c),
                c.within_batch_rounds,
                c.rounds
            );
        }
        let chosen = &table[7];
        assert!(chosen.candidate.ends_with("(the verdict's)"));
        assert!(chosen.within_batch_rounds >= 6, "{exp}: {chosen:?}");
        for c in &table {
            assert!(sd(chosen) <= sd(c), "{exp}: {chosen:?} against {c:?}");
        }
        // at the busiest passing step the mean is quieter than the p95
        assert!(sd(&table[4]) < sd(&table[1]), "{exp}: {table:?}");
        // the verdict's function reads the same values
        for b in &ins {
            assert_eq!(signals::latency_primary(b), signals::latency_values(b)[7]);
        }
    }
}

/// A recorded paired batch's pairs: (CPU, latency) log differences, B - A, as the verdict
/// reads them (each signal's steps chosen over the whole batch).
pub(crate) fn batch_pairs(batch: &str) -> Vec<(f64, f64)> {
    let rounds = read_rounds(&Path::new(FIX).join(batch).join("2a"));
    let tag = |r: &Round| r.2.measurements.compare.clone().unwrap();
    let side = |s: CompareSide| {
        let mut v: Vec<&Round> = rounds.iter().filter(|r| tag(r).side == s).collect();
        v.sort_by_key(|r| tag(r).pair);
        v
    };
    let (a, b) = (side(CompareSide::A), side(CompareSide::B));
    fn runs<'r>(v: &[&'r Round]) -> Vec<(&'r str, &'r Report, &'r Manifest)> {
        v.iter().map(|r| (r.0.as_str(), &r.1, &r.2)).collect()
    }
    let c = perflab::verify::compare::compare_rounds(&runs(&a), &runs(&b));
    let paired = format!("paired over {} pairs", a.len());
    let pairing = c.cpu.pairing.as_deref().unwrap_or_default();
    assert!(
        pairing == paired
            || pairing.starts_with(&format!("{paired}, each of sides loaded together")),
        "{batch}: {pairing}"
    );
    let (ra, rb) = (&c.rounds_a, &c.rounds_b);
    assert_eq!(
        (
            ra.latency_ms.iter().flatten().count(),
            rb.latency_ms.iter().flatten().count()
        ),
        (a.len(), a.len()),
        "{batch}: latency in every round"
    );
    let lat = |v: &[Option<f64>], i: usize| v[i].unwrap();
    (0..a.len())
        .map(|i| {
            (
                (rb.cpu_ms_per_ok[i] / ra.cpu_ms_per_ok[i]).ln(),
                (lat(&rb.latency_ms, i) / lat(&ra.latency_ms, i)).ln(),
            )
        })
        .collect()
}

/// The paired batches the rule was made from (2026-12-03 and 12-04: a side with burnt CPU and
/// one without; centred, each pair's difference less its batch's mean is what no change
/// looks like) and the held-out A/A batches of 2026-12-05 (HELD-OUT.md), reported only.
const DESIGN_PAIRS: [&str; 2] = ["2a-dec04-burn", "2a-slowed"];
const HELD_OUT_PAIRS: [&str; 2] = ["2a-aa-dec05", "2a-aa-dec05-quiet"];

/// The two deciding signals on recorded pairs resampled whole, with the paired test that
/// ships at its split (docs/regression.md's table): under no change the verdict's false
/// alarms (either signal) stay within 1 - confidence on the design pairs (within 1.5 x on
/// the held-out ones, reported: 1.1 %); +20 % latency at unchanged CPU is found
/// by the latency signal, and the CPU signal does not call it; +10 % CPU is found by the CPU
/// signal. Every row is found verbatim in docs/regression.md.
#[test]
fn the_second_signal_on_recorded_pairs() {
    for b in HELD_OUT_PAIRS {
        assert!(
            Path::new(FIX).join(b).join(HELD_OUT).exists(),
            "{b} is held out"
        );
    }
    for b in DESIGN_PAIRS {
        assert!(
            !Path::new(FIX).join(b).join(HELD_OUT).exists(),
            "{b} is not held out"
        );
    }
    let s = Settings::default();
    let pct = |x: f64| format!("{:.1} %", x * 100.0);
    let mut rows = Vec::new();
    for (name, batches) in [
        ("design (2a-dec04-burn, 2a-slowed)", &DESIGN_PAIRS),
        ("held out (2a-aa-dec05, -quiet)", &HELD_OUT_PAIRS),
    ] {
        let pairs = simulate::RecordedPairs::new(&batches.map(batch_pairs));
        let (sd_cpu, sd_lat) = pairs.sd_pct();
        let none = simulate::two_signal_tally(&pairs, (0.0, 0.0), &s, (TRIALS, 41));
        let lat20 = simulate::two_signal_tally(&pairs, (0.0, 20.0), &s, (TRIALS, 42));
        let cpu10 = simulate::two_signal_tally(&pairs, (10.0, 0.0), &s, (TRIALS, 43));
        let row = format!(
            "| {name} | {} | {sd_cpu:.1} % | {sd_lat:.1} % | {} | {} | {} | {} ({:.1}) | {} | {} ({:.1}) |",
            pairs.pairs.len(),
            pct(none.share(none.any_moved)),
            pct(none.cpu.alarms()),
            pct(none.latency.alarms()),
            pct(lat20.latency.detected(20.0)),
            lat20.latency.mean_rounds(),
            pct(lat20.cpu.alarms()),
            pct(cpu10.cpu.detected(10.0)),
            cpu10.cpu.mean_rounds(),
        );
        println!("{row}");
        // the design pool within the budget; the held-out one (two batches of unlike noise,
        // heavier tails than the normal the boundary is calibrated on) within 1.5 x, as the
        // paired test on a drifting host is held
        let allowed = if name.starts_with("design") {
            0.01
        } else {
            0.015
        };
        assert!(none.share(none.any_moved) <= allowed, "{name}: {none:?}");
        assert!(
            lat20.cpu.alarms() <= 0.01,
            "{name}: the CPU called a latency shift: {lat20:?}"
        );
        // the latency finds it more often than the CPU (10 points on the design pairs; on the
        // held-out ones, 23 % noisy, more often at all)
        let margin = if name.starts_with("design") {
            0.1
        } else {
            0.02
        };
        assert!(
            lat20.latency.detected(20.0) > lat20.cpu.detected(20.0) + margin,
            "{name}: {lat20:?}"
        );
        rows.push(row);
    }
    assert_rows_in_page(&rows);
}

/// Every row is found verbatim in docs/regression.md: the page cannot keep figures the
/// simulation no longer gives.
fn assert_rows_in_page(rows: &[String]) {
    let page = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/regression.md"),
    )
    .unwrap();
    let stale: Vec<&String> = rows.iter().filter(|r| !page.contains(r.as_str())).collect();
    assert!(
        stale.is_empty(),
        "docs/regression.md lacks these rows the simulation prints (paste them in): {stale:#?}"
    );
}
