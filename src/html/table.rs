//! A report's `Table` as HTML, the one rendering every page's tables share.
use super::report_page::esc;
use crate::report::table::Table;

/// Marks a failed cell: `Some(label)` (the failed criterion numbers, maybe empty), or `None`.
pub(crate) type Mark<'a> = &'a dyn Fn(usize, usize) -> Option<String>;

/// A table as HTML: a scrolling box, right-aligned numeric columns, failed cells marked.
pub(crate) fn table_html(t: &Table, mark: Mark) -> String {
    table_html_with(t, mark, false)
}

/// [`table_html`], each header the glossary explains (`report::glossary`) with its
/// explanation as a tooltip (`title`, escaped like the text).
pub(super) fn table_html_with(t: &Table, mark: Mark, glossed: bool) -> String {
    if t.rows.is_empty() {
        return "<p class=\"note\">(no rows in this report)</p>\n".into();
    }
    let mut out = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    let align = |i: usize| if t.left.contains(&i) { "l" } else { "r" };
    for (i, h) in t.headers.iter().enumerate() {
        let title = crate::report::glossary::lookup(h)
            .filter(|_| glossed)
            .map(|x| format!(" title=\"{}: {}\"", esc(x.term), esc(x.text)))
            .unwrap_or_default();
        out.push_str(&format!(
            "<th class=\"{}\"{title}>{}</th>",
            align(i),
            esc(h)
        ));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (ri, row) in t.rows.iter().enumerate() {
        out.push_str("<tr>");
        for (ci, c) in row.iter().enumerate() {
            match mark(ri, ci) {
                None => out.push_str(&format!("<td class=\"{}\">{}</td>", align(ci), esc(c))),
                Some(n) if n.is_empty() => {
                    out.push_str(&format!("<td class=\"{} fail\">{}</td>", align(ci), esc(c)))
                }
                Some(n) => out.push_str(&format!(
                    "<td class=\"{} fail\" title=\"fails criterion {n}\">{}<sup>✗{n}</sup></td>",
                    align(ci),
                    esc(c)
                )),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

pub(crate) fn no_marks(_: usize, _: usize) -> Option<String> {
    None
}
