//! The small expression language of claims: numbers, dotted names, `+ - * /`, comparisons,
//! `and`/`or`/`not`, and a few functions (`log("laravel", "too many clients")`). Pure.
//!
//! A name is `[against.][selector.]quantity`: `failed_rate`, `knee.cpu.pg`, `lowest.p50_ms`,
//! `step550.p50_ms`, `against.knee`, `non200.500`. What the names mean is `quantity`'s job.
//!
//! An expression is small by construction: [`parse`] refuses a source over [`MAX_LEN`] bytes or
//! [`MAX_TOKENS`] tokens and nesting past [`MAX_NESTING`], so a tree has at most `MAX_TOKENS`
//! nodes and the recursive walks below (evaluation, display, drop) stay shallow.
use std::fmt;
use thiserror::Error;

/// Longest expression source (bytes); the catalog's are under 100.
pub(crate) const MAX_LEN: usize = 4096;
/// Most tokens in one expression (also bounds its nodes, hence its depth).
pub(crate) const MAX_TOKENS: usize = 512;
/// Deepest nesting of parentheses, function calls, `-` and `not`.
pub(crate) const MAX_NESTING: usize = 64;

/// A parse error with the byte offset where it was found.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{message} (at character {pos} of `{src}`)")]
pub struct ParseError {
    pub message: String,
    pub pos: usize,
    pub src: String,
}

/// Which step a qualified name reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selector {
    Lowest,
    Top,
    Knee,
    LastPassing,
    BelowKnee,
    /// The step whose target is this number (rps or VUs).
    Target(u32),
}

impl Selector {
    pub fn parse(word: &str) -> Option<Selector> {
        Some(match word {
            "lowest" => Selector::Lowest,
            "top" => Selector::Top,
            "knee" => Selector::Knee,
            "last_passing" => Selector::LastPassing,
            "below_knee" => Selector::BelowKnee,
            w => Selector::Target(w.strip_prefix("step")?.parse().ok()?),
        })
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Lowest => f.write_str("lowest"),
            Selector::Top => f.write_str("top"),
            Selector::Knee => f.write_str("knee"),
            Selector::LastPassing => f.write_str("last_passing"),
            Selector::BelowKnee => f.write_str("below_knee"),
            Selector::Target(t) => write!(f, "step{t}"),
        }
    }
}

/// A name as written, split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    /// The full text as written (for display).
    pub text: String,
    /// `against.`: read the other experiment's run.
    pub against: bool,
    /// `knee.`, `lowest.`, `step550.`: read that step instead of the claim's `at`.
    pub selector: Option<Selector>,
    /// The quantity, e.g. `cpu.pg`, `failed_rate`, `knee`.
    pub path: String,
}

