//! The one table model of perflab's output, rendered as aligned text or as Markdown: the
//! report's blocks, `verify`, `compare`, `capacity`, `list` and the tools' reports.

#[derive(Debug, Clone, Default)]
pub struct Table {
    /// The header row; empty: no header line.
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Columns aligned left (others right).
    pub left: Vec<usize>,
    /// Text: these column widths instead of the widest cell's (a wider cell overflows its row).
    pub widths: Option<Vec<usize>>,
    /// Text: no column is padded wider than this.
    pub max_width: Option<usize>,
    /// Text: what stands after column `i` (default two spaces).
    pub gaps: Vec<&'static str>,
    /// Text: put before every line.
    pub indent: &'static str,
    /// Text: lines printed under a row: (row index, line).
    pub below: Vec<(usize, String)>,
    /// Markdown: `|---|` rules instead of `:---` / `---:` alignment.
    pub plain_rule: bool,
}

impl Table {
    pub(crate) fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            left: vec![0],
            ..Default::default()
        }
    }

    /// A table without a header line, `columns` wide, every column aligned left.
    pub(crate) fn headless(columns: usize) -> Self {
        Table {
            left: (0..columns).collect(),
            ..Default::default()
        }
    }

    pub(crate) fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    fn widths(&self) -> Vec<usize> {
        if let Some(w) = &self.widths {
            return w.clone();
        }
        let columns = match self.headers.len() {
            0 => self.rows.iter().map(Vec::len).max().unwrap_or(0),
            n => n,
        };
        let mut w = vec![0; columns];
        for r in std::iter::once(&self.headers).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(columns) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        if let Some(cap) = self.max_width {
            w.iter_mut().for_each(|x| *x = (*x).min(cap));
        }
        w
    }

    fn line(&self, w: &[usize], cells: &[String]) -> String {
        let mut s = self.indent.to_string();
        for (i, c) in cells.iter().enumerate() {
            let pad = w
                .get(i)
                .copied()
                .unwrap_or(0)
                .saturating_sub(c.chars().count());
            if i > 0 {
                s.push_str(self.gaps.get(i - 1).copied().unwrap_or("  "));
            }
            if self.left.contains(&i) {
                s.push_str(c);
                if i + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    }

    pub(crate) fn to_text(&self) -> String {
        let w = self.widths();
        let mut out = String::new();
        if !self.headers.is_empty() {
            out.push_str(&self.line(&w, &self.headers));
            out.push('\n');
        }
        for (k, r) in self.rows.iter().enumerate() {
            out.push_str(&self.line(&w, r));
            out.push('\n');
            for (_, l) in self.below.iter().filter(|(i, _)| *i == k) {
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    pub(crate) fn to_markdown(&self) -> String {
        let row = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = row(&self.headers);
        out.push('|');
        for i in 0..self.headers.len() {
            out.push_str(match (self.plain_rule, self.left.contains(&i)) {
                (true, _) => "---|",
                (false, true) => ":---|",
                (false, false) => "---:|",
            });
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&row(r));
        }
        out
    }
}

/// One titled block of output: lines, a table, lines after the table. The report's sections,
/// and the text of `verify`, `compare`, `capacity` and the tools, are blocks.
#[derive(Debug, Clone, Default)]
pub struct Block {
    pub title: String,
    pub lines: Vec<String>,
    pub table: Option<Table>,
    /// Lines printed after the table.
    pub notes: Vec<String>,
}

impl Block {
    pub(crate) fn new(title: &str) -> Block {
        Block {
            title: title.into(),
            ..Default::default()
        }
    }

    /// The block as text without its title: lines, the table, notes.
    pub fn body_text(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(l);
            out.push('\n');
        }
        if let Some(t) = &self.table {
            out.push_str(&t.to_text());
        }
        for n in &self.notes {
            out.push_str(n);
            out.push('\n');
        }
        out
    }

    /// The block as Markdown without its title: lines with hard breaks, the table, notes as
    /// paragraphs.
    pub(crate) fn body_markdown(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&format!("{}  \n", l.trim_start()));
        }
        if !self.lines.is_empty() {
            out.push('\n');
        }
        if let Some(t) = &self.table {
            out.push_str(&t.to_markdown());
            out.push('\n');
        }
        for n in &self.notes {
            out.push_str(&format!("{n}\n\n"));
        }
        out
    }
}

