//! The report's content, independent of the output format: header lines, tables, findings.
//! Here the header, the verdict and the cell formats; the other blocks live in `content/`.
mod actions;
mod cells;
mod checks;
mod logs;
mod memory;
mod omission;
mod recovery;
mod steps;
mod trigger;
mod usl;

pub use actions::actions_block;
pub use checks::checks_blocks;
pub use logs::{access_block, logs_block, warnings_block, workers_block};
pub use memory::memory_block;
pub use omission::omission_block;
pub use recovery::recovery_block;
pub use steps::{persec_block, steps_block};
pub use trigger::{classes, classes_block, trigger_block};
pub use usl::usl_block;

use super::table::Table;
use crate::analyze::fit::Calibration;
use crate::analyze::fmt_ms;
use crate::analyze::model::*;

pub(crate) use super::table::Block;

pub(crate) use cells::order_roles;
use cells::{block, opt, utc_full};

pub(crate) fn header(r: &Report) -> Block {
    let p = &r.params;
    let mut b = block(&format!("perflab report: {}", r.source.title));
    for i in &r.injected {
        b.lines.push(format!("INJECTED (not a clean run): {i}"));
    }
    let s = &r.source;
    b.lines.push(format!(
        "source: {}{} ({} requests, {} rows; {} model, {} tags, hold {} s)",
        s.csv,
        s.summary
            .as_ref()
            .map(|x| format!(" + {x}"))
            .unwrap_or_default(),
        s.requests,
        s.rows,
        match r.model {
            LoadModel::Open => "open",
            LoadModel::Closed => "closed",
        },
        match s.convention {
            Some(crate::analyze::k6csv::Convention::Step) => "step:NN_*",
            _ => "stage:rNNNN",
        },
        r.hold_s
    ));
    if let (Some(a), Some(z)) = (s.first_ms, s.last_ms) {
        b.lines
            .push(format!("time: {} .. {}", utc_full(a), utc_full(z)));
    }
    if let Some(speed) = &r.host_speed {
        b.lines.extend(speed.lines());
    }
    if !s.excluded.is_empty() {
        b.lines.push(format!(
            "not measured: {}",
            s.excluded
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    b.lines
        .push("criteria (a step breaks if any of 1-4 holds over its window; 5 names why):".into());
    let p99 = p
        .slo_p99_ms
        .map(|v| format!(", p99 <= {v} ms"))
        .unwrap_or_default();
    b.lines.push(format!(
        "  1 latency: p95 <= {} ms{p99} (requests started in the step)",
        p.slo_p95_ms
    ));
    b.lines.push(format!(
        "  2 errors: failed <= {} % (k6: 4xx/5xx and transport errors fail)",
        p.error_budget * 100.0
    ));
    b.lines.push(format!(
        "  3 goodput: ok/s >= sent/s - {} %",
        p.goodput_tolerance * 100.0
    ));
    b.lines.push(format!(
        "  4 generator: no dropped iterations after warm-up{}",
        p.max_vus
            .map(|v| format!(", VUs below max {v:.0}"))
            .unwrap_or_default()
    ));
    b.lines.push(format!(
        "  5 saturated for >= {:.0} % of the step: fpm idle 0 with listen queue > 0, db core >= {:.0} %, ELU >= {:.2}, pool waiting > 0, app cores >= {:.0} %",
        p.rules.most_of_step * 100.0,
        p.rules.db_core * 100.0,
        p.rules.elu,
        p.rules.app_cores * 100.0
    ));
    b
}

pub(crate) fn verdict_block(r: &Report) -> Block {
    let mut b = block("Verdict");
    let u = r.unit();
    b.lines.push(match r.knee {
        Some(_) => r.knee_why.clone().unwrap_or_default(),
        None => format!(
            "no knee: every step passes or recovers (highest step {} {u})",
            r.steps.last().map(|s| s.target).unwrap_or(0)
        ),
    });
    b.lines.push(format!(
        "last passing step (every earlier step passing): {}",
        r.last_passing
            .map(|t| format!("{t} {u}"))
            .unwrap_or_else(|| "none".into())
    ));
    if let Some(t) = r.passing_below_knee.filter(|t| Some(*t) != r.last_passing) {
        b.lines.push(format!(
            "last passing step below the knee: {t} {u} (earlier failing steps recovered: transient)"
        ));
    }
    let transient: Vec<String> = r
        .steps
        .iter()
        .filter(|s| s.verdict == Verdict::Transient)
        .map(|s| format!("{} {u}", s.target))
        .collect();
    if !transient.is_empty() {
        b.lines.push(format!(
            "transient (failed, then a later step passed; a stall, not the knee): {}",
            transient.join(", ")
        ));
    }
    b.lines.push(format!(
        "dropped iterations: {}{}",
        r.dropped_iterations,
        if r.dropped_warmup > 0 {
            format!(" (+{} in warm-up)", r.dropped_warmup)
        } else {
            String::new()
        }
    ));
    b
}

/// The refined max sustainable rate and its probes (`perflab run --refine`).
pub fn refine_block(r: &Report) -> Option<Block> {
    let f = r.refine.as_ref()?;
    let mut b = Block::new("Max sustainable rate (refined)");
    let fmt = |v: Option<u32>| v.map_or("none".to_string(), |x| x.to_string());
    let (lo, hi) = f.max_sustainable_resolution;
    b.lines.push(format!(
        "max sustainable {} {} offered{}: passes at {}, fails at {} ({})",
        fmt(f.max_sustainable),
        f.unit,
        goodput_text(f.max_sustainable_ok_per_s),
        fmt(lo),
        fmt(hi),
        f.stopped
    ));
    let mut t = Table::new(["probe", "target", "ok/s", "p95 ms", "verdict", "why"]);
    for (i, p) in f.probes.iter().enumerate() {
        t.push(vec![
            format!("{}", i + 1),
            format!("{} {}", p.target, f.unit),
            format!("{:.1}", p.ok_per_s),
            fmt_ms(p.p95_ms),
            if p.pass { "pass" } else { "FAIL" }.to_string(),
            p.why.clone(),
        ]);
    }
    b.table = Some(t);
    Some(b)
}

/// ", 383.5 ok/s sustained (goodput; capacity plans with it)": the goodput criterion lets a
/// passing load serve up to 5 % under the offered rate, so both are shown.
pub(crate) fn goodput_text(ok_per_s: Option<f64>) -> String {
    ok_per_s.map_or(String::new(), |g| {
        format!(", {g:.1} ok/s sustained there (the goodput; capacity plans with it)")
    })
}

/// One calibration load's numbers.
fn calibration_line(what: &str, c: &Calibration, how: &str) -> String {
    format!(
        "{what}: {} rps for {} s {how}: {:.1} ok/s, W {} (mean), p95 {}, app {} ms CPU/request, PostgreSQL {} ms CPU/request",
        c.rate,
        c.hold_s,
        c.ok_per_s,
        fmt_ms(c.w_ms),
        fmt_ms(c.p95_ms),
        opt(c.app_ms, |v| format!("{v:.2}")),
        opt(c.db_ms, |v| format!("{v:.2}")),
    )
}

/// "working point read 3 times, the rules read the medians: app ms/request 4.10-4.52 (spread
/// 10 %), ...": how far one reading could have moved the fit.
fn spread_line(c: &Calibration) -> Option<String> {
    let s = c.spread();
    if s.is_empty() {
        return None;
    }
    let parts: Vec<String> = s
        .iter()
        .map(|x| {
            format!(
                "{} {:.2}-{:.2} (spread {:.0} %)",
                x.name, x.min, x.max, x.pct
            )
        })
        .collect();
    Some(format!(
        "working point read {} times, the rules read the medians: {}",
        c.readings.len(),
        parts.join(", ")
    ))
}

/// How the run was fitted to the host (`perflab run --fit`): the calibration and each rule.
pub(crate) fn fit_block(r: &Report) -> Option<Block> {
    r.fit.as_ref().map(fit_record_block)
}

/// The "Fitted to this host" block of one fit record.
pub fn fit_record_block(f: &crate::analyze::fit::FitRecord) -> Block {
    let c = &f.calibration;
    let mut b = Block::new("Fitted to this host (--fit)");
    if let Some(run) = &f.twin_run {
        b.lines.push(format!(
            "calibration and peak probe lent by the twin's run {run} (fit.twin): none ran here, \
             so both run the same fitted steps"
        ));
    }
    if let Some(low) = &c.screening {
        b.lines.push(calibration_line(
            "screening calibration",
            low,
            "on the same stack",
        ));
        b.lines.push(calibration_line(
            "calibration",
            c,
            "at half the lowest ceiling screened (the rules read these)",
        ));
    } else {
        b.lines
            .push(calibration_line("calibration", c, "on the same stack"));
    }
    if let Some(s) = spread_line(c) {
        b.lines.push(s);
    }
    if let Some(p) = &f.peak {
        let how = format!(
            "with the published VUs, where a ceiling binds (p99 {}; the rules read its peak_* numbers)",
            opt(p.p99_ms, fmt_ms)
        );
        b.lines.push(calibration_line("peak probe", p, &how));
    }
    if !c.failed_attempts.is_empty() {
        b.lines.push(format!(
            "calibrations that did not pass (the host broke below their rate): {}",
            c.failed_attempts.join("; ")
        ));
    }
    use crate::experiment::fit::FitQ;
    let ceilings = [
        FitQ::AppCeiling,
        FitQ::PeakAppCeiling,
        FitQ::DbCeiling,
        FitQ::PoolRps,
    ];
    let q: Vec<String> = ceilings
        .iter()
        .map(|k| k.name())
        .filter_map(|k| f.quantities.get(k).map(|v| format!("{k} {v:.0} rps")))
        .collect();
    if !q.is_empty() {
        b.lines.push(format!("measured ceilings: {}", q.join(", ")));
    }
    if f.restacked {
        b.lines.push(
            "a stack setting was fitted: the stack was restarted with it before the steps".into(),
        );
    }
    let mut t = Table::new(["field", "article", "fitted", "rule", "why"]);
    for x in &f.rules {
        t.push(vec![
            x.set.clone(),
            x.article.clone(),
            x.fitted.clone(),
            x.to.clone(),
            x.why.clone(),
        ]);
    }
    b.table = Some(t);
    b
}

/// All blocks in report order: the title (with the injected banner), what this means, the
/// run's header lines, the verdict, the tables, the caveats, the glossary of all of them.
pub fn blocks(r: &Report, m: Option<&crate::rundir::Manifest>) -> Vec<Block> {
    let mut head = header(r);
    let (injected, lines): (Vec<String>, Vec<String>) = std::mem::take(&mut head.lines)
        .into_iter()
        .partition(|l| l.starts_with("INJECTED"));
    head.lines = injected;
    let mut run = block("Run");
    run.lines = lines;
    let mut v = vec![
        head,
        super::meaning::meaning(r, m).block(),
        run,
        verdict_block(r),
    ];
    v.extend(fit_block(r));
    v.push(steps_block(r));
    v.extend(memory_block(r));
    v.extend(refine_block(r));
    v.extend(omission_block(r));
    v.extend(recovery_block(r));
    v.extend(actions_block(r));
    v.extend(trigger_block(r));
    v.extend(classes_block(r));
    v.extend(usl_block(r));
    v.push(persec_block(r));
    v.extend(checks_blocks(r));
    v.extend(logs_block(r));
    v.extend(access_block(r));
    v.extend(workers_block(r));
    v.extend(warnings_block(r));
    v.extend(super::glossary::glossary_block(&v));
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn roles_are_shown_app_box_first_then_the_database_and_the_generator() {
        let present: Vec<String> = ["k6", "pg", "demo", "app", "nginx", "fpm", "zz", "pg"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            super::order_roles(&present),
            ["fpm", "nginx", "app", "demo", "pg", "k6", "zz"]
        );
    }
}
