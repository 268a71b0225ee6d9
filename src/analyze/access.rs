//! The diag-acc access logs (article 5.1.6): php-fpm `%d %C` (time PHP spent on a request, its
//! CPU %) and nginx `$request_time $upstream_connect_time`, parsed and summarised per step
//! window. The gap between nginx's request time and php-fpm's duration is time spent waiting in
//! the listen backlog. php-fpm's `%p` says which worker served each request: per step, how many
//! workers served, how many failed every request they served (exp2-pgconn: the workers that got
//! no PostgreSQL connection) and what share of the requests those took.
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One php-fpm access log line: `%{%Y-%m-%dT%H:%M:%S}t %d %C %s %p %m %r` (`%p`, the
/// worker's pid, since 2026-12-07; a line without it has no pid).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FpmAccess {
    /// Unix seconds (the container clock, UTC) when the request ended.
    pub t: i64,
    pub duration_ms: f64,
    pub cpu_pct: Option<f64>,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

/// One nginx access log line: `$time_iso8601 $status $request_time $upstream_connect_time "$request"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NginxAccess {
    pub t: i64,
    pub status: u16,
    pub request_ms: f64,
    /// None when nginx never reached the upstream (`-`).
    pub upstream_connect_ms: Option<f64>,
}

fn parse_time(s: &str) -> Option<i64> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp());
    }
    chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S")
        .ok()
        .map(|t| t.and_utc().timestamp())
}

/// Parse a php-fpm access log; lines that do not match are skipped (counted in the second value).
pub(crate) fn parse_fpm(text: &str) -> (Vec<FpmAccess>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let row = (|| {
            Some(FpmAccess {
                t: parse_time(f.first()?)?,
                duration_ms: f.get(1)?.parse::<f64>().ok()? * 1000.0,
                cpu_pct: f.get(2)?.trim_end_matches('%').parse().ok(),
                status: f.get(3)?.parse().ok()?,
                pid: f.get(4).and_then(|p| p.parse().ok()),
            })
        })();
        match row {
            Some(r) => out.push(r),
            None => bad += 1,
        }
    }
    out.sort_by_key(|r| r.t);
    (out, bad)
}

/// Parse an nginx access log in the `timed` format.
pub(crate) fn parse_nginx(text: &str) -> (Vec<NginxAccess>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let row = (|| {
            // several upstream tries print "0.000, 0.001": take the first
            let connect = f.get(3)?.trim_end_matches(',');
            Some(NginxAccess {
                t: parse_time(f.first()?)?,
                status: f.get(1)?.parse().ok()?,
                request_ms: f.get(2)?.parse::<f64>().ok()? * 1000.0,
                upstream_connect_ms: connect.parse::<f64>().ok().map(|s| s * 1000.0),
            })
        })();
        match row {
            Some(r) => out.push(r),
            None => bad += 1,
        }
    }
    out.sort_by_key(|r| r.t);
    (out, bad)
}

/// Both access logs of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AccessLogs {
    pub fpm: Vec<FpmAccess>,
    pub nginx: Vec<NginxAccess>,
}

impl AccessLogs {
    pub(crate) fn is_empty(&self) -> bool {
        self.fpm.is_empty() && self.nginx.is_empty()
    }
}

/// One step's access-log summary (ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessRow {
    pub step: String,
    pub fpm_requests: usize,
    pub fpm_duration_p50_ms: Option<f64>,
    pub fpm_duration_p95_ms: Option<f64>,
    pub fpm_cpu_pct_mean: Option<f64>,
    pub nginx_requests: usize,
    pub nginx_request_p50_ms: Option<f64>,
    pub nginx_request_p95_ms: Option<f64>,
    pub upstream_connect_p50_ms: Option<f64>,
    pub upstream_connect_max_ms: Option<f64>,
    /// nginx p50 - php-fpm p50: waiting before PHP took the request (the listen backlog).
    pub backlog_p50_ms: Option<f64>,
    /// Which workers served the step (php-fpm `%p`); `None` for logs without pids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<WorkerShares>,
}