/// Blocks as plain text, one after the other: each title (when not empty) on its own line,
/// then the body.
pub(crate) fn blocks_text(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        if !b.title.is_empty() {
            out.push_str(&b.title);
            out.push('\n');
        }
        out.push_str(&b.body_text());
    }
    out
}

/// A Markdown table cell: `|` escaped, on one line.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Markdown that renders as the text it says, whatever data it carries: [`plain`] (control
/// characters shown as escapes), and no HTML and no link from data: a `<` that could open a
/// tag, a comment or an autolink (before a letter, `/`, `!` or `?`) is written `&lt;`, a `]`
/// that could close a link text or start a link definition (before `(`, `[` or `:`) is
/// written `\]`. Comparisons (`p95 <= 100`, `> 0`) and ranges (`fail [1,3]`) are left as
/// they are. Every Markdown file and listing goes through it; perflab's own links (report.md's
/// plots) are added after.
///
/// [`plain`]: crate::output::plain
pub(crate) fn md_text(s: &str) -> String {
    let s = crate::output::plain(s);
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        match (c, next) {
            ('<', Some(n)) if n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?') => {
                out.push_str("&lt;")
            }
            (']', Some('(' | '[' | ':')) => out.push_str("\\]"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn aligned_and_markdown() {
        let mut t = Table::new(["step", "p95"]);
        t.push(vec!["r0060".into(), "18.0".into()]);
        t.push(vec!["r0180".into(), "1,113".into()]);
        assert_eq!(t.to_text(), "step     p95\nr0060   18.0\nr0180  1,113\n");
        assert!(t.to_markdown().starts_with("| step | p95 |\n|:---|---:|\n"));
        t.plain_rule = true;
        t.push(vec!["a|b".into(), "x\ny".into()]);
        assert!(t.to_markdown().starts_with("| step | p95 |\n|---|---|\n"));
        assert!(t.to_markdown().ends_with("| a\\|b | x y |\n"));
    }

    #[test]
    fn markdown_from_data_carries_no_html_and_no_link() {
        let log = "<script>alert(1)</script> <!-- x --> <img src=x onerror=alert(1)> </p>";
        let md = md_text(log);
        assert!(
            !md.contains("<s") && !md.contains("<!") && !md.contains("<i") && !md.contains("</"),
            "{md}"
        );
        assert!(md.starts_with("&lt;script>alert(1)&lt;/script>"), "{md}");
        assert_eq!(
            md_text("[x](javascript:alert(1))"),
            "[x\\](javascript:alert(1))"
        );
        assert_eq!(
            md_text("[x]: javascript:alert(1)"),
            "[x\\]: javascript:alert(1)"
        );
        assert_eq!(
            md_text("<https://evil.example>"),
            "&lt;https://evil.example>"
        );
        assert_eq!(md_text("tag \u{1b}[2J"), "tag \\u001b[2J");
        let own = "p95 <= 100 ms, queue > 0, fail [1,3], a < b, SQLSTATE[08006] x";
        assert_eq!(md_text(own), own);
    }

    #[test]
    fn fixed_widths_gaps_indent_and_lines_below() {
        let mut t = Table::headless(3);
        t.left = vec![0];
        t.widths = Some(vec![4, 3, 3]);
        t.gaps = vec![" ", "  "];
        t.indent = "> ";
        t.push(vec!["a".into(), "1".into(), "22".into()]);
        t.push(vec!["wider".into(), "1234".into(), "".into()]);
        t.below = vec![(0, "  note".into())];
        assert_eq!(t.to_text(), "> a      1   22\n  note\n> wider 1234\n");
    }

    #[test]
    fn widths_are_capped() {
        let mut t = Table::new(["k", "v"]);
        t.left = vec![0, 1];
        t.max_width = Some(3);
        t.push(vec!["abcdef".into(), "x".into()]);
        t.push(vec!["ab".into(), "y".into()]);
        assert_eq!(t.to_text(), "k    v\nabcdef  x\nab   y\n");
    }
}
