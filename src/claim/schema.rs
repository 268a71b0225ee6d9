//! A claim as an experiment file writes it under `expect:` (YAML), before compiling.
use serde::{Deserialize, Serialize};

/// One checkable claim of the experiment's finding, evaluated by `perflab verify` on a
/// recorded run: `value` (an expression over measured quantities and the run's config) must
/// satisfy exactly one comparison: `min` and/or `max`, `equals`, or `near` with `within`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Short id, unique in the file (`error-rate`).
    pub name: String,
    /// The finding in one sentence, as the findings report prints it.
    pub claim: String,
    /// What is measured: `failed_rate`, `knee / against.knee`, `cpu.pg`, `log("laravel", "too many clients")`.
    pub value: String,
    /// The step that unqualified step quantities read: `every`, `lowest`, `top`, `knee`,
    /// `last_passing`, `below_knee`, or a step's target (`550`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<StepAt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<Bound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<Bound>,
    /// Tolerance of `near`: absolute (`0.03`) or relative (`"15%"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Tolerance>,
    /// Conditions on the run's config or CPU layout (`app_cpus >= 2`); when one does not
    /// hold the claim is "n/a" (cannot be tested there), never a pass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub needs: Vec<String>,
    /// Another experiment whose newest complete run `against.` names read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
    /// The finding does not reproduce where perflab measured it, with the evidence written
    /// down: the claim is still judged on every run, a failing reading is `refuted` (known, not
    /// a regression), a holding one fails (the mark is stale and must go).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refuted: Option<Refuted>,
}

/// `refuted:` of a claim: why the finding does not reproduce, with numbers, and where the
/// measurements that show it are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Refuted {
    /// What was measured against the claim, in one or two sentences with the numbers.
    pub why: String,
    /// The page and section that hold the measurements: `docs/<page>.md#<anchor>`.
    pub evidence: String,
}

impl Refuted {
    /// The longest `why` accepted, in characters (a report row, not a journal).
    pub const MAX_WHY: usize = 600;

    /// `evidence` reads `docs/<page>.md#<anchor>` with a page of lowercase letters, digits,
    /// `-`, `_` and `/` (no `..`) and an anchor of lowercase letters, digits and `-`.
    pub fn is_docs_section(&self) -> bool {
        let Some((page, anchor)) = self.evidence.split_once('#') else {
            return false;
        };
        let Some(name) = page
            .strip_prefix("docs/")
            .and_then(|p| p.strip_suffix(".md"))
        else {
            return false;
        };
        let page_ok = !name.is_empty()
            && !name.split('/').any(|s| s.is_empty() || s == "..")
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_/".contains(&b));
        let anchor_ok = !anchor.is_empty()
            && anchor
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        page_ok && anchor_ok
    }
}

/// `at:` a named step selector or a step's target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepAt {
    Target(u32),
    Name(String),
}

/// A bound: a number or an expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bound {
    Num(f64),
    Expr(String),
}

/// `within:` an absolute tolerance or a relative one written `"15%"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Tolerance {
    Abs(f64),
    Text(String),
}

/// A parsed tolerance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tol {
    Abs(f64),
    /// Fraction of the reference (0.15 = 15 %).
    Rel(f64),
}

impl Tolerance {
    /// `0.03` or `"0.03"` -> absolute; `"15%"` -> relative 0.15.
    pub fn parse(&self) -> Result<Tol, String> {
        match self {
            Tolerance::Abs(a) if *a >= 0.0 => Ok(Tol::Abs(*a)),
            Tolerance::Abs(a) => Err(format!("{a} is negative")),
            Tolerance::Text(t) => {
                let t = t.trim();
                let (num, rel) = match t.strip_suffix('%') {
                    Some(n) => (n.trim(), true),
                    None => (t, false),
                };
                let v: f64 = num
                    .parse()
                    .map_err(|_| format!("`{t}` is neither a number nor a percentage"))?;
                if v < 0.0 {
                    return Err(format!("`{t}` is negative"));
                }
                Ok(if rel {
                    Tol::Rel(v / 100.0)
                } else {
                    Tol::Abs(v)
                })
            }
        }
    }
}
