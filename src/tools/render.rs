//! Rendering helpers shared by the tools' reports (pure): optional numbers, caveat lists and
//! the host CPU busy line; the text is `crate::report::table`'s blocks and tables.
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) use crate::report::table::{Block, Table, blocks_text};

/// `x` with `digits` decimals and a suffix, or `-`.
pub(crate) fn opt(x: Option<f64>, digits: usize, suffix: &str) -> String {
    x.map(|v| format!("{v:.digits$}{suffix}"))
        .unwrap_or_else(|| "-".into())
}

/// `cpu0 21%, cpu1 23%`, or None when nothing was measured.
pub(crate) fn busy(cpu_busy_pct: &BTreeMap<u32, f64>) -> Option<String> {
    (!cpu_busy_pct.is_empty()).then(|| {
        cpu_busy_pct
            .iter()
            .map(|(c, p)| format!("cpu{c} {p:.0}%"))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// One `caveat: ...` line each (a text block's notes).
pub(crate) fn caveat_lines(host_speed: &[String], caveats: &[String]) -> Vec<String> {
    let caveats = caveats.iter().map(|c| format!("caveat: {c}"));
    host_speed.iter().cloned().chain(caveats).collect()
}

/// A `## Caveats` section (empty when there is none).
pub(crate) fn caveats_markdown(host_speed: &[String], caveats: &[String]) -> String {
    let mut s = String::new();
    if !host_speed.is_empty() {
        let _ = writeln!(s, "\n## Host speed\n");
        for l in host_speed {
            let _ = writeln!(s, "- {l}");
        }
    }
    if !caveats.is_empty() {
        let _ = writeln!(s, "\n## Caveats\n");
        for c in caveats {
            let _ = writeln!(s, "- {c}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(opt(Some(2.345), 1, "x"), "2.3x");
        assert_eq!(opt(None, 1, "x"), "-");
        assert_eq!(
            busy(&BTreeMap::from([(0, 21.4), (1, 3.0)])).unwrap(),
            "cpu0 21%, cpu1 3%"
        );
        assert_eq!(busy(&BTreeMap::new()), None);
        assert_eq!(
            caveat_lines(&["host speed before: x".into()], &["a".into(), "b".into()]),
            ["host speed before: x", "caveat: a", "caveat: b"]
        );
        assert_eq!(caveats_markdown(&[], &[]), "");
        assert_eq!(
            caveats_markdown(&[], &["a".into()]),
            "\n## Caveats\n\n- a\n"
        );
        assert_eq!(
            caveats_markdown(&["s".into()], &[]),
            "\n## Host speed\n\n- s\n"
        );
    }
}
