//! The suite matrix of `perflab compare GROUP --a ... --b ...`: one row per experiment (app CPU
//! per ok request B/A at the common step with its interval when the verdict's test gives
//! one, the max sustainable change, the claims whose verdict differs between the sides, the
//! process whose CPU per request moved most, the verdict and why), a summary line and the exit
//! code over the rows. Pure: the caller loads the rounds (`load`).
use std::collections::BTreeMap;

use serde::Serialize;

use super::compare::{self, Family, RoundsComparison, Settings, Verdict};
use super::eval::{ClaimResult, ClaimVerdict, RunView};
use super::findings;
use super::load::LoadedRun;
use crate::analyze::model::Report;
use crate::experiment::{Experiment, Lab};
use crate::report::table::Table;

/// `compare`'s comparison of two sides of loaded rounds (neither empty).
pub(crate) fn compare_loaded(
    a: &[LoadedRun],
    b: &[LoadedRun],
    settings: &Settings,
) -> RoundsComparison {
    let (la, lb) = (labels(a), labels(b));
    compare::compare_rounds_with(&as_runs(a, &la), &as_runs(b, &lb), settings)
}

pub(crate) fn labels(rounds: &[LoadedRun]) -> Vec<String> {
    rounds.iter().map(LoadedRun::label).collect()
}

pub(crate) fn as_runs<'a>(rounds: &'a [LoadedRun], labels: &'a [String]) -> Vec<compare::Run<'a>> {
    rounds
        .iter()
        .zip(labels)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect()
}

/// One side of one experiment: its rounds (oldest first) and the runs its claims compare
/// against (`against:`), by experiment id.
#[derive(Clone, Copy)]
pub(crate) struct Side<'a> {
    pub rounds: &'a [LoadedRun],
    pub against: &'a BTreeMap<String, LoadedRun>,
}

/// A claim whose verdict differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ClaimChange {
    pub claim: String,
    pub a: ClaimVerdict,
    pub b: ClaimVerdict,
    pub a_measured: String,
    pub b_measured: String,
}

/// One process's CPU ms per ok request at the common step (medians over each side's rounds).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ProcessCpu {
    /// fpm, nginx, pg, node (the lab's app container), app (the demo server).
    pub process: String,
    pub a_ms: f64,
    pub b_ms: f64,
    /// (B - A) / A, in %.
    pub change_pct: f64,
}

/// One experiment's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Row {
    pub experiment: String,
    pub lab: String,
    pub rounds_a: usize,
    pub rounds_b: usize,
    pub verdict: Verdict,
    pub why: String,
    /// More rounds would not change the verdict.
    pub decided: bool,
    /// Undecided: the rounds a side that would decide at this estimate and noise.
    pub rounds_needed: Option<usize>,
    /// The lowest step of the CPU signal (the common step when it is one): where the
    /// processes' CPU figures are read.
    pub cpu_step: Option<u32>,
    /// B/A of the app CPU per ok request (the geometric means; the medians' ratio when the
    /// test has too few rounds).
    pub cpu_ratio: Option<f64>,
    /// The interval of that ratio at the boundary's level (2 rounds a side or more).
    pub cpu_interval: Option<[f64; 2]>,
    pub max_sustainable_a: Option<f64>,
    pub max_sustainable_b: Option<f64>,
    /// (B - A) / A of the median max sustainable rates, in %.
    pub max_sustainable_change_pct: Option<f64>,
    pub claims_changed: Vec<ClaimChange>,
    /// Every process measured on both sides, the largest absolute change in ms first.
    pub processes: Vec<ProcessCpu>,
    pub runs_a: Vec<String>,
    pub runs_b: Vec<String>,
    /// The rounds' run directories.
    pub dirs_a: Vec<std::path::PathBuf>,
    pub dirs_b: Vec<std::path::PathBuf>,
    /// The whole comparison (as `compare A B --json` prints it), when both sides have rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<RoundsComparison>,
    /// `--aa`: the calibration this row made; else this host's recorded one, cited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<compare::calibration::Calibration>,
}

impl Row {
    /// The process whose CPU per request moved most, e.g. `fpm +12.3 %`.
    pub(crate) fn moved(&self) -> Option<String> {
        self.processes
            .first()
            .map(|p| format!("{} {:+.1} %", p.process, p.change_pct))
    }
}

