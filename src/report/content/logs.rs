//! The report's closing blocks: distinct log messages, access logs per step, and caveats.
use super::cells::block;
use crate::analyze::model::Report;
use crate::report::table::Block;
use crate::report::table::Table;

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

/// Which php-fpm workers served each step (the access log's `%p`): exp2-pgconn's workers
/// without a PostgreSQL connection and the share of the requests the kernel gave them.
pub fn workers_block(r: &Report) -> Option<Block> {
    if r.access.iter().all(|a| a.workers.is_none()) {
        return None;
    }
    let mut b = block("Requests by php-fpm worker (access log %p)");
    let mut t = Table::new(std::iter::once("step").chain(crate::report::glossary::WORKER_HEADERS));
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.1}"));
    for (a, w) in r
        .access
        .iter()
        .filter_map(|a| Some((a, a.workers.as_ref()?)))
    {
        t.push(vec![
            a.step.clone(),
            w.served.to_string(),
            w.always_failed.to_string(),
            w.mixed.to_string(),
            format!("{:.3}", w.failing_share),
            w.per_worker_min.to_string(),
            w.per_worker_max.to_string(),
            ms(w.failed_p50_ms),
            ms(w.ok_p50_ms),
            w.turns.as_ref().map_or("-".to_string(), |t| {
                format!("{} (+{} -{})", t.steals, t.failing_steals, t.failing_robbed)
            }),
        ]);
    }
    b.table = Some(t);
    b.lines.push(
        "always failed: workers whose every request in the step failed (>= 500); their share: of the step's requests php-fpm logged. The kernel wakes the longest-waiting idle worker, so with no queue each worker serves about as many as the next and the share is always failed / workers; a worker that returns to accept() while connections wait takes one at once".into(),
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
