//! The simulations that measure `compare`'s verdict: rounds drawn from log-normal noise of a
//! known SD or resampled from recorded rounds (a smoothed bootstrap), a multiplicative change
//! injected on B, and the sequential procedure run as `perflab compare` runs it (a look after
//! every A/B pair from 2 rounds a side to the plan's maximum, stopping when decided). Pure and
//! seeded: the same arguments give the same figures. Paired rounds on a drifting host
//! (`PairedNoise`: a drift component shared within a pair) measure the paired test against the
//! unpaired one on the same draws. The tests in `tests/offline/compare_power.rs` and
//! the tables in docs/regression.md come from here.
use super::paired::PairedPlan;
use super::sequential::{Call, FIRST_LOOK, MAX_PLANNED_ROUNDS, Plan, Settings};
use super::stats::{Rng, mean, t_crit, t_two_sided_p, variance};
use super::verdict::CPU_SD_FLOOR;
use serde::Serialize;

/// Where simulated rounds come from: logs of the signal.
#[derive(Debug, Clone)]
pub enum Noise {
    /// Normal logs with this SD (log-normal rounds).
    LogNormal(f64),
    /// Recorded rounds' logs, resampled with a little normal jitter (bandwidth `h`, Silverman's
    /// rule) and shrunk back to the recorded SD, so that a draw keeps the rounds' mean and
    /// spread without the ties a plain bootstrap of a few rounds makes (two equal draws on a
    /// side would give an SD of 0).
    Recorded { logs: Vec<f64>, h: f64, shrink: f64 },
}

impl Noise {
    /// The smoothed bootstrap of recorded per-round values (each > 0; at least 2).
    pub fn recorded(values: &[f64]) -> Noise {
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let (h, shrink) = smoothing(&logs);
        Noise::Recorded { logs, h, shrink }
    }

    /// The SD of the logs the draws have.
    pub fn sd_log(&self) -> f64 {
        match self {
            Noise::LogNormal(s) => *s,
            Noise::Recorded { logs, .. } => {
                let n = logs.len() as f64;
                (variance(logs) * (n - 1.0) / n).sqrt()
            }
        }
    }

    fn draw(&self, rng: &mut Rng) -> f64 {
        match self {
            Noise::LogNormal(s) => s * rng.normal(),
            Noise::Recorded { logs, h, shrink } => {
                let m = mean(logs);
                let x = logs[rng.below(logs.len())];
                m + (x - m + h * rng.normal()) * shrink
            }
        }
    }
}

/// The smoothed bootstrap's jitter for values `v` (logs): Silverman's bandwidth `h` on the
/// plug-in variance (divisor n, as the bootstrap resamples it), and the factor that shrinks a
/// jittered draw back to that variance.
fn smoothing(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let var_n = variance(v) * (n - 1.0) / n;
    let h = 1.06 * var_n.sqrt() * n.powf(-0.2);
    let shrink = if var_n > 0.0 {
        1.0 / (1.0 + h * h / var_n).sqrt()
    } else {
        1.0
    };
    (h, shrink)
}

/// `planned` rounds a side, B shifted by `effect_pct`: (A's logs, B's logs).
fn draw_sides(noise: &Noise, effect_pct: f64, planned: usize, rng: &mut Rng) -> [Vec<f64>; 2] {
    let shift = (1.0 + effect_pct / 100.0).ln();
    let mut a = Vec::with_capacity(planned);
    let mut b = Vec::with_capacity(planned);
    for _ in 0..planned {
        a.push(noise.draw(rng));
        b.push(noise.draw(rng) + shift);
    }
    [a, b]
}

/// How the simulated comparisons ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    pub trials: usize,
    /// B called higher (CPU: `regressed`).
    pub higher: usize,
    /// B called lower (CPU: `improved`).
    pub lower: usize,
    /// Within ±margin (`same`).
    pub within: usize,
    /// Undecided at the plan's last look.
    pub undecided: usize,
    /// Rounds a side used, summed over the trials.
    pub rounds: usize,
}

