//! `compare`'s text: the verdict and why, each side's rounds (max sustainable, knee, CPU per ok
//! request at the common step, steal), the two signals with their intervals, the host, the
//! boundary, and the differences. For one run a side, the steps side by side as before. Pure.
use super::RoundsComparison;
use super::latency::LatencySignal;
use super::pair::{diff_notes, render_text};
use super::rounds::{RateBasis, Rounds, STEAL_FLAG_PCT};
use super::sequential::{DECIDING_SIGNALS, LogTest, Settings, pct};
use super::verdict::{CapacitySignal, CpuSignal, Signal, ratio_text};
use crate::report::table::{Block, Table, blocks_text};

/// The rounds table's header (`cpu_head`: the CPU column's, `rounds::cpu_head`).
pub(crate) fn round_header(cpu_head: &str) -> [&str; 6] {
    [
        "side",
        "run",
        "max sustainable",
        "knee",
        cpu_head,
        "steal %",
    ]
}

pub(crate) fn signal_str(s: Signal) -> &'static str {
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

/// The rounds table's rows of one side: side, run, max sustainable, knee, CPU ms/ok, steal
/// (marked `!` over `STEAL_FLAG_PCT`).
pub(crate) fn round_rows(name: &str, r: &Rounds) -> Vec<Vec<String>> {
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
                r.steal_pct
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or("-".into(), |s| {
                        format!("{s:.1}{}", if s > STEAL_FLAG_PCT { " !" } else { "" })
                    }),
            ]
        })
        .collect()
}

fn test_text(t: &Option<LogTest>) -> String {
    t.as_ref().map_or(String::new(), |t| {
        let sd = match t.pairs {
            Some(n) => format!("SD of the {n} pairs' differences of logs"),
            None => "SD of logs".into(),
        };
        format!("; {}, {sd} {:.1} %", ratio_text(t), t.sd_log_pct)
    })
}

/// The CPU signal in one line.
pub(crate) fn cpu_line(c: &CpuSignal, unit: &str, a: &Rounds, b: &Rounds) -> String {
    if c.step.is_none() {
        return "CPU per ok request: no step measured with CPU samples (and <= 5 % failed) in every round of both sides"
            .into();
    }
    let side = |m: Option<f64>, s: Option<f64>| match (m, s) {
        (Some(m), Some(s)) => format!("{m:.2} ms (spread {s:.1} %)"),
        _ => "-".into(),
    };
    format!(
        "CPU per ok request {}: median A {}, B {}{}: {}",
        super::rounds::steps_text(&c.steps, unit),
        side(a.cpu_median, a.cpu_spread_pct),
        side(b.cpu_median, b.cpu_spread_pct),
        test_text(&c.test),
        signal_str(c.says)
    )
}

/// The latency signal in one line.
pub(crate) fn latency_line(l: &LatencySignal, unit: &str, (a, b): (&Rounds, &Rounds)) -> String {
    let Some(step) = l.step else {
        return "latency: no step passed below its knee in every round of both sides".into();
    };
    let ms = |m: Option<f64>| m.map_or("-".into(), |m| format!("{m:.2} ms"));
    let out: Vec<&str> = [a, b]
        .into_iter()
        .flat_map(super::latency::left_out)
        .collect();
    let pairs = match l.pairing.as_deref() {
        Some(p) if p.starts_with("paired") => " with their pairs",
        _ => "",
    };
    let left = match out.len() {
        0 => String::new(),
        _ => format!(
            " (left out{pairs}: {}, which passed no step)",
            out.join(", ")
        ),
    };
    let which = if super::latency::over_passing_steps(l) {
        format!(
            "({}), the steps every round passed",
            super::latency::read_text(l, unit)
        )
    } else {
        format!("(median of ok requests) at {step} {unit}, the busiest step every round passed")
    };
    format!(
        "latency {which}{left}: median A {}, B {}{}: {}",
        ms(l.a_median),
        ms(l.b_median),
        test_text(&l.test),
        signal_str(l.says)
    )
}