/// The step's requests by the php-fpm worker that served them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerShares {
    /// Workers that served at least one request.
    pub served: usize,
    /// Workers every one of whose requests failed (status >= 500).
    pub always_failed: usize,
    /// Workers with both failed and successful requests (a connection gained or lost).
    pub mixed: usize,
    /// Share of the step's requests served by the `always_failed` workers.
    pub failing_share: f64,
    /// Fewest and most requests one worker served.
    pub per_worker_min: usize,
    pub per_worker_max: usize,
    /// p50 of php-fpm's `%d` over the failed and over the successful requests (ms).
    pub failed_p50_ms: Option<f64>,
    pub ok_p50_ms: Option<f64>,
    /// Turns out of the accept queue's order (`None` in reports written before they were
    /// counted, 2026-12-07). The kernel wakes the worker that has waited longest, but a worker
    /// that comes back to `accept()` before the woken one runs takes the connection itself: it
    /// serves again with fewer than half the workers between (a steal), and the woken one goes
    /// back to the end of the queue, serving next only after more than one and a half turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<TurnBreaks>,
}

/// Steals and the turns they cost, counted in log order (the order requests ended).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnBreaks {
    /// Requests a worker took out of turn.
    pub steals: usize,
    /// Of those, taken by an always-failing worker: one failed request more than the turn gives.
    pub failing_steals: usize,
    /// Always-failing workers sent to the end of the queue: one failed request fewer, at most.
    pub failing_robbed: usize,
}

/// Count the steals of the step's lines (`[from_s, to_s)`) against every line before them: a
/// worker's gap is the number of lines since its previous one; out of `workers` in turn it is
/// about `workers`, a steal's is under half, a robbed worker's over one and a half.
fn turn_breaks(all: &[FpmAccess], from_s: i64, to_s: i64, failing: &BTreeSet<u32>) -> TurnBreaks {
    let mut last: BTreeMap<u32, usize> = BTreeMap::new();
    let mut gaps = Vec::new();
    for (i, r) in all.iter().enumerate().take_while(|(_, r)| r.t < to_s) {
        let Some(pid) = r.pid else { continue };
        if let Some(prev) = last.insert(pid, i)
            && r.t >= from_s
        {
            gaps.push((pid, i - prev));
        }
    }
    let workers = gaps.iter().map(|g| g.0).collect::<BTreeSet<_>>().len();
    let mut t = TurnBreaks::default();
    for (pid, gap) in gaps {
        if 2 * gap < workers {
            t.steals += 1;
            t.failing_steals += usize::from(failing.contains(&pid));
        } else if 2 * gap > 3 * workers && failing.contains(&pid) {
            t.failing_robbed += 1;
        }
    }
    t
}

/// Requests by worker, for the lines that carry a pid; `all` is the whole log, for the turns.
fn worker_shares(
    fpm: &[&FpmAccess],
    all: &[FpmAccess],
    from_s: i64,
    to_s: i64,
) -> Option<WorkerShares> {
    let mut by: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    let (mut failed_d, mut ok_d) = (Vec::new(), Vec::new());
    for r in fpm {
        let Some(pid) = r.pid else { continue };
        let e = by.entry(pid).or_default();
        e.0 += 1;
        if r.status >= 500 {
            e.1 += 1;
            failed_d.push(r.duration_ms);
        } else {
            ok_d.push(r.duration_ms);
        }
    }
    let total: usize = by.values().map(|v| v.0).sum();
    if total == 0 {
        return None;
    }
    let failing: BTreeSet<u32> = by
        .iter()
        .filter(|(_, (n, f))| n == f)
        .map(|(p, _)| *p)
        .collect();
    let failing_served: usize = failing.iter().map(|p| by[p].0).sum();
    Some(WorkerShares {
        served: by.len(),
        always_failed: failing.len(),
        mixed: by.values().filter(|(n, f)| *f > 0 && f < n).count(),
        failing_share: failing_served as f64 / total as f64,
        per_worker_min: by.values().map(|v| v.0).min().unwrap_or(0),
        per_worker_max: by.values().map(|v| v.0).max().unwrap_or(0),
        failed_p50_ms: percentile(&mut failed_d, 50.0),
        ok_p50_ms: percentile(&mut ok_d, 50.0),
        turns: Some(turn_breaks(all, from_s, to_s, &failing)),
    })
}

