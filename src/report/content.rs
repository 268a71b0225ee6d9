//! The report's content, independent of the output format: header lines, tables, findings.
use super::table::Table;
use crate::analyze::fmt_ms;
use crate::analyze::model::*;

pub use super::table::Block;

fn block(title: &str) -> Block {
    Block::new(title)
}

fn f1(v: f64) -> String {
    format!("{v:.1}")
}

/// Latency cell: integers from 100 ms up, one decimal below.
pub fn ms(v: f64) -> String {
    let s = fmt_ms(v);
    s.trim_end_matches(" ms").to_string()
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn utc(t_s: i64) -> String {
    chrono::DateTime::from_timestamp(t_s, 0)
        .map(|d| d.format("%H:%M:%S").to_string())
        .unwrap_or_default()
}

fn utc_full(t_ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(t_ms)
        .map(|d| d.format("%Y-%m-%d %H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// Put role names in display order: the app box first, then the database and the generator.
pub fn order_roles<'a>(present: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let order = ["fpm", "nginx", "app", "demo", "pg", "k6"];
    let mut v: Vec<String> = present.into_iter().cloned().collect();
    v.sort();
    v.dedup();
    v.sort_by_key(|r| order.iter().position(|o| o == r).unwrap_or(order.len()));
    v
}

/// Roles with CPU data, in display order.
fn roles(r: &Report) -> Vec<String> {
    order_roles(
        r.steps
            .iter()
            .filter_map(|s| s.server.as_ref())
            .flat_map(|w| w.cpu_pct.keys()),
    )
}

pub fn header(r: &Report) -> Block {
    let p = &r.params;
    let mut b = block(&format!("perflab report: {}", r.source.title));
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

pub fn verdict_block(r: &Report) -> Block {
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

pub fn steps_block(r: &Report) -> Block {
    let mut b = block("Steps");
    let roles = roles(r);
    let mut h: Vec<String> = [
        "step", "target", "sent/s", "ok/s", "p50", "p95", "p99", "max", "ok p95", "failed",
        "non-200", "drop", "maxVU",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for role in &roles {
        h.push(format!("{role}%"));
    }
    let has_server = r.steps.iter().any(|s| s.server.is_some());
    if has_server {
        h.extend(["msCPU/ok".into(), "psi%".into()]);
    }
    h.extend(["p99 n".into(), "verdict".into()]);
    let mut t = Table::new(h.clone());
    t.left = vec![0, h.len() - 1];
    for s in &r.steps {
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
        for role in &roles {
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
        row.push(format!(
            "{:.0}{}",
            s.p99_tail_samples,
            if s.p99_tail_samples < 50.0 { "!" } else { "" }
        ));
        let mut v = s.verdict.as_str().to_string();
        if !s.failures.is_empty() {
            let crit: Vec<String> = s.failures.iter().map(|f| f.criterion.to_string()).collect();
            v.push_str(&format!(" [{}]", crit.join(",")));
        }
        if s.truncated {
            v.push_str(" (cut)");
        }
        row.push(v);
        t.push(row);
    }
    b.table = Some(t);
    b.notes.push("latency in ms over all requests started in the step (k6's sub-metric); \"ok p95\" over successful ones only. ok/s = successful responses completed in the window. CPU in % of one core. \"p99 n\" = requests behind p99 (! = under 50).".into());
    for s in r.steps.iter().filter(|s| {
        !s.failures.is_empty() || s.server.as_ref().is_some_and(|w| !w.saturated.is_empty())
    }) {
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
        b.notes.push(format!(
            "{} {}: {}",
            s.name,
            s.verdict.as_str(),
            parts.join("; ")
        ));
    }
    b
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

pub fn checks_blocks(r: &Report) -> Vec<Block> {
    let c = &r.checks;
    let mut out = Vec::new();
    let mut b = block("Little's law (L = λW) and stability");
    let mut t = Table::new([
        "step",
        "λ/s",
        "W ms",
        "λW",
        "L in-flight",
        "diff",
        "L vus",
        "W=Lmax/λ",
        "1st half",
        "2nd half",
        "stability",
    ]);
    for (l, s) in c.little.iter().zip(&c.stability) {
        t.push(vec![
            l.step.clone(),
            f1(l.lambda_per_s),
            ms(l.w_s * 1000.0),
            format!("{:.2}", l.lambda_w),
            format!("{:.2}", l.l_inflight),
            if l.stable {
                format!("{:.1}%", l.diff * 100.0)
            } else {
                "(unstable)".into()
            },
            opt(l.l_vus, |v| format!("{v:.1}")),
            opt(l.w_from_vus_s, |v| format!("{:.3}s", v)),
            format!("{:.2}", s.inflight_first_half),
            format!("{:.2}", s.inflight_second_half),
            format!("{:?}", s.verdict).to_lowercase(),
        ]);
    }
    if c.little.iter().any(|l| l.l_app.is_some()) {
        t.headers.insert(7, "L app".into());
        for (row, l) in t.rows.iter_mut().zip(&c.little) {
            row.insert(7, opt(l.l_app, |v| format!("{v:.1}")));
        }
    }
    b.table = Some(t);
    b.notes.push("L in-flight is counted from the request intervals; λW uses the step's mean latency. Little's law is read only where the step is stable (in-flight not growing between the halves of the window, seed 003).".into());
    if let Some(d) = c.drain_s {
        b.notes.push(format!(
            "drain after the last step: {d:.1} s until the last response{}",
            if d > 2.0 {
                " (a long drain: the queue had grown)"
            } else {
                ""
            }
        ));
    }
    out.push(b);

    let mut b = block("Ceilings");
    if let Some(cc) = &c.cpu_ceiling {
        b.lines.push(format!(
            "CPU ceiling at step {}: {:.0} cores x 1000 / {:.1} ms CPU per ok = {:.0}/s (the knee sits below it: waiting grows as ρ/(1-ρ))",
            cc.step, cc.cores, cc.ms_cpu_per_ok, cc.cpu_ceiling_per_s
        ));
    }
    if let Some(pc) = &c.pool_ceiling {
        b.lines.push(format!(
            "pool ceiling: N / W = {} / {:.3} s = {:.1}/s",
            pc.slots, pc.w_s, pc.ceiling_per_s
        ));
    }
    if b.lines.is_empty() {
        b.lines.push("no CPU or pool ceiling: needs server samples with the app's cores, or the pool size (plan)".into());
    }
    out.push(b);

    if !c.closed.is_empty() {
        let mut b = block("Closed model: coordinated omission");
        let mut t = Table::new([
            "step",
            "VUs",
            "nominal/s",
            "achieved/s",
            "missing",
            "R=N/X-Z ms",
        ]);
        for x in &c.closed {
            t.push(vec![
                x.step.clone(),
                x.vus.to_string(),
                f1(x.nominal_per_s),
                f1(x.achieved_per_s),
                format!("{:.0}", x.missing),
                f1(x.implied_r_ms),
            ]);
        }
        b.table = Some(t);
        b.notes.push(format!(
            "nominal = VUs / (R0 + Z) with R0 the first step's mean latency and Z = {} s think time; \"missing\" = requests real users would have sent while VUs waited. The closed model never reports \"broken\", only \"a little slower\".",
            r.params.think_time_s.unwrap_or(0.0)
        ));
        out.push(b);
    }
    if let Some(a) = &c.abort {
        let mut b = block("Abort lag");
        b.lines.push(format!(
            "k6 stopped in step {}: its own p95 {} vs the cumulative p95 {} that the guard (p95 < {}) watches.",
            a.step,
            fmt_ms(a.step_p95_ms),
            fmt_ms(a.cumulative_p95_ms),
            fmt_ms(a.threshold_ms)
        ));
        b.lines.push(format!(
            "The cumulative p95 crosses only when bad samples B > G/19: G = {} good so far -> B > {:.0}; B was {}. Read the knee from the per-step rows, not from when k6 stopped.",
            a.good, a.bad_needed, a.bad
        ));
        out.push(b);
    }
    let mut b = block("Cross-check with k6's summary");
    if c.cross_checked_steps == 0 {
        b.lines.push("no k6 summary given".into());
    } else if c.cross_check.is_empty() {
        b.lines.push(format!(
            "{} steps: request counts and p50/p95/p99/max agree within 1 % (or 0.5 ms)",
            c.cross_checked_steps
        ));
    } else {
        let mut t = Table::new(["step", "field", "perflab", "k6"]);
        for x in &c.cross_check {
            t.push(vec![
                x.step.clone(),
                x.field.clone(),
                format!("{:.3}", x.ours),
                format!("{:.3}", x.k6),
            ]);
        }
        b.table = Some(t);
    }
    if let Some(k) = c.k6_cpu_max_pct {
        b.lines.push(format!(
            "generator: k6 CPU max {k:.0} % of its core (goal < 80 %)"
        ));
    }
    if let Some(h) = &c.host_share {
        b.lines.push(format!(
            "host CPU over the steps (mean cores): busy {:.2} = lab containers {:.2} + perflab/dockerd {:.2} + steal {} + other processes {:.2}",
            h.busy_cores,
            h.lab_cores,
            h.harness_cores,
            h.steal_cores
                .map_or("not sampled".to_string(), |s| format!("{s:.2}")),
            h.other_cores
        ));
    }
    out.push(b);
    out
}

pub fn logs_block(r: &Report) -> Option<Block> {
    if r.logs.is_empty() {
        return None;
    }
    let mut b = block("Logs: distinct messages");
    let mut t = Table::new(["log", "count", "message"]);
    t.left = vec![0, 2];
    for (name, d) in &r.logs {
        b.lines.push(format!(
            "{name}: {} lines, {} distinct messages",
            d.lines,
            d.messages.len()
        ));
        for (m, c) in d.top(8) {
            t.push(vec![name.clone(), c.to_string(), m]);
        }
    }
    if !t.rows.is_empty() {
        b.table = Some(t);
    }
    Some(b)
}

/// diag-acc: what php-fpm and nginx logged per step (article 5.1.6).
pub fn access_block(r: &Report) -> Option<Block> {
    if r.access.is_empty() {
        return None;
    }
    let mut b = block("Access logs: php-fpm %d vs nginx $request_time");
    let mut t = Table::new([
        "step",
        "fpm n",
        "fpm %d p50",
        "p95",
        "fpm %C",
        "nginx n",
        "request_time p50",
        "p95",
        "connect p50",
        "max",
        "backlog p50",
    ]);
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.0}"));
    for a in &r.access {
        t.push(vec![
            a.step.clone(),
            a.fpm_requests.to_string(),
            ms(a.fpm_duration_p50_ms),
            ms(a.fpm_duration_p95_ms),
            a.fpm_cpu_pct_mean
                .map_or("-".to_string(), |x| format!("{x:.1}%")),
            a.nginx_requests.to_string(),
            ms(a.nginx_request_p50_ms),
            ms(a.nginx_request_p95_ms),
            ms(a.upstream_connect_p50_ms),
            ms(a.upstream_connect_max_ms),
            ms(a.backlog_p50_ms),
        ]);
    }
    b.table = Some(t);
    b.lines.push(
        "ms; lines grouped by the second they ended in. backlog = nginx request_time p50 - php-fpm %d p50: time a request waited before a worker took it (the listen backlog), while upstream connect stays ~0".into(),
    );
    Some(b)
}

pub fn warnings_block(r: &Report) -> Option<Block> {
    if r.warnings.is_empty() {
        return None;
    }
    let mut b = block("Caveats");
    b.lines = r.warnings.iter().map(|w| format!("- {w}")).collect();
    Some(b)
}

/// All blocks in report order.
pub fn blocks(r: &Report) -> Vec<Block> {
    let mut v = vec![header(r), verdict_block(r), steps_block(r), persec_block(r)];
    v.extend(checks_blocks(r));
    v.extend(logs_block(r));
    v.extend(access_block(r));
    v.extend(warnings_block(r));
    v
}
