//! Applying an experiment's `fit:` rules to the quantities a calibration measured: the fitted
//! experiment (validated like `--set`) and, for each rule, the published and the fitted value
//! side by side with the numbers the rule used. Pure; the calibration itself is the session's.
use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::claim::expr::Expr;
use crate::claim::schema::{Bound, StepAt};
use crate::experiment::fit::{Fit, FitEnv, Inputs, Published, check_expr, values};
use crate::experiment::{Experiment, overrides};

pub use crate::experiment::fit::Quantities;

/// One rule as applied: what it set, from what, to what, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedRule {
    pub set: String,
    pub to: String,
    pub why: String,
    /// The published value, as YAML text (`[60, 90, 120]`, `1000`).
    pub article: String,
    /// The fitted value, same form.
    pub fitted: String,
}

/// The published quantities a rule may read before any calibration: `top`, `max_vus`,
/// `think_s`, `pool`, and the layout's CPU counts.
pub fn published(e: &Experiment, app_cpus: usize, db_cpus: usize) -> Quantities {
    values(&Inputs {
        published: Published::of(e, app_cpus, db_cpus),
        calibration: None,
        peak: None,
    })
}

/// The field at a dotted key of the experiment's YAML form.
pub(crate) fn field<'a>(tree: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(tree, |v, k| v.get(k))
}

/// A number as YAML text: integers for integer fields, else 4 significant digits.
fn num_text(v: f64, integer: bool) -> String {
    if integer {
        format!("{}", v.round() as i64)
    } else {
        crate::claim::fmt_num(v)
    }
}

/// Evaluate an expression without `x` (`fit.calibrate.peak`) over `q`.
pub fn evaluate(expr_src: &str, q: &Quantities) -> Result<f64, String> {
    eval_positive(&check_expr(expr_src)?, q, None)
}

/// `expr` over `q` at `x` (a rule's published value; none for `calibrate.peak`): a positive,
/// finite number under 1e9, or why not.
fn eval_positive(expr: &Expr, q: &Quantities, x: Option<f64>) -> Result<f64, String> {
    let v = expr.eval(&mut FitEnv {
        q,
        x: x.unwrap_or(f64::NAN),
    })?;
    if v.is_finite() && v > 0.0 && v < 1e9 {
        return Ok(v);
    }
    Err(match x {
        Some(x) => format!("gives {v} for x = {x}; a fitted value must be positive and finite"),
        None => format!("gives {v}; it must be positive and finite"),
    })
}

/// Evaluate one rule on the published value `old`; the fitted YAML text, or why not.
fn fitted_value(expr_src: &str, old: &Value, q: &Quantities) -> Result<String, String> {
    let expr = check_expr(expr_src)?;
    let eval = |x: f64| eval_positive(&expr, q, Some(x));
    match old {
        Value::Sequence(items) => {
            let mut out: Vec<i64> = Vec::with_capacity(items.len());
            for it in items {
                let x = it.as_f64().ok_or("the published list holds a non-number")?;
                let mut v = eval(x)?.round().max(1.0) as i64;
                // Rounding may collapse neighbours; steps stay strictly increasing.
                if let Some(prev) = out.last() {
                    v = v.max(prev + 1);
                }
                out.push(v);
            }
            let t: Vec<String> = out.iter().map(i64::to_string).collect();
            Ok(format!("[{}]", t.join(", ")))
        }
        Value::Number(n) => {
            let integer = n.is_u64() || n.is_i64();
            let v = eval(n.as_f64().unwrap_or(0.0))?;
            Ok(num_text(if integer { v.max(1.0) } else { v }, integer))
        }
        _ => Err("the field is not a number or a list of numbers".into()),
    }
}

