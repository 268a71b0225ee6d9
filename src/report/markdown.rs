//! `report.md`: the same content as Markdown tables, with the SVG plots embedded; the data in
//! it carries no HTML and no link (`table::md_text`).
use super::content::blocks;
use super::table::md_text;
use crate::analyze::Report;
use crate::rundir::Manifest;

/// report.md of `r`, the `plots` linked under the verdict; `m` as in `text::render`.
pub fn render(r: &Report, m: Option<&Manifest>, plots: &[&str]) -> String {
    let mut out = String::new();
    for (i, b) in blocks(r, m).iter().enumerate() {
        out.push_str(&md_text(&format!(
            "{} {}\n\n",
            if i == 0 { "#" } else { "##" },
            b.title
        )));
        out.push_str(&md_text(&b.body_markdown()));
        if b.title == "Verdict" {
            for p in plots {
                out.push_str(&format!("![{p}]({p})\n\n"));
            }
        }
    }
    out
}
