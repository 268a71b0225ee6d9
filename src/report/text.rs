//! `report.txt`: the article's tables as aligned plain text.
use super::content::blocks;
use crate::analyze::Report;
use crate::rundir::Manifest;

/// report.txt of `r`; `m`, the run's manifest, gives "What this means" the article and the host.
pub fn render(r: &Report, m: Option<&Manifest>) -> String {
    let mut out = String::new();
    for (i, b) in blocks(r, m).iter().enumerate() {
        if i == 0 {
            out.push_str(&format!("### {}\n", b.title));
        } else {
            out.push_str(&format!("\n## {}\n", b.title));
        }
        out.push_str(&b.body_text());
    }
    // Printed, and read with `cat` and `less`: no control character from data survives.
    crate::output::plain(&out).into_owned()
}
