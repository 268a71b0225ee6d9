//! The per-step table with its notes, and the per-second table around the knee.
use super::cells::{block, f1, ms, opt, order_roles, roles, utc};
use crate::analyze::model::*;
use crate::analyze::samples::sources::Figure;
use crate::report::table::Block;
use crate::report::table::Table;

pub fn steps_block(r: &Report) -> Block {
    let mut b = block("Steps");
    let roles = roles(r);
    let has_server = r.steps.iter().any(|s| s.server.is_some());
    let shown = source_columns(r);
    let h = steps_headers(&roles, has_server, &shown);
    let mut t = Table::new(h.clone());
    t.left = vec![0, h.len() - 1];
    let figures = cell_figures(&roles, has_server, &shown);
    let unusable: std::collections::HashSet<(&str, &str)> = r
        .unusable
        .iter()
        .map(|u| (u.step.as_str(), u.figure.as_str()))
        .collect();
    for s in &r.steps {
        let mut row = step_cells(s, &roles, has_server, &shown);
        for (cell, figure) in row.iter_mut().zip(&figures) {
            if unusable.contains(&(s.name.as_str(), figure.as_str())) {
                *cell = "n/a".into();
            }
        }
        t.push(row);
    }
    b.table = Some(t);
    b.notes.push("latency in ms over all requests started in the step (k6's sub-metric); \"ok p95\" over successful ones only. ok/s = successful responses completed in the window. CPU in % of one core. \"p99 n\" = requests behind p99 (! = under 50).".into());
    if !r.unusable.is_empty() {
        b.notes.push("n/a = a figure outside its physical bounds, or one too few samples fell inside the step's window to measure: not shown, claims on it are n/a (see the caveats).".into());
    }
    b.notes.extend(
        r.steps
            .iter()
            .filter(|s| {
                !s.failures.is_empty() || s.server.as_ref().is_some_and(|w| !w.saturated.is_empty())
            })
            .map(step_note),
    );
    b.notes.extend(r.steps.iter().filter_map(|s| {
        let why = s.host_limited.as_ref()?;
        Some(format!(
            "{} host-limited: {why} (over {:.0} %): its figures measure the host as much as the lab",
            s.name,
            crate::analyze::samples::HOST_LIMITED_PCT
        ))
    }));
    b
}

/// The figures of the declared sampler sources with a column of their own (a header in their
/// registry row, `analyze::samples::sources`) that some step has.
fn source_columns(r: &Report) -> Vec<&'static Figure> {
    let rows = crate::analyze::samples::sources::ROWS.iter();
    let has = |name: &str| {
        let servers = r.steps.iter().filter_map(|s| s.server.as_ref());
        servers.into_iter().any(|w| w.sources.contains_key(name))
    };
    let figures = rows.flat_map(|row| row.figures);
    figures
        .filter(|f| f.header.is_some() && has(f.name))
        .collect()
}

