//! The claim language's tokens: numbers, dotted names, strings, operators, parentheses, commas.
use super::expr::{MAX_LEN, MAX_TOKENS, ParseError};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Num(f64),
    Ident(String),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
    Comma,
}

/// Tokens of `src` with the byte offset where each starts: at most [`MAX_TOKENS`] of a source
/// of at most [`MAX_LEN`] bytes, so what is built from them is bounded whatever the input.
pub(super) fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    if src.len() > MAX_LEN {
        return Err(ParseError {
            message: format!(
                "the expression is {} bytes long: at most {MAX_LEN}",
                src.len()
            ),
            pos: MAX_LEN,
            src: excerpt(src),
        });
    }
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if out.len() == MAX_TOKENS {
            return Err(err(
                src,
                i,
                format!(
                    "the expression has more than {MAX_TOKENS} tokens (names, numbers, operators)"
                ),
            ));
        }
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let (tok, end) =
            if c.is_ascii_digit() || (c == '.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
                number(src, start)?
            } else if c.is_ascii_alphabetic() || c == '_' {
                ident(src, start)
            } else if c == '"' || c == '\'' {
                string(src, start)?
            } else {
                operator(src, start)?
            };
        out.push((tok, start));
        i = end;
    }
    Ok(out)
}

/// The start of an over-long source, for its error message.
fn excerpt(src: &str) -> String {
    let end = (0..=60)
        .rev()
        .find(|i| src.is_char_boundary(*i))
        .unwrap_or(0);
    format!("{}...", &src[..end])
}

fn err(src: &str, pos: usize, message: String) -> ParseError {
    ParseError {
        message,
        pos,
        src: src.to_string(),
    }
}

/// A number starting at `start` (`12`, `.5`, `1.5e2`): the token and where it ends.
fn number(src: &str, start: usize) -> Result<(Tok, usize), ParseError> {
    let b = src.as_bytes();
    let mut i = start;
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
        .map_err(|_| err(src, start, format!("`{t}` is not a number")))?;
    Ok((Tok::Num(n), i))
}

/// A dotted name or a keyword (`and`, `or`, `not`) starting at `start`.
fn ident(src: &str, start: usize) -> (Tok, usize) {
    let b = src.as_bytes();
    let word = |i: usize| i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_');
    // segments: [A-Za-z_][A-Za-z0-9_]* then (. [A-Za-z0-9_]+)*
    let mut i = start;
    while word(i) {
        i += 1;
    }
    while i + 1 < b.len() && b[i] == b'.' && word(i + 1) {
        i += 1;
        while word(i) {
            i += 1;
        }
    }
    let t = &src[start..i];
    let tok = match t {
        "and" => Tok::Op("and"),
        "or" => Tok::Op("or"),
        "not" => Tok::Op("not"),
        _ => Tok::Ident(t.to_string()),
    };
    (tok, i)
}

/// A string in single or double quotes starting at `start`.
fn string(src: &str, start: usize) -> Result<(Tok, usize), ParseError> {
    let b = src.as_bytes();
    let q = b[start];
    let mut i = start + 1;
    let s0 = i;
    while i < b.len() && b[i] != q {
        i += 1;
    }
    if i >= b.len() {
        return Err(err(src, start, "unterminated string".into()));
    }
    Ok((Tok::Str(src[s0..i].to_string()), i + 1))
}

/// An operator, a parenthesis or a comma starting at `start`.
fn operator(src: &str, start: usize) -> Result<(Tok, usize), ParseError> {
    let two = src.get(start..start + 2).unwrap_or("");
    let op: Option<&'static str> = match two {
        "<=" => Some("<="),
        ">=" => Some(">="),
        "==" => Some("=="),
        "!=" => Some("!="),
        _ => None,
    };
    if let Some(op) = op {
        return Ok((Tok::Op(op), start + 2));
    }
    let c = src.as_bytes()[start] as char;
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
                src,
                start,
                "`=` is not an operator: compare with `==`".into(),
            ));
        }
        _ => return Err(err(src, start, format!("unexpected character `{c}`"))),
    };
    Ok((tok, start + 1))
}
