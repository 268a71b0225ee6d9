//! The `fit:` section of an experiment (`perflab run --fit`): how its published numbers translate
//! to this host, as data. A short calibration load measures the host's quantities (CPU per
//! request, the service time W, the ceilings they imply); each rule then sets one field
//! (`set:`, a `--set` key) to an expression over them (`to:`). Validated here, applied by
//! `plan::fit`; without `--fit` the section is ignored and the published numbers run.
use super::diag::Diagnostic;
use super::schema::Experiment;
use crate::claim::expr::{Arg, ArgValue, Expr, Name, Resolve};
use std::path::Path;

mod quantities;
pub use super::schema::{Calibrate, Fit, FitRule};
pub use quantities::{FitQ, Inputs, Measured, Published, Quantities, values};

/// Functions a rule may call, with their arity.
pub(crate) const FUNCTIONS: &[(&str, usize)] = &[
    ("min", 2),
    ("max", 2),
    ("round", 1),
    ("floor", 1),
    ("ceil", 1),
];

/// Bounds of the calibration load (a calibration is seconds, under any knee).
const MAX_RATE: u32 = 100_000;
const HOLD_RANGE: (u32, u32) = (3, 600);

/// Check the `fit:` section of `e` (when present).
pub(crate) fn check_fit(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let Some(fit) = &e.fit else { return };
    let err = |field: String, msg: String| Diagnostic::error(file, field, msg);
    if fit.calibrate.rate == 0 || fit.calibrate.rate > MAX_RATE {
        d.push(
            err(
                "fit.calibrate.rate".into(),
                format!("must be 1 to {MAX_RATE} requests/s"),
            )
            .help("a low rate, well under any knee: e.g. rate: 20"),
        );
    }
    let (lo, hi) = HOLD_RANGE;
    if !(lo..=hi).contains(&fit.calibrate.hold_s) {
        d.push(err(
            "fit.calibrate.hold_s".into(),
            format!("must be {lo} to {hi} seconds"),
        ));
    }
    check_peak(file, fit, d);
    if fit.rules.is_empty() {
        d.push(err("fit.rules".into(), "has no rule".into()).help(
            "add `- {set: load.steps, to: \"x * app_ceiling / 225\", why: ...}` or remove `fit:`",
        ));
    }
    let mut seen = Vec::new();
    for (i, r) in fit.rules.iter().enumerate() {
        let at = |f: &str| format!("fit.rules[{i}].{f}");
        match super::keys::resolve_key(e.lab, r.set.trim()) {
            Ok(k) if seen.contains(&k) => d.push(
                err(at("set"), format!("`{k}` is set by an earlier rule"))
                    .help("one rule per field"),
            ),
            Ok(k) => seen.push(k),
            Err(m) => d.push(err(at("set"), m)),
        }
        check_rule_to(file, fit, at("to"), &r.to, d);
        if r.why.trim().is_empty() {
            d.push(
                err(at("why"), "is empty".into())
                    .help("say the article's relation this rule keeps"),
            );
        }
    }
}

/// What to do about a constant division by zero or a constant that is not finite.
const CONSTANT_HELP: &str = "divide by a quantity (e.g. `x * 1000 / w_ms`), never by a constant 0, and keep constants finite";

/// A rule's `to:` parses, reads fit quantities (a `peak_` one only with a peak probe) and has
/// no constant fault (`x / 0`).
fn check_rule_to(file: &Path, fit: &Fit, field: String, src: &str, d: &mut Vec<Diagnostic>) {
    let e = match check_expr(src) {
        Ok(e) => e,
        Err(m) => {
            d.push(Diagnostic::error(file, field, m).help(names_help(src)));
            return;
        }
    };
    if let Some(m) = e.constant_fault() {
        d.push(Diagnostic::error(file, field.clone(), m).help(CONSTANT_HELP));
    }
    // A twin lends its peak probe (`fit.twin`; the catalog checks it has one).
    if fit.calibrate.peak.is_none()
        && fit.twin.is_none()
        && let Some(n) = e.names().into_iter().find(|n| is_peak(&n.path))
    {
        d.push(
            Diagnostic::error(
                file,
                field,
                format!("reads `{}`, but no peak probe measures it", n.text),
            )
            .help("add `calibrate: {peak: \"1.2 * app_ceiling\"}` to `fit:`"),
        );
    }
}

/// `calibrate.peak` reads only the calibration's quantities (a rule reading a `peak_` one needs
/// it: checked with the rules).
fn check_peak(file: &Path, fit: &Fit, d: &mut Vec<Diagnostic>) {
    let err = |field: String, msg: String| Diagnostic::error(file, field, msg);
    if let Some(src) = &fit.calibrate.peak {
        match check_expr(src) {
            Ok(e) => {
                if let Some(m) = e.constant_fault() {
                    d.push(err("fit.calibrate.peak".into(), m).help(CONSTANT_HELP));
                }
                let bad = e
                    .names()
                    .into_iter()
                    .find(|n| is_peak(&n.path) || n.path == FitQ::X.name());
                if let Some(n) = bad {
                    d.push(
                        err(
                            "fit.calibrate.peak".into(),
                            format!("reads `{}`, which the probe itself measures", n.text),
                        )
                        .help("a rate from the calibration's ceilings: e.g. \"1.2 * app_ceiling\""),
                    );
                }
            }
            Err(m) => d.push(err("fit.calibrate.peak".into(), m).help(format!(
                "a rate from the calibration's ceilings: e.g. \"1.2 * app_ceiling\"; {}",
                names_help(src)
            ))),
        }
    }
}