impl Tally {
    /// Count one comparison's call and the rounds a side it used.
    pub(crate) fn add(&mut self, c: Call, rounds: usize) {
        self.rounds += rounds;
        match c {
            Call::Higher => self.higher += 1,
            Call::Lower => self.lower += 1,
            Call::Within => self.within += 1,
            Call::Undecided => self.undecided += 1,
        }
    }

    pub fn share(&self, n: usize) -> f64 {
        n as f64 / self.trials.max(1) as f64
    }
    /// Calls in the direction of the change (`effect_pct` > 0: higher; < 0: lower).
    pub fn detected(&self, effect_pct: f64) -> f64 {
        self.share(if effect_pct >= 0.0 {
            self.higher
        } else {
            self.lower
        })
    }
    /// Higher or lower: under no change, the false alarms.
    pub fn alarms(&self) -> f64 {
        self.share(self.higher + self.lower)
    }
    pub fn mean_rounds(&self) -> f64 {
        self.rounds as f64 / self.trials.max(1) as f64
    }
}

/// The sequential procedure on one pair of sides: looks after every pair from 2 rounds a side,
/// stops at the first decided call; (call, rounds a side used).
pub(crate) fn sequential(plan: &Plan, a: &[f64], b: &[f64]) -> (Call, usize) {
    let last = a.len().min(b.len());
    for n in FIRST_LOOK..=last {
        let c = plan
            .call(&a[..n], &b[..n], CPU_SD_FLOOR)
            .unwrap_or(Call::Undecided);
        if c != Call::Undecided {
            return (c, n);
        }
    }
    (Call::Undecided, last)
}

/// `trials` sequential comparisons under `settings` (its `max_rounds` is the plan).
pub fn sequential_tally(
    noise: &Noise,
    effect_pct: f64,
    settings: &Settings,
    trials: usize,
    seed: u64,
) -> Tally {
    let plan = Plan::new(settings, settings.max_rounds);
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        trials,
        ..Tally::default()
    };
    for _ in 0..trials {
        let [a, b] = draw_sides(noise, effect_pct, plan.planned_rounds, &mut rng);
        let (c, n) = sequential(&plan, &a, &b);
        t.add(c, n);
    }
    t
}

/// Detection (a call in the change's direction) of a plain comparison of the first n rounds a
/// side, for n = 2..=max_rounds (index n - 2), on the same draws for every n (common random
/// numbers), at the boundary of `settings`' plan.
pub fn per_look_detection(
    noise: &Noise,
    effect_pct: f64,
    settings: &Settings,
    trials: usize,
    seed: u64,
) -> Vec<f64> {
    let plan = Plan::new(settings, settings.max_rounds);
    let want = if effect_pct >= 0.0 {
        Call::Higher
    } else {
        Call::Lower
    };
    let mut hits = vec![0usize; plan.planned_rounds - FIRST_LOOK + 1];
    let mut rng = Rng::new(seed);
    for _ in 0..trials {
        let [a, b] = draw_sides(noise, effect_pct, plan.planned_rounds, &mut rng);
        for (i, h) in hits.iter_mut().enumerate() {
            let n = i + FIRST_LOOK;
            *h += usize::from(plan.call(&a[..n], &b[..n], CPU_SD_FLOOR) == Some(want));
        }
    }
    hits.iter().map(|h| *h as f64 / trials as f64).collect()
}

/// Detection within plans of 2..=`max_plan` rounds a side (index N - 2), each with its own
/// boundary, on the same draws for every plan (common random numbers).
pub fn per_plan_detection(
    noise: &Noise,
    effect_pct: f64,
    settings: &Settings,
    max_plan: usize,
    trials: usize,
    seed: u64,
) -> Vec<f64> {
    (FIRST_LOOK..=max_plan.min(MAX_PLANNED_ROUNDS))
        .map(|n| {
            let s = Settings {
                max_rounds: n,
                ..*settings
            };
            sequential_tally(noise, effect_pct, &s, trials, seed).detected(effect_pct)
        })
        .collect()
}