/// The steps table's columns: one CPU column per role, server columns when sampled, one per
/// shown source figure.
fn steps_headers(roles: &[String], has_server: bool, shown: &[&Figure]) -> Vec<String> {
    let mut h: Vec<String> = [
        "step", "target", "sent/s", "ok/s", "p50", "p95", "p99", "max", "ok p95", "failed",
        "non-200", "drop", "maxVU",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for role in roles {
        h.push(format!("{role}%"));
    }
    if has_server {
        h.extend(["msCPU/ok".into(), "psi%".into()]);
    }
    h.extend(shown.iter().filter_map(|f| f.header).map(String::from));
    h.extend(["p99 n".into(), "verdict".into()]);
    h
}

/// The claim name of each cell of a step's row (empty: a cell no figure of the bounds rule).
fn cell_figures(roles: &[String], has_server: bool, shown: &[&Figure]) -> Vec<String> {
    let mut v: Vec<String> = [
        "",
        "",
        "sent_per_s",
        "ok_per_s",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "max_ms",
        "ok_p95_ms",
        "failed_rate",
        "",
        "",
        "max_vus",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(roles.iter().map(|r| format!("cpu.{r}")));
    if has_server {
        v.extend(["ms_cpu_per_ok".into(), "psi_pct".into()]);
    }
    v.extend(shown.iter().map(|f| f.name.to_string()));
    v
}

/// One step's row of the steps table.
fn step_cells(
    s: &StepReport,
    roles: &[String],
    has_server: bool,
    shown: &[&Figure],
) -> Vec<String> {
    let mut row = vec![
        s.name.clone(),
        s.target.to_string(),
        f1(s.sent_per_s),
        f1(s.ok_per_s),
        ms(s.p50_ms),
        ms(s.p95_ms),
        ms(s.p99_ms),
        ms(s.max_ms),
        ms(s.ok_p95_ms),
        format!("{:.2}%", s.failed_rate * 100.0),
        if s.non200.is_empty() {
            "0".into()
        } else {
            s.non200
                .iter()
                .map(|(k, v)| format!("{k}x{v}"))
                .collect::<Vec<_>>()
                .join(" ")
        },
        s.dropped.to_string(),
        opt(s.max_vus, |v| format!("{v:.0}")),
    ];
    for role in roles {
        row.push(opt(
            s.server.as_ref().and_then(|w| w.cpu_pct.get(role).copied()),
            |v| format!("{v:.0}"),
        ));
    }
    if has_server {
        row.push(opt(s.ms_cpu_per_ok, |v| format!("{v:.1}")));
        row.push(opt(s.server.as_ref().and_then(|w| w.psi_pct), |v| {
            format!("{v:.0}")
        }));
    }
    for f in shown {
        let v = s.server.as_ref().and_then(|w| w.sources.get(f.name));
        row.push(opt(v.copied(), |v| format!("{v:.0}")));
    }
    row.push(format!(
        "{:.0}{}",
        s.p99_tail_samples,
        if s.p99_tail_samples < 50.0 { "!" } else { "" }
    ));
    row.push(verdict_cell(s));
    row
}

/// "fail [1,3] (cut) (host)": the verdict, the failed criteria, whether k6 cut the step short,
/// and whether the host took more of the app's or database's CPUs than `HOST_LIMITED_PCT`.
fn verdict_cell(s: &StepReport) -> String {
    let mut v = s.verdict.as_str().to_string();
    if !s.failures.is_empty() {
        // Criterion 4 can fail twice (iterations dropped, VUs at max): list each number once.
        let mut crit: Vec<u8> = s.failures.iter().map(|f| f.criterion).collect();
        crit.dedup();
        let crit: Vec<String> = crit.iter().map(|c| c.to_string()).collect();
        v.push_str(&format!(" [{}]", crit.join(",")));
    }
    if s.truncated {
        v.push_str(" (cut)");
    }
    if s.host_limited.is_some() {
        v.push_str(" (host)");
    }
    v
}

/// "r0120 fail: (1) p95 ...; (5) fpm 4/4 busy ...; pg: ...": why a step failed or saturated.
fn step_note(s: &StepReport) -> String {
    let mut parts: Vec<String> = s
        .failures
        .iter()
        .map(|f| format!("({}) {}", f.criterion, f.text))
        .collect();
    if let Some(w) = &s.server {
        parts.extend(w.saturated.iter().map(|x| format!("(5) {x}")));
        if let Some(f) = &w.fpm {
            parts.push(format!(
                "fpm idle min {}, listen queue max {}",
                f.idle_min, f.listen_queue_max
            ));
        }
        if let Some(p) = &w.pg {
            parts.push(format!("pg: {}", p.top));
        }
    }
    format!("{} {}: {}", s.name, s.verdict.as_str(), parts.join("; "))
}

pub fn persec_block(r: &Report) -> Block {
    let label = r
        .knee
        .map(|k| format!("around the knee ({k} {})", r.unit()))
        .unwrap_or_else(|| "around the last step".into());
    let mut b = block(&format!("Per second {label}"));
    let roles = order_roles(r.per_second.iter().flat_map(|row| row.cpu_pct.keys()));
    let mut h: Vec<String> = [
        "utc", "t", "done", "p50ms", "p95ms", "non200", "inflight", "drop",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for role in &roles {
        h.push(format!("{role}%"));
    }
    let server = !roles.is_empty();
    if server {
        h.extend(["psi".into(), "dockerd%".into()]);
    }
    let mut t = Table::new(h);
    for row in &r.per_second {
        let mut v = vec![
            utc(row.t),
            row.rel.to_string(),
            row.done.to_string(),
            format!("{:.0}", row.p50_ms),
            format!("{:.0}", row.p95_ms),
            row.non200.to_string(),
            format!("{:.1}", row.inflight),
            row.dropped.to_string(),
        ];
        for role in &roles {
            v.push(opt(row.cpu_pct.get(role).copied(), |x| format!("{x:.0}")));
        }
        if server {
            v.push(opt(row.psi_pct, |x| format!("{x:.0}")));
            v.push(opt(row.dockerd_pct, |x| format!("{x:.0}")));
        }
        t.push(v);
    }
    b.table = Some(t);
    b.notes.push("done = responses completed in that second; p50/p95 of those; t = seconds since the first step started.".into());
    b
}
