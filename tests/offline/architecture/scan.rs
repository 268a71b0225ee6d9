//! Reading Rust source as text: comments and literals blanked, `#[cfg(test)]` items cut out,
//! functions measured by brace matching, items counted by visibility.

/// `text` with every comment and the inside of every string, char and byte literal replaced by
/// spaces (newlines kept), so braces, `crate::` and `fn` found later are code.
pub fn mask(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = c.clone();
    let blank = |out: &mut Vec<char>, from: usize, to: usize| {
        for ch in out.iter_mut().take(to.min(c.len())).skip(from) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
    };
    let mut i = 0;
    while i < c.len() {
        let next = c.get(i + 1).copied();
        if c[i] == '/' && next == Some('/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if c[i] == '/' && next == Some('*') {
            let (mut depth, mut j) = (1, i + 2);
            while j < c.len() && depth > 0 {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 1;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 1;
                }
                j += 1;
            }
            blank(&mut out, i, j);
            i = j;
        } else if let Some((open, hashes)) = raw_string_start(&c, i) {
            let mut j = open + 1;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|k| c.get(j + k) == Some(&'#')))
            {
                j += 1;
            }
            blank(&mut out, open + 1, j);
            i = j + 1 + hashes;
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c[i] == '\'' {
            i = char_literal(&c, i).map_or(i + 1, |end| {
                blank(&mut out, i + 1, end);
                end + 1
            });
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

fn prev(c: &[char], i: usize) -> char {
    if i == 0 { ' ' } else { c[i - 1] }
}

pub fn ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// `r"`, `r#"`, `br##"`: the index of the opening quote and the number of hashes.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let start = if c[i] == 'b' && c.get(i + 1) == Some(&'r') {
        i + 1
    } else {
        i
    };
    if c[start] != 'r' || ident_char(prev(c, i)) {
        return None;
    }
    let hashes = c[start + 1..].iter().take_while(|&&x| x == '#').count();
    (c.get(start + 1 + hashes) == Some(&'"')).then_some((start + 1 + hashes, hashes))
}

/// The closing quote of a char literal opening at `i`, or None for a lifetime (`'a`).
fn char_literal(c: &[char], i: usize) -> Option<usize> {
    if c.get(i + 1) == Some(&'\\') {
        let close = c[i + 2..].iter().take(10).position(|&x| x == '\'')?;
        return Some(i + 2 + close);
    }
    (c.get(i + 2) == Some(&'\'')).then_some(i + 2)
}

/// The index of the brace closing the one at `open` in masked text, if any.
pub fn matching_brace(c: &[char], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, &ch) in c.iter().enumerate().skip(open) {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first `{` or `;` at bracket depth 0 from `from`: the end of an item's header.
pub fn header_end(c: &[char], from: usize) -> Option<(usize, char)> {
    let mut depth = 0i32;
    for (j, &ch) in c.iter().enumerate().skip(from) {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '{' | ';' if depth == 0 => return Some((j, ch)),
            _ => {}
        }
    }
    None
}

/// 1-based line of the char at `index`.
pub fn line_of(c: &[char], index: usize) -> usize {
    1 + c[..index.min(c.len())]
        .iter()
        .filter(|&&x| x == '\n')
        .count()
}

pub fn word_at(c: &[char], i: usize, word: &str) -> bool {
    let w: Vec<char> = word.chars().collect();
    c.get(i..i + w.len()) == Some(&w[..])
        && !ident_char(prev(c, i))
        && !c.get(i + w.len()).copied().is_some_and(ident_char)
}

pub fn ident_from(c: &[char], i: usize) -> String {
    c[i..].iter().take_while(|&&x| ident_char(x)).collect()
}

pub fn skip_ws(c: &[char], mut i: usize) -> usize {
    while i < c.len() && c[i].is_whitespace() {
        i += 1;
    }
    i
}

/// Masked text with every `#[cfg(test)]` item blanked, and the `mod` files those items include
/// (`mod tests;`, with its `#[path = ...]` if any, read from `original`).
pub struct Production {
    pub text: String,
    pub test_mods: Vec<TestMod>,
    /// 1-based inclusive line ranges that are test code.
    pub test_lines: Vec<(usize, usize)>,
}

pub struct TestMod {
    pub name: String,
    pub path_attr: Option<String>,
}

