//! One point of a history: the figures of one run, or of one `compare` batch side (their
//! median), and what it ran on. Read with `compare`'s own readers (`verify::compare::rounds`:
//! the CPU signal's steps, the max sustainable rate, the steal; `host::speed`'s reading) and
//! the claims' evaluator, so a point says what `compare` and `verify` would. Pure.
use crate::analyze::model::Report;
use crate::experiment::Experiment;
use crate::host::speed::COMPUTE_DRIFT_PCT;
use crate::verify::compare::rounds::{self as cr, RoundIn, STEAL_FLAG_PCT, median};
use crate::verify::findings;
use crate::verify::load::LoadedRun;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;

/// The numeric figures of a point, in this order; `true`: a rise is a regression.
pub const FIGURES: &[(&str, bool)] = &[
    ("cpu_ms_per_ok", true),
    ("max_sustainable", false),
    ("knee", false),
    ("p95_ms", true),
];

/// One claim at one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaimPoint {
    pub claim: String,
    pub value: Option<f64>,
    /// pass, fail or n/a.
    pub verdict: String,
}

/// One point of a series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The first run's `exp/<run directory>`: the name `history ack` takes.
    pub run: String,
    /// Every run of the point (one, or a batch side's rounds).
    pub runs: Vec<String>,
    pub created: DateTime<Utc>,
    /// `FIGURES`' values (None: not measured there).
    pub values: BTreeMap<String, Option<f64>>,
    pub claims: Vec<ClaimPoint>,
    /// The manifest's `components` (the newest run's).
    pub components: BTreeMap<String, String>,
    pub host: Option<String>,
    /// The host's compute speed (Mops/s, the slower of the readings before and after the loads).
    pub speed_mops: Option<f64>,
    /// The hypervisor's steal on the app's and database's CPUs, % (the highest run's).
    pub steal_pct: Option<f64>,
    /// Why the point is left out of the detection (slowed host, host-limited), if it is.
    pub flagged: Option<String>,
}

/// The steps a series reads: the CPU signal's (every step each run passed below its knee,
/// else the lowest common step) and the latency's (the busiest of the passing ones).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Steps {
    pub cpu: Vec<u32>,
    pub p95: Option<u32>,
}

impl Steps {
    pub fn of(runs: &[&LoadedRun]) -> Steps {
        let all: Vec<RoundIn> = runs
            .iter()
            .map(|r| (r.experiment_id.as_str(), &r.report))
            .collect();
        Steps::of_rounds(&all)
    }

    /// compare's steps over the series' runs; when they share none (a point that fails every
    /// step, as a bad enough regression does, or failed more than 5 % at the lowest), the
    /// CPU reads the lowest step every run measured with CPU samples, failing or not: a figure
    /// of each point alone, which one point's failure does not take from all the others.
    pub(crate) fn of_rounds(all: &[RoundIn]) -> Steps {
        let mut cpu = cr::cpu_steps(all, &[]);
        if cpu.is_empty() {
            cpu = cr::lowest_step_where(all, |_| true).into_iter().collect();
        }
        Steps {
            cpu,
            p95: cr::latency_step(all, &[]),
        }
    }
}

fn p95_at(r: &Report, t: u32) -> Option<f64> {
    r.steps
        .iter()
        .find(|s| s.target == t)
        .map(|s| s.p95_ms)
        .filter(|v| *v > 0.0)
}

/// The median of the values present (None when none is).
fn med(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    median(&v.flatten().collect::<Vec<f64>>())
}

/// The slower compute reading of a run (before or after its loads).
fn speed(r: &LoadedRun) -> Option<f64> {
    let h = r.manifest.measurements.host_speed.as_ref()?;
    std::iter::once(&h.before)
        .chain(h.after.as_ref())
        .filter_map(|s| s.compute())
        .reduce(f64::min)
}

/// The point of `runs` (one run, or one batch side's rounds, oldest first).
pub fn point(runs: &[&LoadedRun], steps: &Steps, claims: Option<&Experiment>) -> Point {
    let newest = runs[runs.len() - 1];
    let mut values = BTreeMap::new();
    let fig = |f: &dyn Fn(&LoadedRun) -> Option<f64>| med(runs.iter().map(|r| f(r)));
    values.insert(
        "cpu_ms_per_ok".into(),
        fig(&|r| cr::cpu_over(&r.report, &steps.cpu)),
    );
    values.insert(
        "max_sustainable".into(),
        fig(&|r| Some(f64::from(cr::max_sustainable(&r.report).0))),
    );
    values.insert("knee".into(), fig(&|r| r.report.knee.map(f64::from)));
    values.insert(
        "p95_ms".into(),
        fig(&|r| steps.p95.and_then(|t| p95_at(&r.report, t))),
    );
    let steal = runs
        .iter()
        .filter_map(|r| cr::steal_pct(&r.report, &r.manifest))
        .reduce(f64::max);
    let limited = runs.iter().find_map(|r| {
        r.report
            .steps
            .iter()
            // the CPU figure's steps, or every step when the series has none
            .filter(|s| steps.cpu.is_empty() || steps.cpu.contains(&s.target))
            .find_map(|s| s.host_limited.clone())
    });
    let flagged = match (steal, limited) {
        (Some(s), _) if s > STEAL_FLAG_PCT => Some(format!("host-limited: steal {s:.0} %")),
        (_, Some(why)) => Some(format!("host-limited: {why}")),
        _ => None,
    };
    Point {
        run: runs[0].label(),
        runs: runs.iter().map(|r| r.label()).collect(),
        created: runs[0].manifest.created,
        values,
        claims: claims.map(|e| claim_points(e, runs)).unwrap_or_default(),
        components: with_images(&newest.manifest.components, &newest.manifest.images),
        host: newest.manifest.host.hostname.clone(),
        speed_mops: runs.iter().filter_map(|r| speed(r)).reduce(f64::min),
        steal_pct: steal,
        flagged,
    }
}

