//! Whether a fitted plan reaches its knee: an experiment whose claims read the knee declares
//! `fit.ceiling` (the calibrated ceiling those claims are about, in the steps' units), and its
//! fitted top step must offer at least [`REACH`] times it, so a ceiling the calibration read
//! low still lies under the top step. Checked by `validate` on synthetic hosts; the fit tests
//! check it on recorded calibrations.
use std::path::Path;

use super::diag::Diagnostic;
use super::fit::{Fit, FitEnv, Inputs, Measured, Published, Quantities, check_expr, values};
use super::schema::Experiment;
use crate::claim::Claim;
use crate::claim::compile::{At, Comparison, Compiled, compile};
use crate::claim::expr::{Expr, Selector};

/// How far past the ceiling the fitted top step must reach.
pub(crate) const REACH: f64 = 1.25;

/// The claims (by name) that need a knee in the run: judged at the knee or right below it, or
/// reading the run's own knee.
pub fn knee_claims(e: &Experiment) -> Vec<&str> {
    e.expect
        .iter()
        .filter(|c| compile(c).is_ok_and(|x| needs_knee(&x)))
        .map(|c: &Claim| c.name.as_str())
        .collect()
}

fn needs_knee(c: &Compiled) -> bool {
    let knee_sel = |s: &Option<Selector>| matches!(s, Some(Selector::Knee | Selector::BelowKnee));
    if matches!(&c.at, Some(At::One(s)) if knee_sel(&Some(*s))) {
        return true;
    }
    let mut exprs: Vec<&Expr> = vec![&c.value];
    match &c.cmp {
        Comparison::Range { min, max } => exprs.extend(min.iter().chain(max).map(|b| &b.1)),
        Comparison::Equals(_, x) | Comparison::Near(_, x, _) => exprs.push(x),
    }
    exprs.iter().flat_map(|x| x.names()).any(|n| {
        !n.against
            && (knee_sel(&n.selector)
                || ["knee", "below_knee", "knee_index"].contains(&n.path.as_str()))
    })
}

/// The fitted top step over the ceiling on quantities `q`: (top, ceiling), or why not.
pub fn top_and_ceiling(e: &Experiment, fit: &Fit, q: &Quantities) -> Result<(f64, f64), String> {
    let src = fit.ceiling.as_deref().ok_or("no `fit.ceiling`")?;
    let ceiling = eval(src, q, f64::NAN)?;
    let rule = fit
        .rules
        .iter()
        .find(|r| r.set.trim() == "load.steps" || r.set.trim() == "steps")
        .ok_or("no rule sets `load.steps`")?;
    let top = f64::from(e.load.steps.last().copied().unwrap_or(0));
    Ok((eval(&rule.to, q, top)?.round(), ceiling))
}

fn eval(src: &str, q: &Quantities, x: f64) -> Result<f64, String> {
    check_expr(src)?.eval(&mut FitEnv { q, x })
}

/// Synthetic hosts for `validate`: the app's, the database's and the pool's ceiling each
/// binding first, as (app_ms, db_ms, w_ms).
const HOSTS: [(f64, f64, f64); 3] = [(10.0, 3.0, 12.0), (3.0, 10.0, 15.0), (5.0, 4.0, 200.0)];

fn synthetic(e: &Experiment, (app_ms, db_ms, w_ms): (f64, f64, f64)) -> Quantities {
    let mut published = Published::of(e, 1, 1);
    let pool = *published.pool.get_or_insert(10.0);
    let ceiling = (1000.0 / app_ms)
        .min(1000.0 / db_ms)
        .min(pool * 1000.0 / w_ms);
    let calibration = Measured {
        rate: 20.0,
        ok_per_s: 20.0,
        w_ms,
        p95_ms: 2.0 * w_ms,
        p99_ms: None,
        app_ms: Some(app_ms),
        db_ms: Some(db_ms),
    };
    let peak = Measured {
        rate: 1.4 * ceiling,
        ok_per_s: ceiling,
        w_ms: 5.0 * w_ms,
        p95_ms: 10.0 * w_ms,
        p99_ms: Some(12.0 * w_ms),
        app_ms: Some(0.8 * app_ms),
        db_ms: None,
    };
    values(&Inputs {
        published,
        calibration: Some(calibration),
        peak: Some(peak),
    })
}

/// Check that a fitted experiment whose claims need a knee names its ceiling and that its
/// fitted top step reaches [`REACH`] times it on every synthetic host.
pub(crate) fn check_reach(file: &Path, e: &Experiment, fit: &Fit, d: &mut Vec<Diagnostic>) {
    let claims = knee_claims(e);
    if claims.is_empty() {
        return;
    }
    let needing = format!("claims {} need a knee", claims.join(", "));
    let Some(src) = &fit.ceiling else {
        d.push(
            Diagnostic::error(file, "fit.ceiling", format!("is missing: {needing}, so the fitted top step must reach past the calibrated ceiling they are about"))
                .help("name it in the steps' units, e.g. `ceiling: db_ceiling`"),
        );
        return;
    };
    if let Err(m) = check_expr(src) {
        d.push(Diagnostic::error(file, "fit.ceiling", m));
        return;
    }
    let at = fit
        .rules
        .iter()
        .position(|r| r.set.trim() == "load.steps" || r.set.trim() == "steps");
    let Some(i) = at else {
        d.push(
            Diagnostic::error(file, "fit.rules", format!("set no `load.steps`: {needing}"))
                .help("add a rule `- {set: load.steps, to: \"x * <ceiling> / <k>\", why: ...}` whose top step reaches 1.25x the ceiling"),
        );
        return;
    };
    let worst = HOSTS
        .iter()
        .filter_map(|h| top_and_ceiling(e, fit, &synthetic(e, *h)).ok())
        .map(|(top, c)| top / c)
        .fold(f64::INFINITY, f64::min);
    if worst.is_finite() && worst < REACH {
        d.push(
            Diagnostic::error(
                file,
                format!("fit.rules[{i}].to"),
                format!(
                    "the fitted top step is {worst:.2}x the ceiling `{src}`: {needing}, and a real ceiling above the calibrated one is never passed"
                ),
            )
            .help(format!(
                "scale the steps so the top reaches {REACH}x it: divide by {:.0} or less instead",
                worst_divisor(&fit.rules[i].to, worst)
            )),
        );
    }
}

/// The divisor that would make the top `REACH`x: the rule's constant divisor scaled by the
/// shortfall (a hint; 0 when the rule has no trailing `/ k`).
fn worst_divisor(to: &str, ratio: f64) -> f64 {
    to.rsplit_once('/')
        .and_then(|(_, k)| k.trim().parse::<f64>().ok())
        .map(|k| (k * ratio / REACH).floor())
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(value: &str, at: Option<&str>) -> Claim {
        let y = match at {
            Some(a) => format!("{{name: c, claim: c, value: '{value}', at: {a}, min: 1}}"),
            None => format!("{{name: c, claim: c, value: '{value}', min: 1}}"),
        };
        serde_yaml::from_str(&y).unwrap()
    }

    #[test]
    fn claims_at_or_reading_the_knee_need_one_others_do_not() {
        let needs = |v: &str, at: Option<&str>| needs_knee(&compile(&claim(v, at)).unwrap());
        assert!(needs("cpu.pg", Some("knee")));
        assert!(needs("cpu.pg", Some("below_knee")));
        assert!(needs("against.knee / knee", None));
        assert!(needs("knee.p95_ms", None));
        assert!(!needs("cpu.pg", Some("top")));
        assert!(!needs("max_sustainable / against.max_sustainable", None));
        assert!(!needs("against.knee", None));
    }
}