/// One row: `e` is the catalog's experiment (its claims), `a` and `b` its sides' rounds,
/// compared with `settings`.
pub(crate) fn row(e: &Experiment, a: Side<'_>, b: Side<'_>, settings: &Settings) -> Row {
    let mut r = Row {
        experiment: e.id.clone(),
        lab: e.lab.to_string(),
        rounds_a: a.rounds.len(),
        rounds_b: b.rounds.len(),
        verdict: Verdict::Inconclusive,
        why: String::new(),
        decided: false,
        rounds_needed: None,
        cpu_step: None,
        cpu_ratio: None,
        cpu_interval: None,
        max_sustainable_a: None,
        max_sustainable_b: None,
        max_sustainable_change_pct: None,
        claims_changed: claim_changes(e, a, b),
        processes: Vec::new(),
        runs_a: labels(a.rounds),
        runs_b: labels(b.rounds),
        dirs_a: a.rounds.iter().map(|r| r.dir.clone()).collect(),
        dirs_b: b.rounds.iter().map(|r| r.dir.clone()).collect(),
        comparison: None,
        calibration: None,
    };
    let missing: Vec<&str> = [("A", a), ("B", b)]
        .iter()
        .filter(|(_, s)| s.rounds.is_empty())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        r.why = format!(
            "no complete round of side {} of this configuration",
            missing.join(" nor ")
        );
        return r;
    }
    let c = compare_loaded(a.rounds, b.rounds, settings);
    (r.verdict, r.why, r.decided) = (c.verdict, c.why.clone(), c.decided);
    r.rounds_needed = c.rounds_needed;
    r.cpu_step = c.cpu.step;
    r.cpu_ratio = match &c.cpu.test {
        Some(t) => Some(t.ratio),
        None => c
            .cpu
            .a_median
            .zip(c.cpu.b_median)
            .filter(|(x, _)| *x > 0.0)
            .map(|(x, y)| y / x),
    };
    r.cpu_interval = c.cpu.test.as_ref().map(|t| [t.low, t.high]);
    (r.max_sustainable_a, r.max_sustainable_b) = (c.capacity.a_median, c.capacity.b_median);
    r.max_sustainable_change_pct = c
        .capacity
        .a_median
        .zip(c.capacity.b_median)
        .filter(|(x, _)| *x > 0.0)
        .map(|(x, y)| (y - x) / x * 100.0);
    if let Some(step) = c.cpu.step {
        r.processes = processes(e.lab, step, a.rounds, b.rounds);
    }
    r.comparison = Some(c);
    r
}

/// Each side's claims judged over its rounds (as `verify` does), and those whose verdict
/// differs.
fn claim_changes(e: &Experiment, a: Side<'_>, b: Side<'_>) -> Vec<ClaimChange> {
    if a.rounds.is_empty() || b.rounds.is_empty() {
        return Vec::new();
    }
    let (ra, rb) = (side_claims(e, a), side_claims(e, b));
    ra.into_iter()
        .filter_map(|ca| {
            let cb = rb.iter().find(|c| c.claim == ca.claim)?;
            (ca.verdict != cb.verdict).then(|| ClaimChange {
                claim: ca.claim.clone(),
                a: ca.verdict,
                b: cb.verdict,
                a_measured: ca.measured.clone(),
                b_measured: cb.measured.clone(),
            })
        })
        .collect()
}

fn side_claims(e: &Experiment, s: Side<'_>) -> Vec<ClaimResult> {
    let newest_first: Vec<&LoadedRun> = s.rounds.iter().rev().collect();
    let labels: Vec<String> = newest_first.iter().map(|r| r.label()).collect();
    let views: Vec<RunView<'_>> = newest_first
        .iter()
        .zip(&labels)
        .map(|(r, l)| r.view(l))
        .collect();
    let against_labels: BTreeMap<&str, String> = s
        .against
        .iter()
        .map(|(k, r)| (k.as_str(), r.label()))
        .collect();
    let against = |_: RunView<'_>, id: &str| {
        let l = against_labels.get(id)?;
        s.against.get(id).map(|r| r.view(l))
    };
    findings::verify_rounds(e, &views, &against)
}

/// The name a cgroup role goes by in the matrix (its role's declared `process`: the node lab's
/// app is `node`).
fn process_name(lab: Lab, role: &str) -> String {
    crate::lab::descriptor(lab)
        .info()
        .process_name(role)
        .to_string()
}

/// CPU ms per ok response of each lab process at step `t` of one round (the load generator
/// left out): its mean CPU (% of a core) x 10 / ok responses per second.
fn round_processes(r: &Report, t: u32) -> Vec<(String, f64)> {
    let Some(s) = r.steps.iter().find(|s| s.target == t) else {
        return Vec::new();
    };
    let (Some(w), true) = (&s.server, s.ok_per_s > 0.0) else {
        return Vec::new();
    };
    w.cpu_pct
        .iter()
        .filter(|(role, pct)| role.as_str() != "k6" && pct.is_finite())
        .map(|(role, pct)| (role.clone(), pct * 10.0 / s.ok_per_s))
        .collect()
}

fn median_by_role(rounds: &[LoadedRun], t: u32) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in rounds {
        for (role, ms) in round_processes(&r.report, t) {
            by.entry(role).or_default().push(ms);
        }
    }
    by.into_iter()
        .filter_map(|(k, v)| compare::rounds::median(&v).map(|m| (k, m)))
        .collect()
}

/// Every process measured on both sides at step `t`, the largest absolute change first.
fn processes(lab: Lab, t: u32, a: &[LoadedRun], b: &[LoadedRun]) -> Vec<ProcessCpu> {
    let (ma, mb) = (median_by_role(a, t), median_by_role(b, t));
    let mut out: Vec<ProcessCpu> = ma
        .iter()
        .filter_map(|(role, &x)| {
            let y = *mb.get(role)?;
            (x > 0.0).then(|| ProcessCpu {
                process: process_name(lab, role),
                a_ms: x,
                b_ms: y,
                change_pct: (y - x) / x * 100.0,
            })
        })
        .collect();
    out.sort_by(|p, q| (q.b_ms - q.a_ms).abs().total_cmp(&(p.b_ms - p.a_ms).abs()));
    out
}