/// The smallest plan (rounds a side, up to `MAX_PLANNED_ROUNDS`) whose sequential procedure
/// detects `effect_pct` in at least `target` of the trials.
pub fn rounds_needed(
    noise: &Noise,
    effect_pct: f64,
    settings: &Settings,
    target: f64,
    trials: usize,
    seed: u64,
) -> Option<usize> {
    (FIRST_LOOK..=MAX_PLANNED_ROUNDS).find(|n| {
        let s = Settings {
            max_rounds: *n,
            ..*settings
        };
        sequential_tally(noise, effect_pct, &s, trials, seed).detected(effect_pct) >= target
    })
}

/// Detection of one plain comparison of `n` rounds a side at the per-look level `alpha` (the
/// boundary's α'), for each method: a rejection with the estimate in the change's direction
/// and at least `settings.min_effect_pct`.
pub fn fixed_n_detection(
    noise: &Noise,
    effect_pct: f64,
    settings: &Settings,
    n: usize,
    alpha: f64,
    trials: usize,
    seed: u64,
) -> [f64; 2] {
    let mut rng = Rng::new(seed);
    let mut hits = [0usize; 2];
    let min = (1.0 + settings.min_effect_pct / 100.0).ln();
    let crit_pooled = t_crit((2 * n - 2) as f64, alpha);
    for _ in 0..trials {
        let [a, b] = draw_sides(noise, effect_pct, n, &mut rng);
        let d = mean(&b) - mean(&a);
        let (va, vb) = (
            variance(&a).max(CPU_SD_FLOOR.powi(2)),
            variance(&b).max(CPU_SD_FLOOR.powi(2)),
        );
        let nf = n as f64;
        let se = ((va + vb) / nf).sqrt();
        let df_welch = (va / nf + vb / nf).powi(2)
            / ((va / nf).powi(2) / (nf - 1.0) + (vb / nf).powi(2) / (nf - 1.0));
        let toward = d.abs() >= min && (d > 0.0) == (effect_pct >= 0.0);
        hits[0] += usize::from(toward && (d / se).abs() >= crit_pooled);
        hits[1] += usize::from(toward && t_two_sided_p(d / se, df_welch) <= alpha);
    }
    hits.map(|h| h as f64 / trials as f64)
}

/// Rounds run in pairs on a drifting host: each pair shares a drift component (the host's slow
/// change lands on both its rounds), each round adds its own noise, and a linear drift
/// `trend` (log units a round, in running order) may add a bias the order within pairs
/// decides: AB every pair puts it on B, ABBA cancels it over two pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedNoise {
    /// SD of the logs' component shared by a pair's two rounds.
    pub pair_sd: f64,
    /// SD of the logs' component of each round alone.
    pub round_sd: f64,
    /// Linear drift, log units a round in running order.
    pub trend: f64,
    /// ABBA order (A1 B1, B2 A2, ...); false: A first in every pair.
    pub abba: bool,
}

impl PairedNoise {
    /// The model whose SD of the difference of two rounds' logs is `paired_pct` within a
    /// pair and `unpaired_pct` between rounds of different pairs (as measured by A/A runs):
    /// round SD = paired / sqrt(2), pair SD = sqrt(unpaired² - paired²) / sqrt(2).
    pub fn measured(paired_pct: f64, unpaired_pct: f64) -> PairedNoise {
        let (p, u) = (paired_pct / 100.0, unpaired_pct / 100.0);
        PairedNoise {
            pair_sd: ((u * u - p * p).max(0.0) / 2.0).sqrt(),
            round_sd: p / std::f64::consts::SQRT_2,
            trend: 0.0,
            abba: true,
        }
    }