/// The capacity signal in one line.
pub(crate) fn capacity_line(c: &CapacitySignal, unit: &str, a: &Rounds, b: &Rounds) -> String {
    let list = |r: &Rounds| {
        r.max_sustainable
            .iter()
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "max sustainable ({unit} offered: the last passing step or probe, not its goodput): A [{}], B [{}]{}: {}",
        list(a),
        list(b),
        test_text(&c.test),
        signal_str(c.says)
    )
}

/// The rule and the boundary at these round counts, in one line.
pub(crate) fn rule_line(c: &RoundsComparison) -> String {
    let s: &Settings = &c.settings;
    let mut l = format!(
        "rule: {} % confidence over a plan of {} rounds a side, split over the {} deciding signals ({}: each at {} %); regressed (improved) when the interval is entirely above (below) 1 and the change at least {} %; same when it lies within ±{} % (the latency's within ±{} %)",
        s.confidence * 100.0,
        c.boundary
            .as_ref()
            .map_or(s.max_rounds, |b| b.planned_rounds),
        DECIDING_SIGNALS.len(),
        DECIDING_SIGNALS.join(", "),
        pct(s.per_signal().confidence),
        s.min_effect_pct,
        s.margin_pct,
        super::latency::settings(s).margin_pct
    );
    if let Some(b) = &c.boundary {
        l.push_str(&format!(
            "; boundary: {} looks, each at α' = {:.4} (a {:.2} % interval), t({}) = {:.2}",
            b.looks,
            b.nominal_alpha,
            b.level * 100.0,
            b.df,
            b.t_crit
        ));
    }
    l
}

/// Decided or not, and the rounds a side that would decide.
pub(crate) fn decided_line(c: &RoundsComparison) -> String {
    match (c.decided, c.rounds_needed, c.more_rounds) {
        (true, _, _) => match stopped_early(c) {
            Some(n) => format!(
                "decided: yes, after {n} of the plan's {} pairs: the interval holds its level, but the estimate of a batch that stops at its first decided look reads high (docs/regression.md); --run-out runs the whole plan for an estimate without that bias",
                c.settings.max_rounds
            ),
            None => "decided: yes".into(),
        },
        (false, Some(n), Some(m)) => {
            format!("decided: no; about {m} more round(s) a side ({n} a side) would decide")
        }
        (false, _, _) => "decided: no".into(),
    }
}

/// The pairs of a paired batch decided `regressed` or `improved` before its plan's end: its
/// estimate is one a stopping rule picked.
pub(crate) fn stopped_early(c: &RoundsComparison) -> Option<usize> {
    let n = c.cpu.test.as_ref()?.pairs?;
    let moved = matches!(
        c.verdict,
        super::Verdict::Regressed | super::Verdict::Improved
    );
    (moved && n < c.settings.max_rounds).then_some(n)
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
    if !c.moved.is_empty() {
        v.lines.push(format!("moved: {}", c.moved.join(", ")));
    }
    v.lines.push(cpu_line(&c.cpu, unit, a, b));
    v.lines
        .push(latency_line(&c.latency, unit, (&c.rounds_a, &c.rounds_b)));
    v.lines.push(capacity_line(&c.capacity, unit, a, b));
    v.lines.push(c.host_speed.line());
    v.lines.push(c.hosts.line());
    v.lines.push(c.steal.line());
    v.lines.push(rule_line(c));
    v.lines.push(decided_line(c));
    if a.runs.len() == 1 && b.runs.len() == 1 {
        let text = format!("{}\n{}", render_text(&c.first), blocks_text(&[v]));
        return format!("{}\n", text.trim_end());
    }
    let cpu_head = super::rounds::cpu_head(&c.cpu.steps);
    let mut t = Table::new(round_header(&cpu_head));
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
