//! The test behind `compare`'s verdict and its boundary: the B/A ratio of one signal's per-round
//! values with an interval from Student's t on the logs (pooled SD), at a per-look level
//! calibrated so that looking after every A/B pair, from 2 rounds a side up to the planned
//! maximum, keeps the chance of any false `regressed` or `improved` within 1 - confidence.
//! Pure and deterministic (the calibration is a seeded simulation, cached per plan).
use super::stats::{Rng, t_crit};
use serde::Serialize;
use std::sync::Mutex;

/// The first look: the SD of the logs needs 2 rounds a side.
pub(crate) const FIRST_LOOK: usize = 2;
/// The longest plan the boundary is calibrated for (rounds a side).
pub(crate) const MAX_PLANNED_ROUNDS: usize = 50;
/// Simulated paths behind each calibration (the false-alarm rate is hit within about
/// ±0.07 points at 1 %).
pub(crate) const CALIBRATION_PATHS: usize = 20_000;
pub(super) const CALIBRATION_SEED: u64 = 0x00C0_FFEE_5EED_0022;
/// The boundary is calibrated on normal logs to this share of the allowed false alarms: the
/// recorded rounds are not quite normal, and resampling them raised the false alarms of a
/// boundary calibrated to the full share by up to 15 % (exp1's 9 rounds of 2026-11-30: 0.95 %
/// against 0.83 % on normal logs, 40,000 trials; docs/regression.md).
pub(crate) const CALIBRATION_SHARE: f64 = 0.85;
/// "Rounds still needed" is searched up to this many rounds a side.
pub(crate) const ROUNDS_SEARCH_CAP: usize = 100;

/// What the verdict is asked: how sure, how small a change counts, how close is "the same",
/// and how many rounds a side the sequential comparison may take.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settings {
    /// Chance of no false `regressed` or `improved` over the whole plan (default 0.99).
    pub confidence: f64,
    /// A change counts as `regressed` (`improved`) only from this size, in % (default 3).
    pub min_effect_pct: f64,
    /// `same` when the whole interval lies within ±this, in % (default 5).
    pub margin_pct: f64,
    /// The plan: looks after every pair from 2 rounds a side up to this many (default 10).
    pub max_rounds: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            confidence: 0.99,
            min_effect_pct: 3.0,
            margin_pct: 5.0,
            max_rounds: 10,
        }
    }
}

impl Settings {
    /// Why these settings cannot be used (flag name, value and the accepted range).
    pub(crate) fn check(&self) -> Result<(), String> {
        let bad = |flag: &str, v: String, range: &str| Err(format!("{flag} {v}: give {range}"));
        if !(0.8..=0.999).contains(&self.confidence) {
            return bad(
                "--confidence",
                self.confidence.to_string(),
                "a chance between 0.8 and 0.999 (e.g. 0.99)",
            );
        }
        if !(0.0..=50.0).contains(&self.min_effect_pct) {
            return bad(
                "--min-effect",
                self.min_effect_pct.to_string(),
                "a change in % between 0 and 50",
            );
        }
        if !(self.margin_pct > 0.0 && self.margin_pct <= 50.0) {
            return bad(
                "--margin",
                self.margin_pct.to_string(),
                "a change in % above 0 and at most 50",
            );
        }
        if !(FIRST_LOOK..=MAX_PLANNED_ROUNDS).contains(&self.max_rounds) {
            return bad(
                "--max-rounds",
                self.max_rounds.to_string(),
                &format!("a number of rounds a side from {FIRST_LOOK} to {MAX_PLANNED_ROUNDS}"),
            );
        }
        Ok(())
    }
}

/// The signals that decide a verdict (`regressed`, `improved`): the CPU per ok request and the
/// latency at the busiest passing step (`super::latency`). Each is tested at its share of a
/// row's false-alarm budget, `Settings::per_signal`.
pub const DECIDING_SIGNALS: [&str; 2] = ["cpu", "latency"];