    /// `planned` pairs, B shifted by `effect_pct`: (A's logs, B's logs), pair i at index i.
    pub(crate) fn draw(&self, effect_pct: f64, planned: usize, rng: &mut Rng) -> [Vec<f64>; 2] {
        let shift = (1.0 + effect_pct / 100.0).ln();
        let (mut a, mut b) = (Vec::with_capacity(planned), Vec::with_capacity(planned));
        for i in 0..planned {
            let shared = self.pair_sd * rng.normal();
            // running positions of the pair's two rounds; ABBA: every second pair B first
            let (first, second) = ((2 * i) as f64, (2 * i + 1) as f64);
            let (ta, tb) = if self.abba && i % 2 == 1 {
                (second, first)
            } else {
                (first, second)
            };
            a.push(shared + self.round_sd * rng.normal() + self.trend * ta);
            b.push(shared + self.round_sd * rng.normal() + self.trend * tb + shift);
        }
        [a, b]
    }
}

/// `trials` sequential comparisons of paired rounds (looks after every pair from 2 to the
/// plan's maximum), judged by the paired test (`paired` true) or the unpaired one on the
/// same draws.
pub fn paired_tally(
    noise: &PairedNoise,
    effect_pct: f64,
    settings: &Settings,
    paired: bool,
    (trials, seed): (usize, u64),
) -> Tally {
    let plan = Plan::new(settings, settings.max_rounds);
    let pplan = PairedPlan::new(settings, settings.max_rounds);
    let mut rng = Rng::new(seed);
    let mut t = Tally {
        trials,
        ..Tally::default()
    };
    for _ in 0..trials {
        let [a, b] = noise.draw(effect_pct, plan.planned_rounds, &mut rng);
        let (c, n) = if paired {
            let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
            paired_sequential(&pplan, &d)
        } else {
            sequential(&plan, &a, &b)
        };
        t.add(c, n);
    }
    t
}

/// The sequential procedure on per-pair differences `d`: (call, pairs used).
pub(crate) fn paired_sequential(plan: &PairedPlan, d: &[f64]) -> (Call, usize) {
    for n in FIRST_LOOK..=d.len() {
        let c = plan.call(&d[..n], CPU_SD_FLOOR).unwrap_or(Call::Undecided);
        if c != Call::Undecided {
            return (c, n);
        }
    }
    (Call::Undecided, d.len())
}

/// `trials` simulated CI runs of a matrix (`compare GROUP`) of `rows` rows of `signals`
/// deciding signals each under no change: each signal of each row its own paired rounds
/// (independent: the α split's worst case), each judged by the paired sequential test at
/// `settings` (what each signal is tested at: the family's per-signal settings, or the
/// matrix's own to see what no split would do) up to its own first decision (a row stops at
/// its first decided signal, so this counts at least the looks that ship). The share of runs
/// that exit 1 (any `regressed`) and that hold any false decided change (`regressed` or
/// `improved`).
pub fn family_alarms(
    noise: &PairedNoise,
    (rows, signals): (usize, usize),
    settings: &Settings,
    (trials, seed): (usize, u64),
) -> (f64, f64) {
    let plan = PairedPlan::new(settings, settings.max_rounds);
    let mut rng = Rng::new(seed);
    let (mut exit_one, mut any) = (0usize, 0usize);
    for _ in 0..trials {
        let calls: Vec<Call> = (0..rows * signals)
            .map(|_| {
                let [a, b] = noise.draw(0.0, settings.max_rounds, &mut rng);
                let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
                paired_sequential(&plan, &d).0
            })
            .collect();
        exit_one += usize::from(calls.contains(&Call::Higher));
        any += usize::from(
            calls
                .iter()
                .any(|c| matches!(c, Call::Higher | Call::Lower)),
        );
    }
    let share = |k: usize| k as f64 / trials.max(1) as f64;
    (share(exit_one), share(any))
}

