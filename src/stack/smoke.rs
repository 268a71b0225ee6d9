//! Smoke checks of a started stack (article 0.7 step 1): every endpoint answers 200 with the
//! expected body, the database really ran the queries, connection counts are what the config
//! says, the server-side signals (fpm status through the hidden pool, metrics lines) work.
use super::{LabStack, StackRole};
use crate::docker::Docker;
use crate::experiment::{Experiment, Lab};
use anyhow::{Context, Result};
use serde::Serialize;
use std::time::{Duration, Instant};

/// One named check and what it saw.
#[derive(Debug, Clone, Serialize)]
pub struct SmokeCheck {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// All checks of one smoke.
#[derive(Debug, Clone, Serialize)]
pub struct SmokeReport {
    pub lab: Lab,
    pub checks: Vec<SmokeCheck>,
    pub seconds: f64,
}

impl SmokeReport {
    pub fn passed(&self) -> bool {
        !self.checks.is_empty() && self.checks.iter().all(|c| c.ok)
    }

    pub fn failures(&self) -> Vec<&SmokeCheck> {
        self.checks.iter().filter(|c| !c.ok).collect()
    }

    fn check(&mut self, name: &str, ok: bool, detail: impl Into<String>) {
        self.checks.push(SmokeCheck {
            name: name.to_string(),
            ok,
            detail: detail.into(),
        });
    }
}

/// The fields of the Node app's metrics line (lab-spec §4).
pub const NODE_METRICS_FIELDS: [&str; 18] = [
    "t",
    "pid",
    "rps",
    "err5xx",
    "eld_p50_ms",
    "eld_p99_ms",
    "eld_max_ms",
    "elu",
    "cpu_cores",
    "cpu_ms_per_req",
    "pool_total",
    "pool_idle",
    "pool_waiting",
    "pool_waiting_max",
    "inflight",
    "inflight_max",
    "rss_mb",
    "errors",
];
/// The fields of the demo server's metrics line.
pub const DEMO_METRICS_FIELDS: [&str; 8] = [
    "t",
    "pid",
    "rps",
    "inflight",
    "inflight_max",
    "queue",
    "queue_max",
    "busy",
];

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(256)
        .build()
        .expect("http client")
}

/// GET a URL: (status, body).
async fn get(client: &reqwest::Client, url: &str) -> (u16, String) {
    match client.get(url).send().await {
        Ok(r) => {
            let s = r.status().as_u16();
            (s, r.text().await.unwrap_or_default())
        }
        Err(e) => (0, format!("request failed: {e}")),
    }
}

fn json_has(body: &str, keys: &[&str]) -> Result<serde_json::Value, String> {
    let v: serde_json::Value =
        serde_json::from_str(body).map_err(|e| format!("not JSON ({e}): {}", short(body)))?;
    let obj = v
        .as_object()
        .ok_or_else(|| format!("not a JSON object: {}", short(body)))?;
    let missing: Vec<&&str> = keys.iter().filter(|k| !obj.contains_key(**k)).collect();
    if missing.is_empty() {
        Ok(v)
    } else {
        Err(format!("missing fields {missing:?} in {}", short(body)))
    }
}

fn short(s: &str) -> String {
    let s = s.trim();
    if s.len() > 160 {
        format!("{}...", &s[..s.floor_char_boundary(160)])
    } else {
        s.to_string()
    }
}

/// Check one endpoint `n` times: every answer 200 with the keys.
async fn endpoint(
    report: &mut SmokeReport,
    client: &reqwest::Client,
    base: &str,
    path: &str,
    keys: &[&str],
    n: usize,
) {
    let url = format!("{base}{path}");
    let mut bad = None;
    for _ in 0..n {
        let (s, body) = get(client, &url).await;
        if s != 200 {
            bad = Some(format!("HTTP {s}: {}", short(&body)));
            break;
        }
        if let Err(e) = json_has(&body, keys) {
            bad = Some(e);
            break;
        }
    }
    match bad {
        None => report.check(
            &format!("GET {path}"),
            true,
            format!("{n} x HTTP 200 with {keys:?}"),
        ),
        Some(d) => report.check(&format!("GET {path}"), false, d),
    }
}