/// How a matrix of rows (`compare GROUP`) and the deciding signals of each row share the
/// false-alarm budget: each row is judged at `row_confidence` = 1 - (1 - `confidence`) / rows,
/// and each of its signals at `signal_confidence` = 1 - (1 - `row_confidence`) / signals (an α
/// split, Bonferroni's), so that the chance of a false `regressed` or `improved` from any
/// signal of any row, whatever their dependence, stays within 1 - `confidence`. The tests are
/// sequential, each with its own stopping looks, so a step-down correction (Holm's) on their
/// last p-values would not hold its level; the split does.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Family {
    pub rows: usize,
    pub confidence: f64,
    pub row_confidence: f64,
    /// Deciding signals per row (`DECIDING_SIGNALS`).
    pub signals: usize,
    pub signal_confidence: f64,
}

impl Family {
    /// `99 % over 8 rows (each row at 99.875 %, each of its 2 signals at 99.9375 %)`.
    pub(crate) fn text(&self) -> String {
        let signals = format!(
            "each of its {} signals at {} %",
            self.signals,
            pct(self.signal_confidence)
        );
        match self.rows {
            0 | 1 => format!("{} % ({signals})", pct(self.confidence)),
            n => format!(
                "{} % over {n} rows (each row at {} %, {signals})",
                pct(self.confidence),
                pct(self.row_confidence)
            ),
        }
    }
}

pub(crate) fn pct(c: f64) -> String {
    let s = format!("{:.4}", c * 100.0);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// 1 - (1 - `confidence`) / `k`: the share of a false-alarm budget split `k` ways.
fn split(confidence: f64, k: usize) -> f64 {
    1.0 - (1.0 - confidence) / k.max(1) as f64
}

impl Settings {
    /// The settings each of `rows` rows is judged with, and the family they make (one row or
    /// none: these settings). Each row's signals then split its share (`per_signal`).
    pub fn family(&self, rows: usize) -> (Settings, Family) {
        let row_confidence = split(self.confidence, rows);
        let family = Family {
            rows,
            confidence: self.confidence,
            row_confidence,
            signals: DECIDING_SIGNALS.len(),
            signal_confidence: split(row_confidence, DECIDING_SIGNALS.len()),
        };
        (
            Settings {
                confidence: row_confidence,
                ..*self
            },
            family,
        )
    }

    /// The settings each deciding signal of one comparison (a row) is tested with: the
    /// comparison's false-alarm budget split over `DECIDING_SIGNALS`.
    pub fn per_signal(&self) -> Settings {
        Settings {
            confidence: split(self.confidence, DECIDING_SIGNALS.len()),
            ..*self
        }
    }
}

/// A calibration's key: paired or not, the confidence's bits, the planned rounds a side.
type CalibrationKey = (bool, u64, usize);

static CALIBRATED: Mutex<Vec<(CalibrationKey, f64)>> = Mutex::new(Vec::new());

/// The per-look level α' of a plan: each look's two-sided t-test at α' such that the chance of
/// any look crossing under no change is `CALIBRATION_SHARE` x (1 - confidence) (a Pocock-like
/// boundary on the p-value scale, calibrated by simulation on normal logs; the t statistic's
/// law under no change does not depend on the noise, so one calibration serves every signal
/// and host).
pub(crate) fn nominal_alpha(confidence: f64, planned: usize) -> f64 {
    calibrated(false, confidence, planned)
}

/// α' of the unpaired (`paired` false) or the paired test (`super::paired`), cached per plan.
pub(super) fn calibrated(paired: bool, confidence: f64, planned: usize) -> f64 {
    let planned = planned.clamp(FIRST_LOOK, MAX_PLANNED_ROUNDS);
    let key = (paired, confidence.to_bits(), planned);
    if let Some(a) = CALIBRATED
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(k, _)| *k == key).map(|x| x.1))
    {
        return a;
    }
    let alpha = (1.0 - confidence) * CALIBRATION_SHARE;
    let a = if paired {
        let t_abs = paired_null_paths(planned, CALIBRATION_SEED);
        calibrate(alpha, planned, &t_abs, |n| n - 1)
    } else {
        calibrate(alpha, planned, &null_paths(planned), |n| 2 * n - 2)
    };
    if let Ok(mut c) = CALIBRATED.lock() {
        c.push((key, a));
    }
    a
}