impl Name {
    pub(super) fn parse(text: &str) -> Name {
        let mut rest = text;
        let mut against = false;
        if let Some(r) = rest.strip_prefix("against.") {
            against = true;
            rest = r;
        }
        let mut selector = None;
        if let Some((first, tail)) = rest.split_once('.')
            && let Some(s) = Selector::parse(first)
        {
            selector = Some(s);
            rest = tail;
        }
        Name {
            text: text.to_string(),
            against,
            selector,
            path: rest.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    fn as_str(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A function argument: a string literal or an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Str(String),
    Expr(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Name(Name),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Call(String, Vec<Arg>),
}

impl Expr {
    /// Every name in the expression, in order of appearance (repeats kept).
    pub fn names(&self) -> Vec<&Name> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Name(n) = e {
                out.push(n);
            }
        });
        out
    }

    /// Every function call: (function, arguments).
    pub fn calls(&self) -> Vec<(&str, &[Arg])> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if let Expr::Call(f, a) = e {
                out.push((f.as_str(), a.as_slice()));
            }
        });
        out
    }

    fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match self {
            Expr::Num(_) | Expr::Name(_) => {}
            Expr::Neg(e) | Expr::Not(e) => e.walk(f),
            Expr::Bin(_, a, b) => {
                a.walk(f);
                b.walk(f);
            }
            Expr::Call(_, args) => {
                for a in args {
                    if let Arg::Expr(e) = a {
                        e.walk(f);
                    }
                }
            }
        }
    }

    /// A bare number.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            Expr::Num(n) => Some(*n),
            Expr::Neg(e) => e.as_number().map(|n| -n),
            _ => None,
        }
    }

    /// The first fault of the expression's constant parts: a division by a constant zero
    /// (`x / 0`, `x / (1 - 1)`) or a constant that is not a finite number (`1e999`,
    /// `1e308 * 10`). Names and calls are not constant; their arguments are checked.
    pub fn constant_fault(&self) -> Option<String> {
        self.fold().err()
    }

    /// The value when constant (`None` when it reads a name or calls a function), or a fault.
    fn fold(&self) -> Result<Option<f64>, String> {
        let v = match self {
            Expr::Num(n) => Some(*n),
            Expr::Name(_) => None,
            Expr::Neg(x) => x.fold()?.map(|v| -v),
            Expr::Not(x) => x.fold()?.map(|v| f64::from(u8::from(v == 0.0))),
            Expr::Bin(op, x, y) => {
                let (l, r) = (x.fold()?, y.fold()?);
                if *op == BinOp::Div && r == Some(0.0) {
                    return Err(format!("`{self}` divides by zero"));
                }
                l.zip(r).map(|(l, r)| binop(*op, l, r))
            }
            Expr::Call(_, args) => {
                for a in args {
                    if let Arg::Expr(e) = a {
                        e.fold()?;
                    }
                }
                None
            }
        };
        match v {
            Some(v) if !v.is_finite() => Err(format!("`{self}` is {v}, not a finite number")),
            v => Ok(v),
        }
    }

    /// Evaluate: `r` resolves names and functions. Comparisons and `and`/`or`/`not` give
    /// 1 (true) or 0 (false); `and`/`or` short-circuit, so `knee > 0 and ...` guards.
    pub fn eval<R: Resolve + ?Sized>(&self, r: &mut R) -> Result<f64, R::Err> {
        let b = |x: bool| if x { 1.0 } else { 0.0 };
        Ok(match self {
            Expr::Num(n) => *n,
            Expr::Name(n) => r.name(n)?,
            Expr::Neg(x) => -x.eval(r)?,
            Expr::Not(x) => b(x.eval(r)? == 0.0),
            Expr::Bin(op, x, y) => {
                let l = x.eval(r)?;
                match op {
                    BinOp::And if l == 0.0 => return Ok(0.0),
                    BinOp::Or if l != 0.0 => return Ok(1.0),
                    _ => {}
                }
                binop(*op, l, y.eval(r)?)
            }
            Expr::Call(f, args) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(match a {
                        Arg::Str(s) => ArgValue::Str(s.as_str()),
                        Arg::Expr(e) => ArgValue::Num(e.eval(r)?),
                    });
                }
                r.call(f, &vals)?
            }
        })
    }
}

/// `l op v` (`and`/`or` once not short-circuited: the truth of `v`); truths are 1 or 0.
fn binop(op: BinOp, l: f64, v: f64) -> f64 {
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    let close = (l - v).abs() <= 1e-9 * l.abs().max(v.abs()).max(1.0);
    match op {
        BinOp::Add => l + v,
        BinOp::Sub => l - v,
        BinOp::Mul => l * v,
        BinOp::Div => l / v,
        BinOp::Lt => b(l < v),
        BinOp::Le => b(l <= v),
        BinOp::Gt => b(l > v),
        BinOp::Ge => b(l >= v),
        BinOp::Eq => b(close),
        BinOp::Ne => b(!close),
        BinOp::And | BinOp::Or => b(v != 0.0),
    }
}

/// An evaluated function argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue<'a> {
    Str(&'a str),
    Num(f64),
}

/// What an expression's names and functions mean.
pub trait Resolve {
    type Err;
    fn name(&mut self, n: &Name) -> Result<f64, Self::Err>;
    fn call(&mut self, f: &str, args: &[ArgValue<'_>]) -> Result<f64, Self::Err>;
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(n) => write!(f, "{n}"),
            Expr::Name(n) => f.write_str(&n.text),
            Expr::Neg(e) => write!(f, "-{e}"),
            Expr::Not(e) => write!(f, "not {e}"),
            Expr::Bin(op, a, b) => write!(f, "({a} {} {b})", op.as_str()),
            Expr::Call(name, args) => {
                write!(f, "{name}(")?;
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    match a {
                        Arg::Str(s) => write!(f, "{s:?}")?,
                        Arg::Expr(e) => write!(f, "{e}")?,
                    }
                }
                f.write_str(")")
            }
        }
    }
}
