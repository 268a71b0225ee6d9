//! Smoke checks of a started stack (article 0.7 step 1): every endpoint answers 200 with the
//! expected body, the database really ran the queries, connection counts are what the config
//! says, the server-side signals (fpm status through the hidden pool, metrics lines) work.
//! The checks are the lab descriptor's (`lab::SmokeCheck`); this module runs them.
use super::LabStack;
use crate::docker::Docker;
use crate::experiment::{Experiment, Lab};
use crate::lab::SmokeCheck as Check;
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

    pub(crate) fn failures(&self) -> Vec<&SmokeCheck> {
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

/// One number from the lab's PostgreSQL, on a fresh connection of perflab's own.
async fn pg_number(stack: &LabStack, sql: &str) -> Result<i64> {
    let c = stack
        .pg
        .as_ref()
        .context("no PostgreSQL")?
        .connect()
        .await?;
    Ok(c.query_one(sql, &[]).await?.get(0))
}

async fn xact_commit(stack: &LabStack) -> Result<i64> {
    pg_number(
        stack,
        "SELECT xact_commit FROM pg_stat_database WHERE datname = 'lab'",
    )
    .await
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
    pg_number(
        stack,
        "SELECT count(*) FROM pg_stat_activity WHERE usename = 'lab' AND backend_type = 'client backend'",
    )
    .await
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
    let lab = crate::lab::descriptor(stack.lab);
    let checks = lab.smoke(&exp.stack).map_err(anyhow::Error::msg)?;
    let client = http();
    let base = stack.entry_url.clone();
    // `xact_commit` before any request; the database checks need it.
    let before = if lab.info().uses_pg() {
        pg_reachable(stack, &mut report).await
    } else {
        None
    };
    for check in &checks {
        match check {
            Check::Endpoint { path, keys, n } => {
                endpoint(&mut report, &client, &base, path, keys, *n).await
            }
            Check::Positive { name, path, field } => {
                positive(&mut report, &client, &base, name, path, field).await
            }
            Check::XactDelta { requests } => {
                let Some(before) = before else { continue };
                let delta = xact_delta_at_least(stack, before, *requests).await?;
                report.check(
                    "pg_stat_database.xact_commit moved",
                    delta >= *requests,
                    format!("xact_commit delta {delta} for {requests} database requests"),
                );
            }
            Check::StatusUnderBurst {
                path,
                factor,
                workers,
            } => status_under_burst(stack, &client, &mut report, path, *factor, *workers).await?,
            Check::Backends {
                name,
                expect,
                detail,
            } => {
                if before.is_none() {
                    continue;
                }
                let backends = app_backends(stack).await?;
                report.check(
                    name,
                    backends == *expect,
                    format!("{backends} lab backends{detail}"),
                );
            }
            Check::MetricsLine { fields } => {
                metrics_line(docker, stack, fields, &mut report).await?
            }
        }
    }
    report.seconds = t0.elapsed().as_secs_f64();
    Ok(report)
}

/// `GET path` answers 200 with a positive count (a string) in `field`.
async fn positive(
    report: &mut SmokeReport,
    client: &reqwest::Client,
    base: &str,
    name: &str,
    path: &str,
    field: &str,
) {
    let (s, body) = get(client, &format!("{base}{path}")).await;
    let rows = json_has(&body, &[field])
        .ok()
        .and_then(|v| v[field].as_str().and_then(|x| x.parse::<i64>().ok()));
    report.check(
        name,
        s == 200 && rows.unwrap_or(0) > 0,
        format!("HTTP {s}, {field} = {rows:?}"),
    );
}

/// The php-fpm status page, read during a burst of `factor x workers` requests on `path`, shows
/// every worker busy and still answers within a second; every request of the burst answers 200.
async fn status_under_burst(
    stack: &LabStack,
    client: &reqwest::Client,
    report: &mut SmokeReport,
    path: &str,
    factor: usize,
    n: usize,
) -> Result<()> {
    let url = format!("{}{path}", stack.entry_url);
    let burst: Vec<_> = (0..factor * n)
        .map(|_| {
            let c = client.clone();
            let u = url.clone();
            tokio::spawn(async move { get(&c, &u).await.0 })
        })
        .collect();
    let status_url = stack.source_url("fpm").context("no fpm status URL")?;
    let (proof, last) = busy_status(client, &status_url, n).await;
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
        &format!("saturating {path} burst all 200"),
        codes.keys().all(|c| *c == 200),
        format!("{} requests: status counts {codes:?}", factor * n),
    );
    Ok(())
}

/// Poll the status page for up to 4 s until it shows `n` active and no idle worker, answered
/// within a second: (the proof, the last thing seen).
async fn busy_status(
    client: &reqwest::Client,
    status_url: &str,
    n: usize,
) -> (Option<String>, String) {
    let mut proof = None;
    let mut last = String::from("no status sample");
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(4) && proof.is_none() {
        let ts = Instant::now();
        let (s, body) = get(client, status_url).await;
        let took = ts.elapsed().as_millis();
        if s != 200 {
            last = format!("status page HTTP {s}: {}", short(&body));
        } else if let Ok(v) = json_has(
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
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (proof, last)
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
        let role = crate::lab::descriptor(stack.lab)
            .info()
            .output_source()
            .context("this lab writes no metrics lines")?
            .offered_by;
        let logs = stack.logs(docker, role).await?;
        let lines: Vec<&str> = logs
            .lines()
            .filter(|l| l.starts_with(crate::lab::METRICS_PREFIX))
            .collect();
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