/// Nearest-rank percentile of unsorted values.
fn percentile(v: &mut [f64], p: f64) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    super::stats::percentile_sorted(v, p)
}

/// Summarise the lines that ended in `[from_s, to_s)` (unix seconds).
pub(crate) fn window(logs: &AccessLogs, step: &str, from_s: i64, to_s: i64) -> AccessRow {
    let fpm: Vec<&FpmAccess> = logs
        .fpm
        .iter()
        .filter(|r| r.t >= from_s && r.t < to_s)
        .collect();
    let ngx: Vec<&NginxAccess> = logs
        .nginx
        .iter()
        .filter(|r| r.t >= from_s && r.t < to_s)
        .collect();
    let mut d: Vec<f64> = fpm.iter().map(|r| r.duration_ms).collect();
    let cpu: Vec<f64> = fpm.iter().filter_map(|r| r.cpu_pct).collect();
    let mut rt: Vec<f64> = ngx.iter().map(|r| r.request_ms).collect();
    let mut uc: Vec<f64> = ngx.iter().filter_map(|r| r.upstream_connect_ms).collect();
    let fpm_p50 = percentile(&mut d, 50.0);
    let ngx_p50 = percentile(&mut rt, 50.0);
    AccessRow {
        step: step.to_string(),
        fpm_requests: fpm.len(),
        fpm_duration_p50_ms: fpm_p50,
        fpm_duration_p95_ms: percentile(&mut d, 95.0),
        fpm_cpu_pct_mean: (!cpu.is_empty()).then(|| cpu.iter().sum::<f64>() / cpu.len() as f64),
        nginx_requests: ngx.len(),
        nginx_request_p50_ms: ngx_p50,
        nginx_request_p95_ms: percentile(&mut rt, 95.0),
        upstream_connect_p50_ms: percentile(&mut uc, 50.0),
        upstream_connect_max_ms: uc.iter().copied().reduce(f64::max),
        backlog_p50_ms: fpm_p50.zip(ngx_p50).map(|(f, n)| n - f),
        workers: worker_shares(&fpm, &logs.fpm, from_s, to_s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The formats rendered by src/stack/templates.rs.
    const FPM: &str = "\
2026-11-30T04:23:01 0.114 1.75% 200 GET /index.php
2026-11-30T04:23:01 0.121 0.00% 200 GET /index.php
2026-11-30T04:23:02 0.118 8.47% 200 GET /index.php
garbage line
";
    const NGINX: &str = r#"2026-11-30T04:23:01+00:00 200 0.155 0.000 "GET /api/slow HTTP/1.1"
2026-11-30T04:23:01+00:00 200 0.552 0.001 "GET /api/slow HTTP/1.1"
2026-11-30T04:23:02+00:00 504 5.001 - "GET /api/slow HTTP/1.1"
2026-11-30T04:23:09+00:00 200 0.120 0.000 "GET /api/slow HTTP/1.1"
"#;

    #[test]
    fn parses_both_formats_and_counts_bad_lines() {
        let (f, bad) = parse_fpm(FPM);
        assert_eq!((f.len(), bad), (3, 1));
        assert_eq!(f[0].t, 1_796_012_581);
        assert!((f[0].duration_ms - 114.0).abs() < 1e-9);
        assert_eq!(f[2].cpu_pct, Some(8.47));
        let (n, bad) = parse_nginx(NGINX);
        assert_eq!((n.len(), bad), (4, 0));
        assert_eq!(n[0].t, f[0].t, "same clock, same format of time");
        assert_eq!(n[2].status, 504);
        assert_eq!(n[2].upstream_connect_ms, None, "`-`: never connected");
    }

    #[test]
    fn window_gives_the_backlog_gap() {
        let logs = AccessLogs {
            fpm: parse_fpm(FPM).0,
            nginx: parse_nginx(NGINX).0,
        };
        let t0 = 1_796_012_581;
        let w = window(&logs, "r0080", t0, t0 + 5);
        assert_eq!((w.fpm_requests, w.nginx_requests), (3, 3), "{w:?}");
        assert_eq!(w.fpm_duration_p50_ms, Some(118.0));
        assert_eq!(w.nginx_request_p50_ms, Some(552.0));
        assert_eq!(w.backlog_p50_ms, Some(434.0));
        assert_eq!(w.upstream_connect_max_ms, Some(1.0));
        let later = window(&logs, "r0090", t0 + 5, t0 + 10);
        assert_eq!((later.fpm_requests, later.nginx_requests), (0, 1));
        assert_eq!(later.backlog_p50_ms, None);
        assert_eq!(w.workers, None, "lines without %p: no worker figures");
    }

    // exp2-pgconn's shape: worker 11 never has a connection, 12 gets one mid-step.
    const FPM_PIDS: &str = "\
2026-11-30T04:23:01 0.004 50.00% 200 10 GET /index.php
2026-11-30T04:23:01 0.020 50.00% 500 11 GET /index.php
2026-11-30T04:23:01 0.021 50.00% 500 12 GET /index.php
2026-11-30T04:23:02 0.005 50.00% 200 10 GET /index.php
2026-11-30T04:23:02 0.019 50.00% 500 11 GET /index.php
2026-11-30T04:23:02 0.006 50.00% 200 12 GET /index.php
2026-11-30T04:23:03 0.005 50.00% 200 10 GET /index.php
2026-11-30T04:23:03 0.004 50.00% 200 13 GET /index.php
";

    #[test]
    fn workers_that_fail_every_request_and_their_share() {
        let (f, bad) = parse_fpm(FPM_PIDS);
        assert_eq!((f.len(), bad), (8, 0));
        assert_eq!(f[1].pid, Some(11));
        let logs = AccessLogs {
            fpm: f,
            nginx: Vec::new(),
        };
        let t0 = 1_796_012_581;
        let w = window(&logs, "r0050", t0, t0 + 3).workers.expect("pids");
        assert_eq!((w.served, w.always_failed, w.mixed), (4, 1, 1), "{w:?}");
        assert!((w.failing_share - 2.0 / 8.0).abs() < 1e-12, "{w:?}");
        assert_eq!((w.per_worker_min, w.per_worker_max), (1, 3));
        assert_eq!((w.failed_p50_ms, w.ok_p50_ms), (Some(20.0), Some(5.0)));
        let first = window(&logs, "r0050", t0, t0 + 1).workers.expect("pids");
        assert_eq!((first.always_failed, first.mixed), (2, 0), "{first:?}");
    }

    /// Six workers, 12 and 15 without a connection. 11 and then 15 come back before the woken
    /// worker runs and serve again at once (steals); the first robs 12, which serves next 13
    /// lines later.
    #[test]
    fn steals_and_robbed_turns_follow_the_log_order() {
        let order = [
            10, 11, 12, 13, 14, 15, 10, 11, 11, 13, 14, 15, 15, 10, 11, 12, 13, 14, 15, 10,
        ];
        let text: String = order
            .iter()
            .enumerate()
            .map(|(i, pid)| {
                let (sec, status) = (
                    if i < 6 { 1 } else { 2 },
                    if [12, 15].contains(pid) { 500 } else { 200 },
                );
                format!("2026-11-30T04:23:0{sec} 0.004 50.00% {status} {pid} GET /index.php\n")
            })
            .collect();
        let logs = AccessLogs {
            fpm: parse_fpm(&text).0,
            nginx: Vec::new(),
        };
        let t0 = 1_796_012_581;
        let w = window(&logs, "r0050", t0 + 1, t0 + 2)
            .workers
            .expect("pids");
        let want = TurnBreaks {
            steals: 2,
            failing_steals: 1,
            failing_robbed: 1,
        };
        assert_eq!(w.turns, Some(want), "{w:?}");
        // the first second alone: every worker served once, no gap to read
        let first = window(&logs, "r0040", t0, t0 + 1).workers.expect("pids");
        assert_eq!(first.turns, Some(TurnBreaks::default()), "{first:?}");
    }
}