/// |t| of every look (2..=planned pairs) of `CALIBRATION_PATHS` null paths of normal
/// differences (the paired t's law under no change does not depend on the noise nor on the
/// drift shared within pairs).
fn paired_null_paths(planned: usize, seed: u64) -> Vec<f32> {
    let looks = planned - FIRST_LOOK + 1;
    let mut t_abs = vec![0f32; CALIBRATION_PATHS * looks];
    let mut rng = Rng::new(seed ^ 0x5041_4952);
    for path in t_abs.chunks_mut(looks) {
        let (mut s, mut q) = (0.0, 0.0);
        for n in 1..=planned {
            let d = rng.normal();
            s += d;
            q += d * d;
            if n >= FIRST_LOOK {
                let nf = n as f64;
                let sd = ((q - s * s / nf) / (nf - 1.0)).sqrt();
                path[n - FIRST_LOOK] = (s / nf / (sd / nf.sqrt())).abs() as f32;
            }
        }
    }
    t_abs
}

/// |t| of every look (2..=planned rounds a side) of `CALIBRATION_PATHS` simulated null paths.
fn null_paths(planned: usize) -> Vec<f32> {
    let looks = planned - FIRST_LOOK + 1;
    let mut t_abs = vec![0f32; CALIBRATION_PATHS * looks];
    let mut rng = Rng::new(CALIBRATION_SEED);
    for path in t_abs.chunks_mut(looks) {
        let (mut sa, mut qa, mut sb, mut qb) = (0.0, 0.0, 0.0, 0.0);
        for n in 1..=planned {
            let (x, y) = (rng.normal(), rng.normal());
            sa += x;
            qa += x * x;
            sb += y;
            qb += y * y;
            if n >= FIRST_LOOK {
                let nf = n as f64;
                let ss = (qa - sa * sa / nf) + (qb - sb * sb / nf);
                let se = (ss / (2.0 * nf - 2.0) * 2.0 / nf).sqrt();
                path[n - FIRST_LOOK] = ((sb - sa) / nf / se).abs() as f32;
            }
        }
    }
    t_abs
}

/// The largest per-look level at which at most `alpha` of the null paths `t_abs` (|t| of
/// looks 2..=planned, path after path) cross at any look; `df(n)`: the degrees of freedom at
/// n rounds a side.
fn calibrate(alpha: f64, planned: usize, t_abs: &[f32], df: impl Fn(usize) -> usize) -> f64 {
    let looks = planned - FIRST_LOOK + 1;
    if looks == 1 {
        return alpha;
    }
    let false_alarms = |a: f64| {
        let crit: Vec<f32> = (FIRST_LOOK..=planned)
            .map(|n| t_crit(df(n) as f64, a) as f32)
            .collect();
        t_abs
            .chunks(looks)
            .filter(|p| p.iter().zip(&crit).any(|(t, c)| t >= c))
            .count()
    };
    let allowed = (alpha * CALIBRATION_PATHS as f64).floor() as usize;
    // Bonferroni (alpha / looks) never crosses more than alpha; alpha itself always does.
    let (mut lo, mut hi) = ((alpha / looks as f64).ln(), alpha.ln());
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        if false_alarms(mid.exp()) <= allowed {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo.exp()
}

/// The boundary at one look: the interval's level and critical t for these round counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Boundary {
    /// Rounds a side the plan allows (`--max-rounds`, or more when more were given).
    pub planned_rounds: usize,
    /// Looks the plan accounts for: one after every pair from 2 rounds a side.
    pub looks: usize,
    /// The per-look two-sided level α' (the overall false-alarm chance is 1 - confidence).
    pub nominal_alpha: f64,
    /// The interval's confidence at this look: 1 - α'.
    pub level: f64,
    pub df: f64,
    pub t_crit: f64,
}

