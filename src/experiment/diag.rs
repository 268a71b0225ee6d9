//! Diagnostics for catalog files: file, line/column, field, what is allowed, did-you-mean.
use std::fmt;
use std::path::{Path, PathBuf};

/// Error or warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding about one catalog file (or one `--set` override).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The file (or `--set` for overrides).
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    /// Dotted field path, e.g. `load.steps`; empty for the whole file.
    pub field: String,
    pub message: String,
    /// What to do about it (allowed values, did-you-mean, the fix).
    pub help: Option<String>,
}

impl Diagnostic {
    pub(crate) fn error(file: &Path, field: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: file.to_path_buf(),
            line: None,
            column: None,
            field: field.into(),
            message: message.into(),
            help: None,
        }
    }

    pub(crate) fn warning(
        file: &Path,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, field, message)
        }
    }

    pub(crate) fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub(crate) fn at(mut self, pos: Option<(usize, usize)>) -> Self {
        if let Some((l, c)) = pos {
            self.line = Some(l);
            self.column = Some(c);
        }
        self
    }

    /// Place the diagnostic on the line of its field in `src` (block-style YAML).
    pub(crate) fn located_in(self, src: &str) -> Self {
        let pos = locate(src, &self.field);
        self.at(pos)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {sev}: ")?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)?;
        if let Some(h) = &self.help {
            write!(f, "\n  help: {h}")?;
        }
        Ok(())
    }
}

/// Render a list of diagnostics, one per paragraph.
pub fn render(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The closest candidate to `word` if it is plausibly a typo of it.
pub(crate) fn did_you_mean<'a, I: IntoIterator<Item = &'a str>>(
    word: &str,
    candidates: I,
) -> Option<&'a str> {
    let mut best: Option<(&str, f64)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(word, c);
        let close = strsim::levenshtein(word, c) <= 2.max(word.len() / 3);
        if (score >= 0.8 || close) && best.is_none_or(|(_, s)| score > s) {
            best = Some((c, score));
        }
    }
    best.map(|(c, _)| c)
}

/// Line and column (1-based) of a dotted field path (`load.steps`, `load.steps[2]`) in
/// block-style YAML. Falls back to the deepest key found.
pub(crate) fn locate(src: &str, field: &str) -> Option<(usize, usize)> {
    if field.is_empty() {
        return None;
    }
    let mut parts: Vec<(&str, Option<usize>)> = Vec::new();
    for p in field.split('.') {
        match p.split_once('[') {
            Some((k, rest)) => parts.push((k, rest.trim_end_matches(']').parse().ok())),
            None => parts.push((p, None)),
        }
    }
    let lines: Vec<&str> = src.lines().collect();
    let mut found = None;
    let mut start = 0usize;
    let mut min_indent = 0usize;
    let mut end = lines.len();
    for (key, index) in parts {
        let mut hit = None;
        for (i, line) in lines.iter().enumerate().take(end).skip(start) {
            let indent = line.len() - line.trim_start().len();
            let t = line.trim_start();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if indent < min_indent && i > start {
                break;
            }
            // a block-list item's first key sits after its `- `
            let t = t.strip_prefix("- ").unwrap_or(t);
            if t.strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with(':'))
            {
                hit = Some((i, indent));
                break;
            }
        }
        let Some((i, indent)) = hit else { return found };
        found = Some((i + 1, indent + 1));
        // the block of this key ends at the next line with indent <= indent
        end = lines
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, l)| {
                let t = l.trim_start();
                !t.is_empty() && !t.starts_with('#') && l.len() - t.len() <= indent
            })
            .map(|(j, _)| j)
            .unwrap_or(lines.len());
        start = i + 1;
        min_indent = indent + 1;
        if let Some(idx) = index {
            // flow list on the same line: point at the key; block list: the idx-th "- " line
            let items: Vec<usize> = (start..end)
                .filter(|&j| lines[j].trim_start().starts_with("- "))
                .collect();
            if let Some(&j) = items.get(idx) {
                let col = lines[j].len() - lines[j].trim_start().len() + 1;
                found = Some((j + 1, col));
                // later keys are looked up inside this item only
                start = j;
                end = items.get(idx + 1).copied().unwrap_or(end);
            }
        }
    }
    found
}