/// How the steal veto (`drift`) treats a real change, which raises B's steal with its busy
/// time: `trials` paired batches of `effect_pct` at `noise`, each round's steal drawn from
/// `steal` (per-round figures, % of a CPU) and B's multiplied by 1 + effect (`raised`; else
/// drawn as A's, to see what the veto costs by chance alone); at the look that decided
/// `regressed` the veto is applied as `compare` applies it (`scaled`: A's steal scaled by the
/// estimate's B/A, else compared raw). The shares of trials reported `regressed`: (with the
/// veto, without it).
pub fn steal_veto(
    noise: &PairedNoise,
    (steal, raised): (&[f64], bool),
    effect_pct: f64,
    (settings, scaled): (&Settings, bool),
    (trials, seed): (usize, u64),
) -> (f64, f64) {
    let plan = PairedPlan::new(settings, settings.max_rounds);
    let mut rng = Rng::new(seed);
    let (mut with, mut without) = (0usize, 0usize);
    let raise = if raised {
        1.0 + effect_pct / 100.0
    } else {
        1.0
    };
    for _ in 0..trials {
        let [a, b] = noise.draw(effect_pct, settings.max_rounds, &mut rng);
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let (c, n) = paired_sequential(&plan, &d);
        if c != Call::Higher {
            continue;
        }
        without += 1;
        let mut draw =
            |k: f64| -> Vec<f64> { (0..n).map(|_| steal[rng.below(steal.len())] * k).collect() };
        let (sa, sb) = (draw(1.0), draw(raise));
        let scale = if scaled { mean(&d[..n]).exp() } else { 1.0 };
        let vetoed = super::drift::Excess::of(&sa, &sb, scale).is_some_and(|e| e.beyond_noise());
        with += usize::from(!vetoed);
    }
    let share = |k: usize| k as f64 / trials.max(1) as f64;
    (share(with), share(without))
}

/// The early stop's bias: `trials` paired batches of `effect_pct` at `noise`, each judged
/// after every pair. The batches the rule decides `regressed` before the plan's end report
/// the mean change (in %) of the first: what a maintainer reads off such a batch; every batch
/// run out to the plan's end (`--run-out`) reports the second; the third is the share of
/// batches that stopped early.
pub fn stopping_bias(
    noise: &PairedNoise,
    effect_pct: f64,
    settings: &Settings,
    (trials, seed): (usize, u64),
) -> (f64, f64, f64) {
    let plan = PairedPlan::new(settings, settings.max_rounds);
    let mut rng = Rng::new(seed);
    let (mut stopped, mut full) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        let [a, b] = noise.draw(effect_pct, settings.max_rounds, &mut rng);
        let d: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let (c, n) = paired_sequential(&plan, &d);
        if c == Call::Higher && n < d.len() {
            stopped.push(mean(&d[..n]));
        }
        full.push(mean(&d));
    }
    let pct = |v: &[f64]| (mean(v).exp() - 1.0) * 100.0;
    (
        pct(&stopped),
        pct(&full),
        stopped.len() as f64 / trials.max(1) as f64,
    )
}

/// Recorded paired batches of both deciding signals, for resampling whole pairs: each pair's
/// difference of the logs (B - A) of the CPU signal and of the latency signal, centred on each
/// signal's mean over its batch (scaled by sqrt(k / (k - 1)) for k pairs, so the centred
/// differences keep their variance): what no change looks like on that host.
#[derive(Debug, Clone)]
pub struct RecordedPairs {
    /// (CPU, latency) per pair.
    pub pairs: Vec<(f64, f64)>,
    h: (f64, f64),
    shrink: (f64, f64),
}

impl RecordedPairs {
    /// From batches, each a list of (CPU, latency) log differences of its pairs (at least 2).
    pub fn new(batches: &[Vec<(f64, f64)>]) -> RecordedPairs {
        let mut pairs = Vec::new();
        for b in batches.iter().filter(|b| b.len() >= 2) {
            let k = b.len() as f64;
            let (mc, ml) = (
                b.iter().map(|p| p.0).sum::<f64>() / k,
                b.iter().map(|p| p.1).sum::<f64>() / k,
            );
            let scale = (k / (k - 1.0)).sqrt();
            pairs.extend(b.iter().map(|(c, l)| ((c - mc) * scale, (l - ml) * scale)));
        }
        let (hc, sc) = smoothing(&pairs.iter().map(|p| p.0).collect::<Vec<_>>());
        let (hl, sl) = smoothing(&pairs.iter().map(|p| p.1).collect::<Vec<_>>());
        RecordedPairs {
            pairs,
            h: (hc, hl),
            shrink: (sc, sl),
        }
    }