fn yaml_text(v: &Value) -> String {
    match v {
        Value::Sequence(items) => {
            let t: Vec<String> = items.iter().map(yaml_text).collect();
            format!("[{}]", t.join(", "))
        }
        Value::Number(n) => n.to_string(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// A claim read at a published step (`at: 550`, or `step550.p50_ms` in its expressions)
/// reads the fitted step of the same rank.
pub(crate) fn remap_claim_steps(e: &mut Experiment, new: &[u32]) {
    let old = e.load.steps.clone();
    let fitted = |t: u32| old.iter().position(|s| *s == t).and_then(|i| new.get(i));
    for c in &mut e.expect {
        if let Some(StepAt::Target(t)) = &mut c.at
            && let Some(n) = fitted(*t)
        {
            *t = *n;
        }
        let exprs = [&mut c.min, &mut c.max, &mut c.equals, &mut c.near];
        let mut texts: Vec<&mut String> = exprs
            .into_iter()
            .filter_map(|b| match b {
                Some(Bound::Expr(s)) => Some(s),
                _ => None,
            })
            .collect();
        texts.push(&mut c.value);
        for text in texts {
            *text = remap_step_selectors(text, &fitted);
        }
    }
}

/// `step<N>.` selectors in an expression's text, each published N replaced by its fitted
/// step (`step550.p50_ms` -> `step606.p50_ms`); other text is kept as written.
fn remap_step_selectors<'a>(text: &str, fitted: &impl Fn(u32) -> Option<&'a u32>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("step") {
        let (head, tail) = rest.split_at(i + 4);
        out.push_str(head);
        let digits = tail.len() - tail.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let word_start = !head[..i]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
        let selector = digits > 0 && tail[digits..].starts_with('.') && word_start;
        match tail[..digits]
            .parse()
            .ok()
            .filter(|_| selector)
            .and_then(fitted)
        {
            Some(n) => out.push_str(&n.to_string()),
            None => out.push_str(&tail[..digits]),
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Apply `fit` to `e` with the calibrated quantities `q` (published ones included). Every
/// rule reads the published experiment; the result is validated like `--set` overrides.
pub fn apply(
    e: &Experiment,
    fit: &Fit,
    q: &Quantities,
) -> Result<(Experiment, Vec<AppliedRule>), String> {
    let tree = serde_yaml::to_value(e).map_err(|x| x.to_string())?;
    let mut applied = Vec::new();
    let mut sets = Vec::new();
    let mut base = e.clone();
    for (i, r) in fit.rules.iter().enumerate() {
        let key = crate::experiment::keys::resolve_key(e.lab, r.set.trim())
            .map_err(|m| format!("fit.rules[{i}].set: {m}"))?;
        let old = field(&tree, &key)
            .ok_or_else(|| format!("fit.rules[{i}].set: `{key}` has no published value to fit"))?;
        let new = fitted_value(&r.to, old, q)
            .map_err(|m| format!("fit.rules[{i}] ({key} = {}): {m}", r.to))?;
        if key == "load.steps" {
            let steps: Vec<u32> = new
                .trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .filter_map(|t| t.trim().parse().ok())
                .collect();
            remap_claim_steps(&mut base, &steps);
        }
        sets.push(format!("{key}={new}"));
        applied.push(AppliedRule {
            set: key,
            to: r.to.clone(),
            why: r.why.clone(),
            article: yaml_text(old),
            fitted: new,
        });
    }
    let (fitted, _) = overrides::apply(&base, &sets).map_err(|d| {
        format!(
            "the fitted values do not validate:\n{}",
            crate::experiment::diag::render(&d)
        )
    })?;
    check_drop(&fitted, fit, q)?;
    Ok((fitted, applied))
}

/// A recovery phase must drop below the knee: with the knee known from the calibration
/// (`fit.ceiling`), a fitted `load.recover_rps` above it is an error.
fn check_drop(e: &Experiment, fit: &Fit, q: &Quantities) -> Result<(), String> {
    let (Some(rate), Some(src)) = (e.load.recover_rps, fit.ceiling.as_deref()) else {
        return Ok(());
    };
    let knee = evaluate(src, q).map_err(|m| format!("fit.ceiling ({src}): {m}"))?;
    if f64::from(rate) > knee {
        return Err(format!(
            "load.recover_rps: the fitted drop, {rate} rps, is above the knee this host's \
             calibration puts at {knee:.0} rps (fit.ceiling: {src}): the load would not drop \
             below it; fit recover_rps to a fraction of the ceiling under 1 (half: x = half \
             the published ceiling)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::remap_step_selectors;

    /// The fitted drop of a recovery phase above the fitted knee fails, naming the field,
    /// the rate and the knee; below it passes.
    #[test]
    fn a_fitted_drop_above_the_knee_is_an_error() {
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/experiments/exp3sat-recover.yaml"
        ))
        .unwrap();
        let e: super::Experiment = serde_yaml::from_str(&src).unwrap();
        let mut fit = e.fit.clone().unwrap();
        let q: super::Quantities = [("pool_rps".to_string(), 50.0)].into();
        assert!(super::check_drop(&e, &fit, &q).is_ok());
        let mut high = e.clone();
        high.load.recover_rps = Some(60);
        let m = super::check_drop(&high, &fit, &q).unwrap_err();
        assert!(
            m.contains("load.recover_rps") && m.contains("60 rps") && m.contains("50 rps"),
            "{m}"
        );
        fit.ceiling = None;
        assert!(
            super::check_drop(&high, &fit, &q).is_ok(),
            "no known knee: validate's peak check"
        );
    }

    #[test]
    fn step_selectors_follow_the_fitted_steps_and_nothing_else_changes() {
        let steps = [300u32, 550, 600];
        let new = [331u32, 606, 661];
        let fitted = |t: u32| steps.iter().position(|s| *s == t).map(|i| &new[i]);
        let r = |t: &str| remap_step_selectors(t, &fitted);
        assert_eq!(r("step550.p50_ms"), "step606.p50_ms");
        assert_eq!(
            r("step300.ok_per_s / step600.ok_per_s + top.p95_ms"),
            "step331.ok_per_s / step661.ok_per_s + top.p95_ms"
        );
        // not a published step, not a selector, part of another word: kept
        assert_eq!(r("step551.p50_ms"), "step551.p50_ms");
        assert_eq!(r("log(\"app\", \"step550\")"), "log(\"app\", \"step550\")");
        assert_eq!(r("mystep550.x + step"), "mystep550.x + step");
        assert_eq!(r("against.step550.p50_ms"), "against.step550.p50_ms");
    }
}