pub fn strip_cfg_test(masked: &str, original: &str) -> Production {
    let mut c: Vec<char> = masked.chars().collect();
    let orig: Vec<char> = original.chars().collect();
    let (mut test_mods, mut test_lines) = (Vec::new(), Vec::new());
    let needle: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut i = 0;
    while i + needle.len() <= c.len() {
        if c[i..i + needle.len()] != needle[..] {
            i += 1;
            continue;
        }
        let mut j = skip_ws(&c, i + needle.len());
        let mut path_attr = None;
        while c.get(j) == Some(&'#') {
            let close = c[j..]
                .iter()
                .position(|&x| x == ']')
                .map_or(c.len(), |p| j + p);
            let attr: String = orig[j..close].iter().collect();
            if let Some(p) = attr.split('"').nth(1).filter(|_| attr.contains("path")) {
                path_attr = Some(p.to_string());
            }
            j = skip_ws(&c, close + 1);
        }
        let Some((end, kind)) = header_end(&c, j) else {
            break;
        };
        let end = if kind == '{' {
            matching_brace(&c, end).unwrap_or(c.len() - 1)
        } else {
            end
        };
        let header: String = c[j..end.min(c.len())].iter().collect();
        let words: Vec<&str> = header.split_whitespace().collect();
        if kind == ';' && words.len() == 2 && words[0] == "mod" {
            test_mods.push(TestMod {
                name: words[1].to_string(),
                path_attr,
            });
        }
        test_lines.push((line_of(&c, i), line_of(&c, end)));
        for ch in c.iter_mut().take(end + 1).skip(i) {
            if *ch != '\n' {
                *ch = ' ';
            }
        }
        i = end + 1;
    }
    Production {
        text: c.into_iter().collect(),
        test_mods,
        test_lines,
    }
}

/// A function found in masked text: its name, the line of `fn`, and its length in lines
/// (from the `fn` line to its closing brace, both counted).
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

pub fn functions(masked: &str) -> Vec<Function> {
    let c: Vec<char> = masked.chars().collect();
    let mut found = Vec::new();
    for i in 0..c.len() {
        if !word_at(&c, i, "fn") {
            continue;
        }
        let name_at = skip_ws(&c, i + 2);
        let name = ident_from(&c, name_at);
        if name.is_empty() {
            continue; // a `fn(..)` pointer type
        }
        if let Some((open, '{')) = header_end(&c, name_at)
            && let Some(close) = matching_brace(&c, open)
        {
            let line = line_of(&c, i);
            found.push(Function {
                name,
                line,
                lines: line_of(&c, close) - line + 1,
            });
        }
    }
    found
}

/// Items by visibility: `pub`, `pub(crate)`, `pub(super)`/`pub(in ..)`, private.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Visibility {
    pub public: usize,
    pub crate_only: usize,
    pub restricted: usize,
    pub private: usize,
}

impl Visibility {
    pub fn total(&self) -> usize {
        self.public + self.crate_only + self.restricted + self.private
    }
    pub fn add(&mut self, o: Visibility) {
        self.public += o.public;
        self.crate_only += o.crate_only;
        self.restricted += o.restricted;
        self.private += o.private;
    }
}

const ITEM_KEYWORDS: [&str; 6] = ["fn", "struct", "enum", "trait", "const", "type"];
const QUALIFIERS: [&str; 4] = ["async", "unsafe", "extern", "const"];

/// Counts the fn/struct/enum/trait/const/type items of masked text that start a line, leaving
/// out the bodies of traits and trait impls (their items take no visibility of their own).
pub fn visibility(masked: &str) -> Visibility {
    let c: Vec<char> = masked.chars().collect();
    let skipped = trait_bodies(&c);
    let mut v = Visibility::default();
    let mut offset = 0;
    for line in masked.split('\n') {
        let inside = skipped.iter().any(|&(a, b)| offset > a && offset < b);
        offset += line.chars().count() + 1;
        if inside {
            continue;
        }
        let mut words = line.split_whitespace().peekable();
        let vis = match words.peek() {
            Some(&"pub") => 1,
            Some(w) if w.starts_with("pub(crate)") => 2,
            Some(w) if w.starts_with("pub(") => 3,
            _ => 0,
        };
        if vis > 0 {
            words.next();
        }
        let mut word = words.next().unwrap_or("");
        // `const fn`, `async`, `unsafe`, `extern "C"` (a `const NAME:` is the item itself)
        loop {
            let qualifier =
                QUALIFIERS.contains(&word) && words.peek().is_some_and(|w| !w.contains(':'));
            if !qualifier && !word.starts_with('"') {
                break;
            }
            word = words.next().unwrap_or("");
        }
        if ITEM_KEYWORDS.contains(&word) && words.peek().is_some_and(|w| w.starts_with(ident_char))
        {
            match vis {
                1 => v.public += 1,
                2 => v.crate_only += 1,
                3 => v.restricted += 1,
                _ => v.private += 1,
            }
        }
    }
    v
}

/// Char ranges of the bodies of `trait X { .. }` and `impl X for Y { .. }`.
fn trait_bodies(c: &[char]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for i in 0..c.len() {
        let is_trait = word_at(c, i, "trait");
        if !is_trait && !word_at(c, i, "impl") {
            continue;
        }
        let line_start = c[..i].iter().rposition(|&x| x == '\n').map_or(0, |p| p + 1);
        let before: String = c[line_start..i].iter().collect();
        let lead = before
            .split_whitespace()
            .all(|w| w.starts_with("pub") || w == "unsafe");
        if !lead {
            continue;
        }
        if let Some((open, '{')) = header_end(c, i) {
            let header: String = c[i..open].iter().collect();
            if is_trait || header.split_whitespace().any(|w| w == "for") {
                ranges.push((open, matching_brace(c, open).unwrap_or(c.len())));
            }
        }
    }
    ranges
}
