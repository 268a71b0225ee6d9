//! A claim as written (`schema::Claim`) compiled: its expressions parsed, its `at:` and its one
//! comparison checked. Static: what the names mean and whether a run has them is not asked here.
use super::expr::{Expr, Selector};
use super::parse::parse;
use super::schema::{Bound, Claim, StepAt, Tol};

/// Where the value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    Every,
    One(Selector),
}

/// The comparison of a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparison {
    Range {
        min: Option<(String, Expr)>,
        max: Option<(String, Expr)>,
    },
    Equals(String, Expr),
    Near(String, Expr, Tol),
}

/// A claim with its expressions parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub value: Expr,
    pub at: Option<At>,
    pub cmp: Comparison,
    pub needs: Vec<(String, Expr)>,
}

/// A problem with a claim as written: (field, message).
pub type ClaimError = (String, String);

fn bound(field: &str, b: &Bound) -> Result<(String, Expr), ClaimError> {
    match b {
        Bound::Num(n) => Ok((fmt_num(*n), Expr::Num(*n))),
        Bound::Expr(s) => parse(s)
            .map(|e| (s.clone(), e))
            .map_err(|e| (field.to_string(), e.to_string())),
    }
}

/// Parse `at:`.
pub fn parse_at(at: &StepAt) -> Result<At, String> {
    match at {
        StepAt::Target(t) => Ok(At::One(Selector::Target(*t))),
        StepAt::Name(n) if n == "every" => Ok(At::Every),
        StepAt::Name(n) => match n.parse::<u32>() {
            Ok(t) => Ok(At::One(Selector::Target(t))),
            Err(_) => Selector::parse(n)
                .filter(|s| !matches!(s, Selector::Target(_)))
                .map(At::One)
                .ok_or_else(|| format!("unknown step selector `{n}`")),
        },
    }
}

/// Parse the claim's expressions and its comparison (the checks of names are `validate`'s).
pub fn compile(c: &Claim) -> Result<Compiled, Vec<ClaimError>> {
    let mut errs = Vec::new();
    let value = parse(&c.value).map_err(|e| ("value".to_string(), e.to_string()));
    let at =
        c.at.as_ref()
            .map(parse_at)
            .transpose()
            .map_err(|e| ("at".into(), e));
    let mut needs = Vec::new();
    for (i, n) in c.needs.iter().enumerate() {
        match parse(n) {
            Ok(e) => needs.push((n.clone(), e)),
            Err(e) => errs.push((format!("needs[{i}]"), e.to_string())),
        }
    }
    let forms = [
        c.min.is_some() || c.max.is_some(),
        c.equals.is_some(),
        c.near.is_some(),
    ];
    let cmp = match forms.iter().filter(|x| **x).count() {
        0 => Err((
            String::new(),
            "no comparison: give `min`/`max`, `equals`, or `near` with `within`".to_string(),
        )),
        1 => {
            if let Some(n) = &c.near {
                match &c.within {
                    None => Err((
                        "within".to_string(),
                        "`near` needs `within` (absolute, e.g. 0.03, or relative, e.g. \"15%\")"
                            .to_string(),
                    )),
                    Some(w) => match w.parse() {
                        Ok(t) => bound("near", n).map(|(s, e)| Comparison::Near(s, e, t)),
                        Err(e) => Err(("within".to_string(), e)),
                    },
                }
            } else if c.within.is_some() {
                Err((
                    "within".to_string(),
                    "`within` applies only to `near`".to_string(),
                ))
            } else if let Some(e) = &c.equals {
                bound("equals", e).map(|(s, e)| Comparison::Equals(s, e))
            } else {
                let min = c.min.as_ref().map(|b| bound("min", b)).transpose();
                let max = c.max.as_ref().map(|b| bound("max", b)).transpose();
                match (min, max) {
                    (Ok(min), Ok(max)) => Ok(Comparison::Range { min, max }),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                }
            }
        }
        _ => Err((
            String::new(),
            "more than one comparison: use one of `min`/`max`, `equals`, `near`".to_string(),
        )),
    };
    let (value, at, cmp) = match (value, at, cmp) {
        (Ok(v), Ok(a), Ok(c)) => (v, a, c),
        (v, a, c) => {
            errs.extend(v.err());
            errs.extend(a.err());
            errs.extend(c.err());
            return Err(errs);
        }
    };
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Compiled {
        value,
        at,
        cmp,
        needs,
    })
}

/// Numbers as people read them: integers bare, else 1-4 significant decimals.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if (x - x.round()).abs() < 1e-9 && x.abs() < 1e12 {
        return format!("{}", x.round() as i64);
    }
    let s = if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::schema::Tolerance;

    fn claim(value: &str) -> Claim {
        Claim {
            name: "c".into(),
            claim: "c".into(),
            value: value.into(),
            at: None,
            min: None,
            max: None,
            equals: None,
            near: None,
            within: None,
            needs: vec![],
            against: None,
            refuted: None,
        }
    }

    #[test]
    fn numbers_read_like_a_person_writes_them() {
        assert_eq!(fmt_num(2.0), "2");
        assert_eq!(fmt_num(-2.0), "-2");
        assert_eq!(fmt_num(0.19216), "0.1922");
        assert_eq!(fmt_num(0.2), "0.2");
        assert_eq!(fmt_num(45.7712), "45.77");
        assert_eq!(fmt_num(823.66), "823.7");
    }

    #[test]
    fn at_accepts_names_and_targets() {
        assert_eq!(parse_at(&StepAt::Name("every".into())), Ok(At::Every));
        assert_eq!(
            parse_at(&StepAt::Name("knee".into())),
            Ok(At::One(Selector::Knee))
        );
        assert_eq!(
            parse_at(&StepAt::Target(550)),
            Ok(At::One(Selector::Target(550)))
        );
        assert_eq!(
            parse_at(&StepAt::Name("550".into())),
            Ok(At::One(Selector::Target(550)))
        );
        assert!(parse_at(&StepAt::Name("step550".into())).is_err());
        assert!(parse_at(&StepAt::Name("kne".into())).is_err());
    }

    #[test]
    fn compile_builds_one_comparison() {
        let mut c = claim("knee");
        c.min = Some(Bound::Num(1.0));
        c.max = Some(Bound::Expr("2 * max_children".into()));
        let k = compile(&c).unwrap();
        assert!(matches!(
            k.cmp,
            Comparison::Range {
                min: Some(_),
                max: Some(_)
            }
        ));
        let mut c = claim("knee");
        c.near = Some(Bound::Num(1.0));
        c.within = Some(Tolerance::Text("15%".into()));
        assert!(
            matches!(compile(&c).unwrap().cmp, Comparison::Near(_, _, Tol::Rel(r)) if (r - 0.15).abs() < 1e-12)
        );
        let c = claim("knee +");
        let e = compile(&c).unwrap_err();
        assert!(e.iter().any(|(f, _)| f == "value"));
        assert!(e.iter().any(|(_, m)| m.contains("no comparison")));
    }
}
