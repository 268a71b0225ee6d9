//! The compare page's rounds plot: every round's value per side (A, B), in round order, with
//! each side's geometric mean, for the CPU per ok request and the max sustainable rate.
use crate::verify::compare::{Rounds, RoundsComparison};

use super::report_page::esc;

const W: f64 = 320.0;
const H: f64 = 150.0;
const LEFT: f64 = 44.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 18.0;

/// The geometric mean of positive values (None when there are none).
fn geo_mean(v: &[f64]) -> Option<f64> {
    let p: Vec<f64> = v
        .iter()
        .copied()
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect();
    (!p.is_empty()).then(|| (p.iter().map(|x| x.ln()).sum::<f64>() / p.len() as f64).exp())
}

/// One panel: `a` and `b` are the rounds' values in round order.
fn panel(title: &str, unit: &str, a: &[f64], b: &[f64]) -> Option<String> {
    let all: Vec<f64> = a
        .iter()
        .chain(b)
        .copied()
        .filter(|x| x.is_finite())
        .collect();
    if all.is_empty() {
        return None;
    }
    let (lo, hi) = all
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(*x), h.max(*x)));
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.02).max(1e-9);
    let (y0, y1) = ((lo - pad).max(0.0), hi + pad);
    let n = a.len().max(b.len()).max(1);
    let x = |i: usize| LEFT + (W - LEFT - 10.0) * (i as f64 + 0.5) / n as f64;
    let y = |v: f64| TOP + (H - TOP - BOTTOM) * (1.0 - (v - y0) / (y1 - y0));
    let mut s = format!(
        "<svg class=\"rplot\" viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}, every round per side\">\
         <g font-size=\"10\" fill=\"currentColor\"><text x=\"{LEFT}\" y=\"11\">{t} ({u})</text>\
         <text x=\"4\" y=\"{yt:.1}\">{hi:.3}</text><text x=\"4\" y=\"{yb:.1}\">{lo:.3}</text>\
         <text x=\"{LEFT}\" y=\"{xb:.1}\">round 1</text><text x=\"{xr:.1}\" y=\"{xb:.1}\" text-anchor=\"end\">{n}</text></g>\
         <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{yb0:.1}\" stroke=\"currentColor\" stroke-width=\"0.5\"/>",
        t = esc(title),
        u = esc(unit),
        yt = y(hi) + 3.0,
        yb = y(lo) + 3.0,
        xb = H - 6.0,
        xr = W - 10.0,
        yb0 = H - BOTTOM,
    );
    for (side, vals, colour) in [("A", a, "var(--blue)"), ("B", b, "var(--orange)")] {
        if let Some(m) = geo_mean(vals) {
            s.push_str(&format!(
                "<line x1=\"{LEFT}\" x2=\"{xe:.1}\" y1=\"{ym:.1}\" y2=\"{ym:.1}\" stroke=\"{colour}\" stroke-dasharray=\"4 3\" stroke-width=\"1\"><title>{side}: geometric mean {m:.3} {u}</title></line>",
                xe = W - 10.0,
                ym = y(m),
                u = esc(unit),
            ));
        }
        for (i, v) in vals.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            let (cx, cy) = (x(i) + if side == "A" { -3.0 } else { 3.0 }, y(*v));
            let shape = if side == "A" {
                format!("<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"3.2\" fill=\"{colour}\">")
            } else {
                format!(
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"6\" height=\"6\" fill=\"{colour}\">",
                    cx - 3.0,
                    cy - 3.0
                )
            };
            let close = if side == "A" { "</circle>" } else { "</rect>" };
            s.push_str(&format!(
                "{shape}<title>{side} round {}: {v:.3} {}</title>{close}",
                i + 1,
                esc(unit)
            ));
        }
    }
    s.push_str("</svg>");
    Some(s)
}

fn as_f64(v: &[u32]) -> Vec<f64> {
    v.iter().map(|x| f64::from(*x)).collect()
}

/// The section: both panels, or nothing when no round has a value.
pub(crate) fn rounds_plot(c: &RoundsComparison, unit: &str) -> String {
    let (a, b): (&Rounds, &Rounds) = (&c.rounds_a, &c.rounds_b);
    let cpu_title = match c.cpu.steps.as_slice() {
        [] => "CPU ms per ok".to_string(),
        [s] => format!("CPU ms per ok at {s} {unit}"),
        [lo, .., hi] => format!("CPU ms per ok over {lo}-{hi} {unit} (geometric mean)"),
    };
    let panels: Vec<String> = [
        panel(&cpu_title, "ms", &a.cpu_ms_per_ok, &b.cpu_ms_per_ok),
        panel(
            "max sustainable",
            unit,
            &as_f64(&a.max_sustainable),
            &as_f64(&b.max_sustainable),
        ),
    ]
    .into_iter()
    .flatten()
    .collect();
    if panels.is_empty() {
        return String::new();
    }
    format!(
        "<section id=\"round-plot\">\n<h2>Every round</h2>\n<p class=\"note\">A: circles, B: squares, in round order; dashed: each side's geometric mean.</p>\n<div class=\"pair\">{}</div>\n</section>\n",
        panels
            .iter()
            .map(|p| format!("<div>{p}</div>"))
            .collect::<String>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_gets_a_marker_and_each_side_a_mean() {
        let s = panel("cpu", "ms", &[4.0, 4.2, 4.1], &[4.6, 4.7]).unwrap();
        assert_eq!(s.matches("<circle").count(), 3);
        assert_eq!(s.matches("<rect").count(), 2);
        assert_eq!(s.matches("geometric mean").count(), 2);
        assert!(s.contains("B round 2: 4.700 ms"));
        assert!(panel("cpu", "ms", &[], &[]).is_none());
        let one = panel("x", "rps", &[100.0], &[100.0]).unwrap();
        assert!(!one.contains("NaN") && !one.contains("inf"), "{one}");
    }

    #[test]
    fn hostile_titles_are_escaped() {
        let s = panel("<script>", "\"u", &[1.0], &[2.0]).unwrap();
        assert!(!s.contains("<script>") && s.contains("&lt;script&gt;"));
    }
}
