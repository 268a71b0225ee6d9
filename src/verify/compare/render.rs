//! `compare`'s text: the verdict and why, each side's rounds (max sustainable, knee, CPU per ok
//! request at the common step), the two signals with their numbers, and the differences. For
//! one run a side, the steps side by side as before. Pure.
use super::RoundsComparison;
use super::pair::{diff_notes, render_text};
use super::rounds::{RateBasis, Rounds};
use super::verdict::{CapacitySignal, CpuSignal, Signal};
use crate::report::table::{Block, Table, blocks_text};

pub fn signal_str(s: Signal) -> &'static str {
    match s {
        Signal::Worse => "B worse",
        Signal::Better => "B better",
        Signal::Same => "same",
        Signal::Unclear => "unclear",
        Signal::Missing => "missing",
    }
}

fn basis(b: RateBasis) -> &'static str {
    match b {
        RateBasis::Refined => "refined",
        RateBasis::PassingStep => "step",
    }
}

/// The rounds table's rows of one side: side, run, max sustainable, knee, CPU ms/ok.
pub fn round_rows(name: &str, r: &Rounds) -> Vec<Vec<String>> {
    let cpu = |i: usize| {
        r.cpu_ms_per_ok
            .get(i)
            .map(|v| format!("{v:.2}"))
            .unwrap_or_else(|| "-".into())
    };
    (0..r.runs.len())
        .map(|i| {
            vec![
                name.to_string(),
                r.runs[i].clone(),
                format!(
                    "{} ({})",
                    r.max_sustainable[i],
                    basis(r.max_sustainable_from[i])
                ),
                r.knee[i].map_or("none".into(), |k| k.to_string()),
                cpu(i),
            ]
        })
        .collect()
}

/// The CPU signal in one line.
pub fn cpu_line(c: &CpuSignal, unit: &str, a: &Rounds, b: &Rounds) -> String {
    let Some(step) = c.step else {
        return "CPU per ok request: no step measured with CPU samples (and <= 5 % failed) in every round of both sides"
            .into();
    };
    let side = |m: Option<f64>, s: Option<f64>| match (m, s) {
        (Some(m), Some(s)) => format!("{m:.2} ms (spread {s:.1} %)"),
        _ => "-".into(),
    };
    let mut line = format!(
        "CPU per ok request at {step} {unit}: A {}, B {}",
        side(a.cpu_median, a.cpu_spread_pct),
        side(b.cpu_median, b.cpu_spread_pct)
    );
    if let (Some(d), Some(p), Some(t), Some(o)) = (
        c.delta_pct,
        c.pooled_spread_pct,
        c.threshold_pct,
        c.ranges_overlap,
    ) {
        line.push_str(&format!(
            "; {d:+.1} %, threshold {t:.1} % (pooled spread {p:.1} %), ranges {}",
            if o { "overlap" } else { "apart" }
        ));
    }
    line.push_str(&format!(": {}", signal_str(c.says)));
    line
}

/// The capacity signal in one line.
pub fn capacity_line(c: &CapacitySignal, unit: &str, a: &Rounds, b: &Rounds) -> String {
    let list = |r: &Rounds| {
        r.max_sustainable
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "max sustainable ({unit}): A [{}], B [{}]: {}",
        list(a),
        list(b),
        signal_str(c.says)
    )
}

/// The comparison as text.
pub fn text(c: &RoundsComparison) -> String {
    let (a, b) = (&c.rounds_a, &c.rounds_b);
    let unit = c.first.unit.as_str();
    let mut v = Block::new("");
    v.lines.push(format!(
        "verdict: {} ({})",
        c.verdict.as_str().to_uppercase(),
        c.why
    ));
    for (name, r) in [("A", a), ("B", b)] {
        for i in &r.injected {
            v.lines.push(format!("INJECTED in {name}: {i}"));
        }
    }
    v.lines.push(cpu_line(&c.cpu, unit, a, b));
    v.lines.push(capacity_line(&c.capacity, unit, a, b));
    v.lines.push(c.host_speed.line());
    v.lines.push(format!(
        "rule: CPU threshold max({} x pooled spread, {} %), ranges apart; >= {} rounds a side",
        c.rule.spread_k, c.rule.floor_pct, c.rule.min_rounds
    ));
    if a.runs.len() == 1 && b.runs.len() == 1 {
        let text = format!("{}\n{}", render_text(&c.first), blocks_text(&[v]));
        return format!("{}\n", text.trim_end());
    }
    let cpu_head = c
        .cpu
        .step
        .map_or("CPU ms/ok".to_string(), |s| format!("CPU ms/ok @{s}"));
    let mut t = Table::new(["side", "run", "max sustainable", "knee", cpu_head.as_str()]);
    t.left = vec![0, 1];
    for row in round_rows("A", a).into_iter().chain(round_rows("B", b)) {
        t.push(row);
    }
    let mut rounds = Block::new("");
    rounds.table = Some(t);
    rounds.notes.extend(diff_notes(&c.first));
    let text = format!("{}\n{}", blocks_text(&[v]), blocks_text(&[rounds]));
    format!("{}\n", text.trim_end())
}
