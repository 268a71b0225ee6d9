//! The claim language's parser: precedence climbing over `lex`'s tokens into an `Expr`.
use super::expr::{Arg, BinOp, Expr, Name, ParseError};
use super::lex::{Tok, lex};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::expr::{ArgValue, Resolve, Selector};
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