async fn xact_commit(stack: &LabStack) -> Result<i64> {
    let c = stack
        .pg
        .as_ref()
        .context("no PostgreSQL")?
        .connect()
        .await?;
    let r = c
        .query_one(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = 'lab'",
            &[],
        )
        .await?;
    Ok(r.get(0))
}

/// `xact_commit` now, or a failed "PostgreSQL reachable" check.
async fn pg_reachable(stack: &LabStack, report: &mut SmokeReport) -> Option<i64> {
    match xact_commit(stack).await {
        Ok(v) => Some(v),
        Err(e) => {
            report.check(
                "PostgreSQL reachable from the host",
                false,
                format!("{e:#}"),
            );
            None
        }
    }
}

/// Wait until `xact_commit` moved by at least `n` since `before`. Backends flush their counters
/// to the shared statistics at most once a second while busy and within ~10 s when idle, so
/// poll for up to 15 s. Returns the delta seen last.
async fn xact_delta_at_least(stack: &LabStack, before: i64, n: i64) -> Result<i64> {
    let t0 = Instant::now();
    loop {
        let delta = xact_commit(stack).await? - before;
        if delta >= n || t0.elapsed() > Duration::from_secs(15) {
            return Ok(delta);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Client backends of the lab role other than perflab's own connections.
async fn app_backends(stack: &LabStack) -> Result<i64> {
    let c = stack
        .pg
        .as_ref()
        .context("no PostgreSQL")?
        .connect()
        .await?;
    let r = c
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = 'lab' AND backend_type = 'client backend'",
            &[],
        )
        .await?;
    Ok(r.get(0))
}

/// Run the smoke of the stack's lab. Errors only when the harness itself fails; failed checks
/// are in the report.
pub async fn run(docker: &Docker, stack: &LabStack, exp: &Experiment) -> Result<SmokeReport> {
    let t0 = Instant::now();
    let mut report = SmokeReport {
        lab: stack.lab,
        checks: Vec::new(),
        seconds: 0.0,
    };
    let client = http();
    let base = stack.entry_url.clone();
    match stack.lab {
        Lab::Php => php(docker, stack, exp, &client, &base, &mut report).await?,
        Lab::Node => node(docker, stack, exp, &client, &base, &mut report).await?,
        Lab::Demo => {
            endpoint(&mut report, &client, &base, "/work", &["ok"], 20).await;
            metrics_line(docker, stack, &DEMO_METRICS_FIELDS, &mut report).await?;
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

async fn php(
    _docker: &Docker,
    stack: &LabStack,
    exp: &Experiment,
    client: &reqwest::Client,
    base: &str,
    report: &mut SmokeReport,
) -> Result<()> {
    let php = exp
        .stack
        .php
        .clone()
        .context("php experiment without stack.php")?;
    let before = pg_reachable(stack, report).await;
    endpoint(report, client, base, "/api/ping", &["pong"], 5).await;
    endpoint(
        report,
        client,
        base,
        "/api/db",
        &["id", "name", "price"],
        20,
    )
    .await;
    endpoint(report, client, base, "/api/slow", &["slept_ms"], 2).await;
    // 22 DB requests above (perflab's own reads only add to the count).
    if let Some(before) = before {
        let delta = xact_delta_at_least(stack, before, 22).await?;
        report.check(
            "pg_stat_database.xact_commit moved",
            delta >= 22,
            format!("xact_commit delta {delta} for 22 database requests"),
        );
    }

    // Saturate /api/slow with 3 x max_children concurrent requests and read the status page
    // meanwhile: it must answer through the hidden pool while every worker is busy.
    let n = php.max_children as usize;
    let slow_url = format!("{base}/api/slow");
    let burst: Vec<_> = (0..3 * n)
        .map(|_| {
            let c = client.clone();
            let u = slow_url.clone();
            tokio::spawn(async move { get(&c, &u).await.0 })
        })
        .collect();
    let status_url = stack.fpm_status_url.clone().context("no fpm status URL")?;
    let mut proof = None;
    let mut last = String::from("no status sample");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(4) && proof.is_none() {
        let ts = Instant::now();
        let (s, body) = get(client, &status_url).await;
        let took = ts.elapsed().as_millis();
        if s == 200 {
            if let Ok(v) = json_has(
                &body,
                &[
                    "active processes",
                    "idle processes",
                    "total processes",
                    "listen queue",
                ],
            ) {
                let active = v["active processes"].as_i64().unwrap_or(-1);
                let idle = v["idle processes"].as_i64().unwrap_or(-1);
                last = format!(
                    "active {active}, idle {idle}, listen queue {}, answered in {took} ms",
                    v["listen queue"]
                );
                if idle == 0 && active == n as i64 && took < 1000 {
                    proof = Some(last.clone());
                }
            } else {
                last = format!("status page body: {}", short(&body));
            }
        } else {
            last = format!("status page HTTP {s}: {}", short(&body));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut codes = std::collections::BTreeMap::<u16, usize>::new();
    for h in burst {
        *codes.entry(h.await.unwrap_or(0)).or_default() += 1;
    }
    report.check(
        "fpm status answers while every worker is busy",
        proof.is_some(),
        proof.unwrap_or(last),
    );
    report.check(
        "saturating /api/slow burst all 200",
        codes.keys().all(|c| *c == 200),
        format!("{} requests: status counts {codes:?}", 3 * n),
    );

    if before.is_none() {
        return Ok(());
    }
    let backends = app_backends(stack).await?;
    if php.persistent {
        report.check(
            "persistent PDO: one backend per php-fpm worker",
            backends == n as i64,
            format!("{backends} lab backends for max_children {n}"),
        );
    } else {
        report.check(
            "non-persistent PDO: no connection kept between requests",
            backends == 0,
            format!("{backends} lab backends while idle"),
        );
    }
    Ok(())
}

async fn node(
    docker: &Docker,
    stack: &LabStack,
    exp: &Experiment,
    client: &reqwest::Client,
    base: &str,
    report: &mut SmokeReport,
) -> Result<()> {
    let n = exp
        .stack
        .node
        .clone()
        .context("node experiment without stack.node")?;
    let before = pg_reachable(stack, report).await;
    endpoint(report, client, base, "/cpu", &["key"], 5).await;
    endpoint(
        report,
        client,
        base,
        "/db",
        &["customer", "n", "total", "last"],
        20,
    )
    .await;
    endpoint(report, client, base, "/dbsleep", &["slept_ms"], 5).await;
    let (s, body) = get(client, &format!("{base}/db")).await;
    let rows = json_has(&body, &["n"])
        .ok()
        .and_then(|v| v["n"].as_str().and_then(|x| x.parse::<i64>().ok()));
    report.check(
        "/db aggregates a customer's orders",
        s == 200 && rows.unwrap_or(0) > 0,
        format!("HTTP {s}, n = {rows:?}"),
    );
    let Some(before) = before else {
        return metrics_line(docker, stack, &NODE_METRICS_FIELDS, report).await;
    };
    let delta = xact_delta_at_least(stack, before, 26).await?;
    report.check(
        "pg_stat_database.xact_commit moved",
        delta >= 26,
        format!("xact_commit delta {delta} for 26 database requests"),
    );
    let backends = app_backends(stack).await?;
    let want = (n.pool_max * n.processes.max(1)) as i64;
    report.check(
        "pool pre-opened: pool_max x processes backends",
        backends == want,
        format!("{backends} lab backends, expected {want}"),
    );
    metrics_line(docker, stack, &NODE_METRICS_FIELDS, report).await
}

/// Wait for a metrics line written after the requests above and check its fields.
async fn metrics_line(
    docker: &Docker,
    stack: &LabStack,
    fields: &[&str],
    report: &mut SmokeReport,
) -> Result<()> {
    let t0 = Instant::now();
    let mut seen = 0usize;
    let mut last = String::new();
    while t0.elapsed() < Duration::from_secs(5) {
        let logs = stack.logs(docker, StackRole::App).await?;
        let lines: Vec<&str> = logs.lines().filter(|l| l.starts_with("{\"t\":")).collect();
        if seen == 0 {
            seen = lines.len();
        } else if lines.len() > seen {
            last = lines.last().unwrap().to_string();
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    match json_has(&last, fields) {
        Ok(v) => report.check(
            "2-second metrics line",
            v["rps"].as_i64().is_some(),
            format!("fields ok: {}", short(&last)),
        ),
        Err(e) => report.check(
            "2-second metrics line",
            false,
            if last.is_empty() {
                "no new metrics line within 5 s".into()
            } else {
                e
            },
        ),
    }
    Ok(())
}
