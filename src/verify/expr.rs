//! The small expression language of claims: numbers, dotted names, `+ - * /`, comparisons,
//! `and`/`or`/`not`, and a few functions (`log("laravel", "too many clients")`). Pure.
//!
//! A name is `[against.][selector.]quantity`: `failed_rate`, `knee.cpu.pg`, `lowest.p50_ms`,
//! `step550.p50_ms`, `against.knee`, `non200.500`. What the names mean is `quantity`'s job.
use std::fmt;
use thiserror::Error;

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
    pub const NAMES: [&'static str; 5] = ["lowest", "top", "knee", "last_passing", "below_knee"];

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
    fn parse(text: &str) -> Name {
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
                let v = y.eval(r)?;
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

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let err = |pos: usize, message: String| ParseError {
        message,
        pos,
        src: src.to_string(),
    };
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'-' || b[j] == b'+') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    i = j;
                    while i < b.len() && b[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let t = &src[start..i];
            let n: f64 = t
                .parse()
                .map_err(|_| err(start, format!("`{t}` is not a number")))?;
            out.push((Tok::Num(n), start));
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            // segments: [A-Za-z_][A-Za-z0-9_]* then (. [A-Za-z0-9_]+)*
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            while i + 1 < b.len()
                && b[i] == b'.'
                && (b[i + 1].is_ascii_alphanumeric() || b[i + 1] == b'_')
            {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
            }
            let t = &src[start..i];
            out.push((
                match t {
                    "and" => Tok::Op("and"),
                    "or" => Tok::Op("or"),
                    "not" => Tok::Op("not"),
                    _ => Tok::Ident(t.to_string()),
                },
                start,
            ));
            continue;
        }
        if c == '"' || c == '\'' {
            let q = b[i];
            i += 1;
            let s0 = i;
            while i < b.len() && b[i] != q {
                i += 1;
            }
            if i >= b.len() {
                return Err(err(start, "unterminated string".into()));
            }
            out.push((Tok::Str(src[s0..i].to_string()), start));
            i += 1;
            continue;
        }
        let two = src.get(i..i + 2).unwrap_or("");
        let op: Option<&'static str> = match two {
            "<=" => Some("<="),
            ">=" => Some(">="),
            "==" => Some("=="),
            "!=" => Some("!="),
            _ => None,
        };
        if let Some(op) = op {
            out.push((Tok::Op(op), start));
            i += 2;
            continue;
        }
        let tok = match c {
            '+' => Tok::Op("+"),
            '-' => Tok::Op("-"),
            '*' => Tok::Op("*"),
            '/' => Tok::Op("/"),
            '<' => Tok::Op("<"),
            '>' => Tok::Op(">"),
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            ',' => Tok::Comma,
            '=' => {
                return Err(err(
                    start,
                    "`=` is not an operator: compare with `==`".into(),
                ));
            }
            _ => return Err(err(start, format!("unexpected character `{c}`"))),
        };
        out.push((tok, start));
        i += 1;
    }
    Ok(out)
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    i: usize,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            pos: self.toks.get(self.i).map(|t| t.1).unwrap_or(self.src.len()),
            src: self.src.to_string(),
        }
    }
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }
    fn eat_op(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        if let Some(Tok::Op(o)) = self.peek()
            && let Some(found) = ops.iter().find(|x| *x == o)
        {
            self.i += 1;
            return Some(found);
        }
        None
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.and()?;
        while self.eat_op(&["or"]).is_some() {
            l = Expr::Bin(BinOp::Or, Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.not()?;
        while self.eat_op(&["and"]).is_some() {
            l = Expr::Bin(BinOp::And, Box::new(l), Box::new(self.not()?));
        }
        Ok(l)
    }
    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.eat_op(&["not"]).is_some() {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Expr, ParseError> {
        let l = self.add()?;
        let Some(op) = self.eat_op(&["<", "<=", ">", ">=", "==", "!="]) else {
            return Ok(l);
        };
        let op = match op {
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            _ => BinOp::Ne,
        };
        Ok(Expr::Bin(op, Box::new(l), Box::new(self.add()?)))
    }
    fn add(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.mul()?;
        while let Some(op) = self.eat_op(&["+", "-"]) {
            let op = if op == "+" { BinOp::Add } else { BinOp::Sub };
            l = Expr::Bin(op, Box::new(l), Box::new(self.mul()?));
        }
        Ok(l)
    }
    fn mul(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.unary()?;
        while let Some(op) = self.eat_op(&["*", "/"]) {
            let op = if op == "*" { BinOp::Mul } else { BinOp::Div };
            l = Expr::Bin(op, Box::new(l), Box::new(self.unary()?));
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat_op(&["-"]).is_some() {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.primary()
    }
    fn primary(&mut self) -> Result<Expr, ParseError> {
        let Some(t) = self.peek().cloned() else {
            return Err(self.err("the expression ends too early"));
        };
        match t {
            Tok::Num(n) => {
                self.i += 1;
                Ok(Expr::Num(n))
            }
            Tok::LParen => {
                self.i += 1;
                let e = self.or()?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err(self.err("missing `)`"));
                }
                self.i += 1;
                Ok(e)
            }
            Tok::Ident(id) => {
                self.i += 1;
                if self.peek() != Some(&Tok::LParen) {
                    return Ok(Expr::Name(Name::parse(&id)));
                }
                self.i += 1;
                let mut args = Vec::new();
                if self.peek() == Some(&Tok::RParen) {
                    self.i += 1;
                    return Ok(Expr::Call(id, args));
                }
                loop {
                    if let Some(Tok::Str(s)) = self.peek().cloned() {
                        self.i += 1;
                        args.push(Arg::Str(s));
                    } else {
                        args.push(Arg::Expr(self.or()?));
                    }
                    match self.peek() {
                        Some(Tok::Comma) => self.i += 1,
                        Some(Tok::RParen) => {
                            self.i += 1;
                            return Ok(Expr::Call(id, args));
                        }
                        _ => return Err(self.err(format!("expected `,` or `)` in `{id}(...)`"))),
                    }
                }
            }
            Tok::Str(_) => Err(self.err("a string is allowed only as a function argument, e.g. log(\"laravel\", \"too many clients\")")),
            Tok::Op(o) => Err(self.err(format!("unexpected `{o}`"))),
            Tok::RParen => Err(self.err("unexpected `)`")),
            Tok::Comma => Err(self.err("unexpected `,`")),
        }
    }
}

/// Parse an expression.
pub fn parse(src: &str) -> Result<Expr, ParseError> {
    let toks = lex(src)?;
    let mut p = Parser { src, toks, i: 0 };
    let e = p.or()?;
    if p.i < p.toks.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    Ok(e)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    struct Vars(BTreeMap<&'static str, f64>);
    impl Resolve for Vars {
        type Err = String;
        fn name(&mut self, n: &Name) -> Result<f64, String> {
            self.0
                .get(n.text.as_str())
                .copied()
                .ok_or_else(|| format!("no {}", n.text))
        }
        fn call(&mut self, f: &str, args: &[ArgValue<'_>]) -> Result<f64, String> {
            match (f, args) {
                ("len", [ArgValue::Str(s)]) => Ok(s.len() as f64),
                ("max", [ArgValue::Num(a), ArgValue::Num(b)]) => Ok(a.max(*b)),
                _ => Err(format!("bad call {f}")),
            }
        }
    }

    fn ev(src: &str) -> Result<f64, String> {
        let mut v = Vars(BTreeMap::from([
            ("max_children", 120.0),
            ("max_connections", 100.0),
            ("knee", 150.0),
            ("against.knee", 60.0),
            ("app_cpus", 1.0),
        ]));
        parse(src).map_err(|e| e.to_string())?.eval(&mut v)
    }

    #[test]
    fn arithmetic_precedence_and_parentheses() {
        assert_eq!(
            ev("(max_children - (max_connections - 3 - 1)) / max_children").unwrap(),
            0.2
        );
        assert_eq!(ev("1 + 2 * 3 - -1").unwrap(), 8.0);
        assert_eq!(ev("knee / against.knee").unwrap(), 2.5);
        assert_eq!(ev("1.5e2").unwrap(), 150.0);
    }

    #[test]
    fn comparisons_booleans_and_short_circuit() {
        assert_eq!(ev("app_cpus >= 2").unwrap(), 0.0);
        assert_eq!(ev("app_cpus >= 1 and knee == 150").unwrap(), 1.0);
        assert_eq!(ev("not app_cpus >= 2").unwrap(), 1.0);
        // the missing name on the right is never read
        assert_eq!(ev("app_cpus > 5 and nothing > 0").unwrap(), 0.0);
        assert_eq!(ev("app_cpus < 5 or nothing > 0").unwrap(), 1.0);
        assert_eq!(ev("nothing + 1").unwrap_err(), "no nothing");
    }

    #[test]
    fn functions_take_strings_and_expressions() {
        assert_eq!(ev("len(\"abc\") + max(knee, 200)").unwrap(), 203.0);
        assert_eq!(ev("len('too many clients')").unwrap(), 16.0);
    }

    #[test]
    fn names_split_into_against_selector_and_path() {
        let e = parse("against.knee.cpu.pg + step550.p50_ms + knee + non200.500").unwrap();
        let n = e.names();
        assert_eq!(n.len(), 4);
        assert!(n[0].against);
        assert_eq!(n[0].selector, Some(Selector::Knee));
        assert_eq!(n[0].path, "cpu.pg");
        assert_eq!(n[1].selector, Some(Selector::Target(550)));
        assert_eq!(n[1].path, "p50_ms");
        assert_eq!((n[2].selector, n[2].path.as_str()), (None, "knee"));
        assert_eq!(n[3].path, "non200.500");
    }

    #[test]
    fn parse_errors_point_at_the_problem() {
        let e = parse("failed_rate = 0.2").unwrap_err();
        assert_eq!(e.pos, 12);
        assert!(e.message.contains("=="), "{e}");
        assert!(parse("(1 + 2").unwrap_err().message.contains(")"));
        assert!(parse("1 +").unwrap_err().message.contains("ends too early"));
        assert!(parse("\"x\"").unwrap_err().message.contains("string"));
        assert!(parse("a b").unwrap_err().message.contains("after"));
        assert!(parse("a $ b").unwrap_err().message.contains("`$`"));
    }
}