/// Turn a serde_yaml error into a diagnostic with field, position, allowed values and did-you-mean.
pub(crate) fn from_serde(
    path: &Path,
    src: &str,
    e: &serde_yaml::Error,
    prefix: &str,
) -> Diagnostic {
    let full = e.to_string();
    let text = strip_position(&full);
    let text = text.as_str();
    let (mut field, msg) = match text.split_once(": ") {
        Some((p, m)) if !p.contains(' ') && !p.is_empty() => (p.to_string(), m.to_string()),
        _ => (String::new(), text.to_string()),
    };
    if field == "." {
        field.clear();
    }
    let mut help = None;
    let backticked: Vec<&str> = msg.split('`').skip(1).step_by(2).collect();
    if msg.starts_with("unknown field") || msg.starts_with("unknown variant") {
        if let Some((bad, allowed)) = backticked.split_first() {
            let what = if msg.starts_with("unknown field") {
                "keys"
            } else {
                "values"
            };
            let mut h = format!("allowed {what}: {}", allowed.join(", "));
            if let Some(s) = did_you_mean(bad, allowed.iter().copied()) {
                h = format!("did you mean `{s}`? {h}");
            }
            help = Some(h);
            if msg.starts_with("unknown field") {
                field = if field.is_empty() {
                    bad.to_string()
                } else {
                    format!("{field}.{bad}")
                };
            }
        }
    } else if msg.starts_with("missing field") {
        if let Some(f) = backticked.first() {
            help = Some(format!(
                "add `{f}:` (see experiments/exp1.yaml or experiments/1a.yaml for a full file)"
            ));
            field = if field.is_empty() {
                f.to_string()
            } else {
                format!("{field}.{f}")
            };
        }
    } else if msg.starts_with("invalid type") {
        help = Some(
            "check the value's type (numbers without quotes, lists as [a, b], true/false)".into(),
        );
    }
    let message = if prefix.is_empty() {
        msg
    } else {
        format!("{prefix}: {msg}")
    };
    let pos = e.location().map(|l| (l.line(), l.column()));
    let mut d = Diagnostic::error(path, field, message);
    d.help = help;
    let d = d.at(pos);
    if d.line.is_none() {
        d.located_in(src)
    } else {
        d
    }
}

/// Remove serde_yaml's " at line N column M" (the diagnostic carries the position itself).
fn strip_position(msg: &str) -> String {
    let Some(i) = msg.find(" at line ") else {
        return msg.to_string();
    };
    let rest = &msg[i + " at line ".len()..];
    let after_line = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let end = match after_line.strip_prefix(" column ") {
        Some(r) => r.trim_start_matches(|c: char| c.is_ascii_digit()),
        None => after_line,
    };
    format!("{}{}", &msg[..i], end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "id: x\nstack:\n  php:\n    max_children: 20\nload:\n  hold_s: 20\n  steps:\n    - 1\n    - 2\n";

    #[test]
    fn locates_nested_keys_and_list_items() {
        assert_eq!(locate(SRC, "stack.php.max_children"), Some((4, 5)));
        assert_eq!(locate(SRC, "load.hold_s"), Some((6, 3)));
        assert_eq!(locate(SRC, "load.steps[1]"), Some((9, 5)));
        assert_eq!(locate(SRC, "load.nope"), Some((5, 1)));
        assert_eq!(locate(SRC, "nope"), None);
    }

    #[test]
    fn locates_keys_inside_list_items() {
        let src = "id: x\nexpect:\n  - name: a\n    value: knee\n  - name: b\n    value: p95\n";
        assert_eq!(locate(src, "expect[1].value"), Some((6, 5)));
        assert_eq!(locate(src, "expect[0].value"), Some((4, 5)));
        assert_eq!(locate(src, "expect[1].name"), Some((5, 3)));
    }

    #[test]
    fn suggests_close_words_only() {
        let c = ["steps", "hold_s", "ramp_s"];
        assert_eq!(did_you_mean("stpes", c), Some("steps"));
        assert_eq!(did_you_mean("hold", c), Some("hold_s"));
        assert_eq!(did_you_mean("zzzzzz", c), None);
    }
}