/// The rows counted by verdict, the line that says so and the exit code.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Summary {
    pub regressed: Vec<String>,
    pub improved: Vec<String>,
    pub same: Vec<String>,
    pub inconclusive: Vec<String>,
    /// 1 when a row regressed, else 3 when a row is inconclusive, else 0.
    pub exit_code: u8,
    pub line: String,
    /// How the rows shared the confidence: each row was judged at `family.row_confidence`.
    pub family: Family,
}

/// The whole matrix: both sides as declared, the rows, the summary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Matrix {
    pub target: String,
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    pub summary: Summary,
}

/// The matrix of `rows` for `target`, sides described as `a` and `b`, its rows judged as
/// `family` says (`Settings::family`).
pub(crate) fn matrix(target: &str, a: &str, b: &str, rows: Vec<Row>, family: Family) -> Matrix {
    let with = |v: Verdict| -> Vec<String> {
        rows.iter()
            .filter(|r| r.verdict == v)
            .map(|r| r.experiment.clone())
            .collect()
    };
    let (regressed, improved, same, inconclusive) = (
        with(Verdict::Regressed),
        with(Verdict::Improved),
        with(Verdict::Same),
        with(Verdict::Inconclusive),
    );
    let part = |n: &str, v: &[String]| match v.len() {
        0 => format!("0 {n}"),
        k => format!("{k} {n} ({})", v.join(", ")),
    };
    let exit = compare::exit_code(rows.iter().map(|r| r.verdict));
    let line = format!(
        "{target}: {} experiment(s), {b} against {a}: {}, {}, {}, {}; confidence {}; exit {exit}",
        rows.len(),
        part("regressed", &regressed),
        part("improved", &improved),
        part("same", &same),
        part("inconclusive", &inconclusive),
        family.text(),
    );
    Matrix {
        target: target.to_string(),
        a: a.to_string(),
        b: b.to_string(),
        summary: Summary {
            regressed,
            improved,
            same,
            inconclusive,
            exit_code: exit,
            line,
            family,
        },
        rows,
    }
}

/// `1.123 [1.050, 1.201]`, or `-`.
pub(crate) fn ratio_text(r: &Row) -> String {
    match (r.cpu_ratio, r.cpu_interval) {
        (Some(x), Some([lo, hi])) => format!("{x:.3} [{lo:.3}, {hi:.3}]"),
        (Some(x), None) => format!("{x:.3}"),
        _ => "-".into(),
    }
}

/// `125 -> 100 (-20.0 %)`, or `-`.
pub(crate) fn capacity_text(r: &Row) -> String {
    match (r.max_sustainable_a, r.max_sustainable_b) {
        (Some(x), Some(y)) => match r.max_sustainable_change_pct {
            Some(p) => format!("{x:.0} -> {y:.0} ({p:+.1} %)"),
            None => format!("{x:.0} -> {y:.0}"),
        },
        _ => "-".into(),
    }
}

/// `fpm-bound: pass -> fail; ...`, or `-`.
pub(crate) fn claims_text(r: &Row) -> String {
    if r.claims_changed.is_empty() {
        return "-".into();
    }
    r.claims_changed
        .iter()
        .map(|c| format!("{}: {} -> {}", c.claim, c.a.as_str(), c.b.as_str()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The matrix's table (one row per experiment) for text and HTML.
pub(crate) fn table(m: &Matrix) -> Table {
    let mut t = Table::new([
        "experiment",
        "rounds A/B",
        "CPU/ok B/A",
        "max sustainable",
        "CPU moved most",
        "claims that changed",
        "verdict",
    ]);
    t.left = vec![0, 3, 4, 5, 6];
    for r in &m.rows {
        t.push(vec![
            r.experiment.clone(),
            format!("{}/{}", r.rounds_a, r.rounds_b),
            ratio_text(r),
            capacity_text(r),
            r.moved().unwrap_or_else(|| "-".into()),
            claims_text(r),
            r.verdict.as_str().to_string(),
        ]);
    }
    t
}

/// The matrix as text: the sides, the table with each row's why under it, the summary.
pub(crate) fn render_text(m: &Matrix) -> String {
    let mut t = table(m);
    t.below = m
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (i, format!("  {}: {}", r.experiment, r.why)))
        .chain(m.rows.iter().enumerate().filter_map(|(i, r)| {
            let c = r.calibration.as_ref()?;
            Some((i, format!("  {}: {}", r.experiment, c.citation())))
        }))
        .collect();
    format!(
        "compare {}: {}, {}\n{}{}\n",
        m.target,
        m.a,
        m.b,
        t.to_text(),
        m.summary.line
    )
}

#[cfg(test)]
#[path = "matrix_tests.rs"]
mod tests;
