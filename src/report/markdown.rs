//! `report.md`: the same content as Markdown tables, with the SVG plots embedded.
use super::content::blocks;
use crate::analyze::Report;

pub fn render(r: &Report, plots: &[&str]) -> String {
    let mut out = String::new();
    for (i, b) in blocks(r).iter().enumerate() {
        out.push_str(&format!(
            "{} {}\n\n",
            if i == 0 { "#" } else { "##" },
            b.title
        ));
        for l in &b.lines {
            out.push_str(&format!("{}  \n", l.trim_start()));
        }
        if !b.lines.is_empty() {
            out.push('\n');
        }
        if let Some(t) = &b.table {
            out.push_str(&t.to_markdown());
            out.push('\n');
        }
        for n in &b.notes {
            out.push_str(&format!("{n}\n\n"));
        }
        if i == 1 {
            for p in plots {
                out.push_str(&format!("![{p}]({p})\n\n"));
            }
        }
    }
    out
}