    /// The SD of each signal's centred differences, in %: (CPU, latency).
    pub fn sd_pct(&self) -> (f64, f64) {
        let sd = |v: Vec<f64>| variance(&v).sqrt() * 100.0;
        (
            sd(self.pairs.iter().map(|p| p.0).collect()),
            sd(self.pairs.iter().map(|p| p.1).collect()),
        )
    }

    /// `n` pairs drawn whole (both signals of one recorded pair), smoothed, B shifted by
    /// `effects` (% of CPU, % of latency): the per-pair differences of each signal.
    fn draw(&self, effects: (f64, f64), n: usize, rng: &mut Rng) -> [Vec<f64>; 2] {
        let shift = |e: f64| (1.0 + e / 100.0).ln();
        let (mut c, mut l) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let (x, y) = self.pairs[rng.below(self.pairs.len())];
            c.push((x + self.h.0 * rng.normal()) * self.shrink.0 + shift(effects.0));
            l.push((y + self.h.1 * rng.normal()) * self.shrink.1 + shift(effects.1));
        }
        [c, l]
    }
}

/// How simulated two-signal comparisons ended: each signal's call at the look that decided
/// the verdict (or the plan's last).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TwoSignalTally {
    pub cpu: Tally,
    pub latency: Tally,
    /// Either signal higher or lower: under no change, the verdict's false alarms.
    pub any_moved: usize,
    /// Both within the margin (`same`).
    pub same: usize,
}

impl TwoSignalTally {
    pub fn share(&self, n: usize) -> f64 {
        n as f64 / self.cpu.trials.max(1) as f64
    }
}

/// `trials` sequential comparisons of whole recorded pairs resampled, B shifted by `effects`
/// (% of CPU, % of latency), judged as `compare` judges them: each signal by the paired test
/// at its share of `settings`' budget (`Settings::per_signal`; the latency at its own margin,
/// `latency::settings`), a look after every pair, the
/// batch stopping when the verdict is decided (a signal higher or lower, or both within).
pub fn two_signal_tally(
    pairs: &RecordedPairs,
    effects: (f64, f64),
    settings: &Settings,
    (trials, seed): (usize, u64),
) -> TwoSignalTally {
    use super::latency::LATENCY_SD_FLOOR;
    let plan = PairedPlan::new(&settings.per_signal(), settings.max_rounds);
    let lat_plan = PairedPlan::new(&super::latency::settings(settings), settings.max_rounds);
    let mut rng = Rng::new(seed);
    let mut t = TwoSignalTally::default();
    t.cpu.trials = trials;
    t.latency.trials = trials;
    let moved = |c: Call| matches!(c, Call::Higher | Call::Lower);
    for _ in 0..trials {
        let [c, l] = pairs.draw(effects, plan.planned_rounds, &mut rng);
        let mut end = (Call::Undecided, Call::Undecided, plan.planned_rounds);
        for n in FIRST_LOOK..=plan.planned_rounds {
            let cc = plan.call(&c[..n], CPU_SD_FLOOR).unwrap_or(Call::Undecided);
            let lc = lat_plan
                .call(&l[..n], LATENCY_SD_FLOOR)
                .unwrap_or(Call::Undecided);
            end = (cc, lc, n);
            if moved(cc) || moved(lc) || (cc == Call::Within && lc == Call::Within) {
                break;
            }
        }
        let (cc, lc, n) = end;
        t.cpu.add(cc, n);
        t.latency.add(lc, n);
        t.any_moved += usize::from(moved(cc) || moved(lc));
        t.same += usize::from(cc == Call::Within && lc == Call::Within);
    }
    t
}
