//! Warm-up before measuring (article 0.7), as the lab's descriptor declares it: PHP gets
//! `warmup_requests` requests on the experiment's endpoint with `max_children` in flight, so
//! opcache is hot and every worker holds its persistent connection; PostgreSQL's big table can
//! be loaded with `pg_prewarm` (Node 1a).
use super::LabStack;
use crate::experiment::Experiment;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::time::Duration;

/// What the warm-up did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WarmupReport {
    pub requests: u32,
    /// Responses by status code (0 = transport error).
    pub status_counts: std::collections::BTreeMap<u16, u32>,
    /// Blocks loaded by `pg_prewarm`, when asked.
    pub prewarmed_blocks: Option<i64>,
}

/// Warm the stack up for `exp`. Fails when the endpoint does not answer 200 at all.
pub(crate) async fn warm_up(stack: &LabStack, exp: &Experiment) -> Result<WarmupReport> {
    let mut report = WarmupReport {
        requests: 0,
        status_counts: Default::default(),
        prewarmed_blocks: None,
    };
    let lab = crate::lab::descriptor(exp.lab);
    if exp.stack.postgres.prewarm
        && let Some(pg) = stack.pg.as_ref()
        && let Some(table) = pg.prewarm_table
    {
        let pg = pg.connect().await?;
        let row = pg
            .query_one(&format!("SELECT pg_prewarm('{table}')::bigint"), &[])
            .await
            .context("pg_prewarm")?;
        report.prewarmed_blocks = Some(row.get(0));
    }
    let load = lab.warmup(&exp.stack);
    let (n, concurrency) = (load.requests, load.concurrency);
    if n == 0 {
        return Ok(report);
    }
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()?;
    let url = format!("{}{}", stack.entry_url, exp.load.endpoint);
    let per_task = n.div_ceil(concurrency);
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let c = client.clone();
            let u = url.clone();
            tokio::spawn(async move {
                let mut codes = Vec::new();
                for _ in 0..per_task {
                    codes.push(match c.get(&u).send().await {
                        Ok(r) => {
                            let s = r.status().as_u16();
                            let _ = r.bytes().await;
                            s
                        }
                        Err(_) => 0,
                    });
                }
                codes
            })
        })
        .collect();
    for t in tasks {
        for code in t.await? {
            *report.status_counts.entry(code).or_default() += 1;
            report.requests += 1;
        }
    }
    if !report.status_counts.contains_key(&200) {
        bail!(
            "warm-up: {url} never answered 200 ({:?}); check `perflab smoke {}`",
            report.status_counts,
            exp.lab.as_str()
        );
    }
    Ok(report)
}