/// What the interval says about B against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Call {
    /// Entirely above 1, and the estimate at least `min_effect` above.
    Higher,
    /// Entirely below 1, and the estimate at least `min_effect` below.
    Lower,
    /// Entirely within ±margin (equivalence).
    Within,
    /// Anything else: more rounds would narrow it.
    Undecided,
}

/// The call for a log-ratio `d` with interval half-width `half`.
pub(crate) fn call(d: f64, half: f64, s: &Settings) -> Call {
    let (lo, hi) = (d - half, d + half);
    let effect = s.min_effect_pct / 100.0;
    let margin = s.margin_pct / 100.0;
    if lo > 0.0 && d >= (1.0 + effect).ln() {
        Call::Higher
    } else if hi < 0.0 && d <= (1.0 - effect).ln() {
        Call::Lower
    } else if lo >= (1.0 - margin).ln() && hi <= (1.0 + margin).ln() {
        Call::Within
    } else {
        Call::Undecided
    }
}

/// One signal's test: B/A with its interval, the boundary used, and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogTest {
    pub n_a: usize,
    pub n_b: usize,
    /// B / A of the geometric means.
    pub ratio: f64,
    /// The interval of `ratio` at `boundary.level`.
    pub low: f64,
    pub high: f64,
    /// The rounds' pooled SD of the logs, in % (never below the signal's floor); paired: the
    /// SD of the per-pair differences of the logs (never below sqrt(2) x the floor).
    pub sd_log_pct: f64,
    /// Paired over this many pairs (`super::paired`); absent: the unpaired test.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    pub boundary: Boundary,
    pub call: Call,
    /// Undecided: rounds a side that would decide at this estimate and SD (None: more than
    /// `ROUNDS_SEARCH_CAP`, or the estimate sits where no number of rounds decides).
    pub rounds_needed: Option<usize>,
}

/// Critical t at a per-look level, precomputed by degrees of freedom up to a plan's last look.
#[derive(Debug, Clone)]
pub(super) struct Crit {
    alpha: f64,
    /// Index = df (df 0: infinite).
    table: Vec<f64>,
}

/// The tables [`Crit::new`] computed in this process, by (level, last df): a comparison's
/// table depends only on its settings, and `index` builds a plan for every batch's page
/// (each table is dozens of bisections of the incomplete beta: a fifth of `index`'s CPU over
/// 2,000 one-round batches before). At most `MAX_CRIT_TABLES` are kept.
static CRIT_TABLES: Mutex<Vec<((u64, usize), Vec<f64>)>> = Mutex::new(Vec::new());
const MAX_CRIT_TABLES: usize = 64;

impl Crit {
    pub(super) fn new(alpha: f64, max_df: usize) -> Crit {
        let key = (alpha.to_bits(), max_df);
        let known = CRIT_TABLES
            .lock()
            .ok()
            .and_then(|c| c.iter().find(|(k, _)| *k == key).map(|x| x.1.clone()));
        let table = known.unwrap_or_else(|| {
            let table: Vec<f64> = (0..=max_df)
                .map(|df| {
                    if df == 0 {
                        f64::INFINITY
                    } else {
                        t_crit(df as f64, alpha)
                    }
                })
                .collect();
            if let Ok(mut c) = CRIT_TABLES.lock()
                && c.len() < MAX_CRIT_TABLES
            {
                c.push((key, table.clone()));
            }
            table
        });
        Crit { alpha, table }
    }

    pub(super) fn at(&self, df: usize) -> f64 {
        match self.table.get(df) {
            Some(c) => *c,
            None => t_crit(df as f64, self.alpha),
        }
    }
}

