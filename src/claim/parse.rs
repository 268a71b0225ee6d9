//! The claim language's parser: precedence climbing over `lex`'s tokens into an `Expr`, its
//! recursion (parentheses, calls, `-`, `not`) at most [`MAX_NESTING`] deep.
use super::expr::{Arg, BinOp, Expr, MAX_NESTING, Name, ParseError};
use super::lex::{Tok, lex};

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    i: usize,
    /// How many parentheses, calls, `-` and `not` enclose the current token.
    depth: usize,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            pos: self.toks.get(self.i).map(|t| t.1).unwrap_or(self.src.len()),
            src: self.src.to_string(),
        }
    }
    /// Parse one nested part with `f`, refusing to nest past [`MAX_NESTING`] levels.
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, ParseError>,
    ) -> Result<T, ParseError> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(format!(
                "nested deeper than {MAX_NESTING} levels (parentheses, function calls, `-`, `not`)"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
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
            return Ok(Expr::Not(Box::new(self.nested(Self::not)?)));
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
            return Ok(Expr::Neg(Box::new(self.nested(Self::unary)?)));
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
                let e = self.nested(Self::or)?;
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
                        args.push(Arg::Expr(self.nested(Self::or)?));
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
    let mut p = Parser {
        src,
        toks,
        i: 0,
        depth: 0,
    };
    let e = p.or()?;
    if p.i < p.toks.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::expr::{ArgValue, MAX_NESTING, Resolve, Selector};
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

    #[test]
    fn nesting_length_and_tokens_are_bounded() {
        let parens = |n: usize| format!("{}1{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(ev(&parens(MAX_NESTING)).unwrap(), 1.0);
        let e = parse(&parens(MAX_NESTING + 1)).unwrap_err();
        assert!(e.message.contains("nested deeper than 64"), "{e}");
        assert_eq!(e.pos, MAX_NESTING + 1, "at the token nested too deep");
        let mins = format!("{}1{}", "max(1, ".repeat(65), ")".repeat(65));
        assert!(parse(&mins).unwrap_err().message.contains("nested deeper"));
        let negs = format!("{}1", "-".repeat(65));
        assert!(parse(&negs).unwrap_err().message.contains("nested deeper"));
        let nots = format!("{}1", "not ".repeat(65));
        assert!(parse(&nots).unwrap_err().message.contains("nested deeper"));
        // a long sum is not nested, but its tokens are counted
        let sum = |n: usize| format!("1{}", " + 1".repeat(n));
        assert_eq!(ev(&sum(255)).unwrap(), 256.0);
        let e = parse(&sum(256)).unwrap_err();
        assert!(e.message.contains("more than 512 tokens"), "{e}");
        let long = format!("x{}", "*x".repeat(100_000));
        let e = parse(&long).unwrap_err();
        assert!(e.message.contains("200001 bytes long: at most 4096"), "{e}");
        assert!(
            e.to_string().len() < 200,
            "the message quotes an excerpt: {e}"
        );
    }

    /// The largest trees the limits let through parse, evaluate, print and drop on a 1 MiB
    /// stack (debug build; a test thread has 2 MiB, the main thread 8 MiB).
    #[test]
    fn the_largest_trees_fit_a_small_stack() {
        let chain = format!("knee{}", " - 1".repeat(255));
        // each `max(1, -(` nests three levels: 21 of them and `not` make 64
        let nest = format!("not {}knee{}", "max(1, -(".repeat(21), "))".repeat(21));
        let run = move || {
            for src in [&chain, &nest] {
                let e = parse(src).unwrap();
                let _ = e.to_string();
                let _ = (e.names().len(), e.constant_fault());
                let mut v = Vars(BTreeMap::from([("knee", 1.0)]));
                e.eval(&mut v).unwrap();
            }
        };
        std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn constant_faults_are_found_inside_any_expression() {
        let fault = |s: &str| parse(s).unwrap().constant_fault();
        assert!(fault("knee / 0").unwrap().contains("divides by zero"));
        assert!(
            fault("max(knee, 1 / (2 - 2))")
                .unwrap()
                .contains("divides by zero")
        );
        assert!(fault("knee * 1e999").unwrap().contains("inf"));
        assert!(fault("-(1e308 * 10) + knee").unwrap().contains("is inf"));
        assert_eq!(fault("knee / (2 - 1) + 0 / 1"), None);
        assert_eq!(fault("knee / knee"), None);
    }
}