/// `fit`'s rules read a quantity only a peak probe measures (`peak_app_ceiling`).
pub(crate) fn reads_peak(fit: &Fit) -> bool {
    fit.rules
        .iter()
        .any(|r| check_expr(&r.to).is_ok_and(|e| e.names().into_iter().any(|n| is_peak(&n.path))))
}

/// A name of the registry only the peak probe measures.
fn is_peak(name: &str) -> bool {
    FitQ::from_name(name).is_some_and(FitQ::is_peak)
}

/// The fix of an expression that does not check: the name it most likely meant (an unknown
/// one's nearest in the registry), then every name and function a rule may use.
fn names_help(src: &str) -> String {
    let names = FitQ::ALL.iter().map(|q| q.name());
    let unknown = crate::claim::parse(src).ok().and_then(|e| {
        e.names()
            .into_iter()
            .find(|n| FitQ::from_name(&n.path).is_none())
            .map(|n| n.path.clone())
    });
    let guess = unknown
        .and_then(|u| super::diag::did_you_mean(&u, names.clone()))
        .map(|g| format!("did you mean `{g}`? "))
        .unwrap_or_default();
    format!(
        "{guess}names: {} (`perflab show EXP --fit` says what each is); functions: {}",
        names.collect::<Vec<_>>().join(", "),
        FUNCTIONS.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
    )
}

/// A rule's names and calls resolved over calibrated quantities `q`, with `x` the published
/// value (NaN where there is none).
pub(crate) struct FitEnv<'a> {
    pub q: &'a Quantities,
    pub x: f64,
}

impl Resolve for FitEnv<'_> {
    type Err = String;
    fn name(&mut self, n: &Name) -> Result<f64, String> {
        if n.path == FitQ::X.name() {
            return Ok(self.x);
        }
        self.q.get(&n.path).copied().ok_or_else(|| {
            format!(
                "`{}` was not measured by the calibration (no samples of that container?)",
                n.path
            )
        })
    }
    fn call(&mut self, f: &str, a: &[ArgValue<'_>]) -> Result<f64, String> {
        let n = |i: usize| match a.get(i) {
            Some(ArgValue::Num(v)) => Ok(*v),
            _ => Err(format!("`{f}` takes numbers")),
        };
        Ok(match f {
            "min" => n(0)?.min(n(1)?),
            "max" => n(0)?.max(n(1)?),
            "round" => n(0)?.round(),
            "floor" => n(0)?.floor(),
            "ceil" => n(0)?.ceil(),
            other => return Err(format!("`{other}` is not a fit function")),
        })
    }
}

/// Parse a rule's expression and check its names and calls.
pub(crate) fn check_expr(src: &str) -> Result<Expr, String> {
    let e = crate::claim::parse(src).map_err(|e| e.to_string())?;
    for n in e.names() {
        if n.against || n.selector.is_some() || FitQ::from_name(&n.path).is_none() {
            return Err(format!("`{}` is not a fit quantity", n.text));
        }
    }
    for (f, args) in e.calls() {
        let Some((_, arity)) = FUNCTIONS.iter().find(|x| x.0 == f) else {
            return Err(format!("`{f}` is not a fit function"));
        };
        if args.len() != *arity || args.iter().any(|a| matches!(a, Arg::Str(_))) {
            return Err(format!("`{f}` takes {arity} number(s)"));
        }
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_are_checked() {
        assert!(check_expr("x * app_ceiling / 225").is_ok());
        assert!(check_expr("max(x, round(1.5 * app_ceiling))").is_ok());
        let e = check_expr("x * knee.cpu").unwrap_err();
        assert!(e.contains("knee.cpu"), "{e}");
        let e = check_expr("sqrt(x)").unwrap_err();
        assert!(e.contains("sqrt"), "{e}");
        let e = check_expr("max(x)").unwrap_err();
        assert!(e.contains("takes 2"), "{e}");
        assert!(check_expr("x *").is_err());
        assert!(check_expr("x / w_ms").is_ok());
    }

    /// `x / 0` and other constant faults fail validation, in a rule and in `calibrate.peak`;
    /// a name that may be 0 is the evaluation's to catch.
    #[test]
    fn constant_faults_fail_validation() {
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/experiments/exp1.yaml"
        ))
        .unwrap();
        let mut e: Experiment = serde_yaml::from_str(&src).unwrap();
        let errors = |e: &Experiment| {
            let mut d = Vec::new();
            check_fit(Path::new("exp1.yaml"), e, &mut d);
            d.into_iter()
                .map(|d| format!("{}: {}", d.field, d.message))
                .collect::<Vec<_>>()
        };
        assert_eq!(errors(&e), Vec::<String>::new());
        for (bad, says) in [
            ("x / 0", "`(x / 0)` divides by zero"),
            ("x / (1 - 1)", "divides by zero"),
            ("min(x, 1 / 0)", "divides by zero"),
            ("x * 1e999", "is inf, not a finite number"),
            ("x + 1e308 * 10", "is inf, not a finite number"),
        ] {
            e.fit.as_mut().unwrap().rules[0].to = bad.into();
            let got = errors(&e);
            assert!(
                got.len() == 1 && got[0].starts_with("fit.rules[0].to: ") && got[0].contains(says),
                "{bad}: {got:?}"
            );
        }
        e.fit.as_mut().unwrap().rules[0].to = "x / w_ms".into();
        assert_eq!(errors(&e), Vec::<String>::new());
        e.fit.as_mut().unwrap().calibrate.peak = Some("app_ceiling / 0".into());
        let got = errors(&e);
        assert!(
            got[0].starts_with("fit.calibrate.peak: `(app_ceiling / 0)` divides"),
            "{got:?}"
        );
    }
}