/// The smallest n in (`n_now`, `ROUNDS_SEARCH_CAP`] at which `decides(n)`, where a larger n
/// never undecides (a narrower interval): bisection.
pub(super) fn first_deciding(n_now: usize, decides: impl Fn(usize) -> bool) -> Option<usize> {
    let (mut lo, mut hi) = (n_now.max(FIRST_LOOK - 1), ROUNDS_SEARCH_CAP);
    if lo >= hi || !decides(hi) {
        return None;
    }
    // invariant: lo does not decide (or is the current count), hi does
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if decides(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// The boundary of a plan, with the critical t of every balanced look precomputed.
#[derive(Debug, Clone)]
pub struct Plan {
    pub settings: Settings,
    pub planned_rounds: usize,
    pub nominal_alpha: f64,
    crit: Crit,
}

impl Plan {
    /// The plan for `settings`, long enough for the rounds given (`n_max` a side).
    pub fn new(settings: &Settings, n_max: usize) -> Plan {
        let planned = settings.max_rounds.max(n_max).min(MAX_PLANNED_ROUNDS);
        let a = nominal_alpha(settings.confidence, planned);
        Plan {
            settings: *settings,
            planned_rounds: planned,
            nominal_alpha: a,
            crit: Crit::new(a, 2 * planned - 2),
        }
    }

    fn crit_at(&self, df: usize) -> f64 {
        self.crit.at(df)
    }

    /// The boundary for `n_a` and `n_b` rounds (each at least `FIRST_LOOK`).
    pub fn boundary(&self, n_a: usize, n_b: usize) -> Boundary {
        let df = n_a + n_b - 2;
        Boundary {
            planned_rounds: self.planned_rounds,
            looks: self.planned_rounds - FIRST_LOOK + 1,
            nominal_alpha: self.nominal_alpha,
            level: 1.0 - self.nominal_alpha,
            df: df as f64,
            t_crit: self.crit_at(df),
        }
    }

    /// Log-ratio, pooled SD (floored at `sd_floor`) and half-width of the interval.
    fn interval(&self, a: &[f64], b: &[f64], sd_floor: f64) -> Option<(f64, f64, f64)> {
        if a.len() < FIRST_LOOK || b.len() < FIRST_LOOK {
            return None;
        }
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let (ma, mb) = (super::stats::mean(a), super::stats::mean(b));
        let ss = super::stats::variance(a) * (na - 1.0) + super::stats::variance(b) * (nb - 1.0);
        let sd = (ss / (na + nb - 2.0)).sqrt().max(sd_floor);
        let half = self.crit_at(a.len() + b.len() - 2) * sd * (1.0 / na + 1.0 / nb).sqrt();
        Some((mb - ma, sd, half))
    }

    /// The call on per-round logs `a` and `b` (None below 2 rounds a side): the simulations'
    /// fast path, the same rule as `test`.
    pub(crate) fn call(&self, a: &[f64], b: &[f64], sd_floor: f64) -> Option<Call> {
        let (d, _, half) = self.interval(a, b, sd_floor)?;
        Some(call(d, half, &self.settings))
    }

    /// The test on per-round logs `a` and `b` (None below 2 rounds a side).
    pub(crate) fn test(&self, a: &[f64], b: &[f64], sd_floor: f64) -> Option<LogTest> {
        let (d, sd, half) = self.interval(a, b, sd_floor)?;
        let c = call(d, half, &self.settings);
        let n_now = a.len().max(b.len());
        Some(LogTest {
            n_a: a.len(),
            n_b: b.len(),
            ratio: d.exp(),
            low: (d - half).exp(),
            high: (d + half).exp(),
            sd_log_pct: sd * 100.0,
            pairs: None,
            boundary: self.boundary(a.len(), b.len()),
            call: c,
            rounds_needed: (c == Call::Undecided)
                .then(|| self.rounds_needed(d, sd, n_now))
                .flatten(),
        })
    }

    /// Rounds a side (balanced, more than `n_now`) at which the interval would decide if the
    /// estimate `d` and the SD `sd` of the logs stayed as they are. The half-width shrinks as
    /// rounds are added and a narrower interval never undecides, so a bisection finds it.
    pub(crate) fn rounds_needed(&self, d: f64, sd: f64, n_now: usize) -> Option<usize> {
        let decides = |n: usize| {
            let half = self.crit_at(2 * n - 2) * sd * (2.0 / n as f64).sqrt();
            call(d, half, &self.settings) != Call::Undecided
        };
        first_deciding(n_now, decides)
    }
}

#[cfg(test)]
#[path = "sequential_tests.rs"]
mod tests;