/// Each claim of `e` on the point's runs (over the rounds as `verify` judges them: the median
/// for a knee or a rate, else the newest round's); a claim naming another experiment's run
/// (`against:`) is judged without it (n/a).
fn claim_points(e: &Experiment, runs: &[&LoadedRun]) -> Vec<ClaimPoint> {
    let per_round: Vec<_> = runs
        .iter()
        .rev()
        .map(|r| {
            let label = r.label();
            let view = r.view(&label);
            let e = findings::claims_for(e, view);
            findings::judge_run(&e, view, &|_| None)
        })
        .collect();
    findings::over_rounds(e, per_round)
        .into_iter()
        .map(|c| ClaimPoint {
            claim: c.claim,
            value: c.value,
            verdict: c.verdict.as_str().to_string(),
        })
        .collect()
}

/// Flag the points whose host ran more than `COMPUTE_DRIFT_PCT` below the series' fastest
/// reading (compare's rule for a slowed host), unless flagged already.
pub fn flag_slowed(points: &mut [Point]) {
    let Some(top) = points
        .iter()
        .filter_map(|p| p.speed_mops)
        .reduce(f64::max)
        .filter(|t| *t > 0.0)
    else {
        return;
    };
    for p in points.iter_mut().filter(|p| p.flagged.is_none()) {
        if let Some(s) = p.speed_mops {
            let below = (1.0 - s / top) * 100.0;
            if below > COMPUTE_DRIFT_PCT {
                p.flagged = Some(format!("slowed host: {below:.0} % below the fastest"));
            }
        }
    }
}

/// The versions that differ between two points: `name old → new` (added: `name → new`,
/// removed: `name old → gone`).
/// The manifest's `components` and, as `image.<role>`, each image's tag and id: a rebuilt
/// image with the same packages (a local recipe change, a different build) still shows in a
/// change point's diff, instead of "nothing changed".
fn with_images(
    components: &BTreeMap<String, String>,
    images: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut all = components.clone();
    all.extend(
        images
            .iter()
            .map(|(k, v)| (format!("image.{k}"), v.clone())),
    );
    all
}

pub fn components_diff(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, new) in b {
        match a.get(k) {
            Some(old) if old == new => {}
            Some(old) => out.push(format!("{k} {old} → {new}")),
            None => out.push(format!("{k} → {new}")),
        }
    }
    for (k, old) in a {
        if !b.contains_key(k) {
            out.push(format!("{k} {old} → gone"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded() -> Report {
        crate::rundir::report::parse(include_str!(
            "../../tests/fixtures/compare/2a-base/2a/20261130T222220Z-r1/report.json"
        ))
        .unwrap()
    }

    /// One point that failed every step (a regression bad enough) no longer takes the CPU
    /// figure from the whole series: it falls back to the lowest step measured everywhere.
    #[test]
    fn a_point_failing_every_step_keeps_the_cpu_figure_at_the_lowest_step() {
        let a = recorded();
        let mut b = recorded();
        assert_eq!(Steps::of_rounds(&[("a", &a), ("b", &b)]).cpu, [50, 125]);
        for s in &mut b.steps {
            s.verdict = crate::analyze::model::Verdict::Fail;
            s.failed_rate = 0.7;
        }
        let st = Steps::of_rounds(&[("a", &a), ("b", &b)]);
        assert_eq!(st.cpu, [50], "{st:?}");
        assert!(cr::cpu_over(&b, &st.cpu).is_some());
        // no CPU samples anywhere in one run: nothing to read
        for s in &mut b.steps {
            s.ms_cpu_per_ok = None;
        }
        assert!(Steps::of_rounds(&[("a", &a), ("b", &b)]).cpu.is_empty());
    }

    /// A rebuilt image with the same packages (the real series' opcache-off php-fpm) is named
    /// in the diff instead of "nothing changed".
    #[test]
    fn an_image_rebuilt_with_the_same_packages_is_named() {
        let comp: BTreeMap<String, String> =
            [("php-fpm.php".to_string(), "8.4.27".to_string())].into();
        let img = |t: &str| -> BTreeMap<String, String> {
            [("php-fpm".to_string(), format!("perflab/php-fpm:trixie-{t}"))].into()
        };
        let (a, b) = (
            with_images(&comp, &img("a56c")),
            with_images(&comp, &img("4b8b")),
        );
        assert_eq!(
            components_diff(&a, &b),
            ["image.php-fpm perflab/php-fpm:trixie-a56c → perflab/php-fpm:trixie-4b8b"]
        );
        assert!(components_diff(&a, &a).is_empty());
    }
}
