//! The harness's own look at the lab's database and entry point: PostgreSQL's usable
//! connection slots and commit counter, and the smoke check before any load.
use std::time::Duration;

use anyhow::{Result, bail};

use crate::rundir::measurements::PgSlots;

/// How many of `max_connections` the lab's app can really use, read before the warm-up.
pub(crate) async fn pg_slots(c: &tokio_postgres::Client) -> Result<PgSlots> {
    let row = c
        .query_one(
            "select current_setting('max_connections')::bigint, \
                    current_setting('superuser_reserved_connections')::bigint, \
                    coalesce(current_setting('reserved_connections', true), '0')::bigint, \
                    (select count(*) from pg_stat_activity \
                      where backend_type = 'client backend' and usename = current_user)::bigint",
            &[],
        )
        .await?;
    let (max, su, res, harness): (i64, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    Ok(PgSlots {
        max_connections: max,
        superuser_reserved: su,
        reserved: res,
        harness,
        usable: (max - su - res - harness).max(0),
    })
}

pub(crate) async fn xact_commit(c: &tokio_postgres::Client) -> Result<i64> {
    let row = c
        .query_one(
            "select coalesce(sum(xact_commit), 0)::bigint from pg_stat_database",
            &[],
        )
        .await?;
    Ok(row.get(0))
}

/// The experiment's endpoint must answer 200 before any load is sent: up to 10 sequential
/// tries (experiments such as exp2-pgconn fail a share of requests by design), none 200 = stop.
pub(crate) async fn smoke_check(entry_url: &str, endpoint: &str) -> Result<()> {
    let url = format!("{}{}", entry_url.trim_end_matches('/'), endpoint);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(15))
        .build()?;
    let mut seen = Vec::new();
    for _ in 0..10 {
        match client.get(&url).send().await {
            Ok(r) if r.status() == reqwest::StatusCode::OK => return Ok(()),
            Ok(r) => {
                let status = r.status();
                let body: String = r
                    .text()
                    .await
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect();
                seen.push(format!("{status}: {body}"));
            }
            Err(e) => seen.push(e.to_string()),
        }
    }
    bail!(
        "smoke check: GET {endpoint} never answered 200 in 10 tries before any load; the stack is misconfigured (see logs/ in the run directory). Last answer: {}",
        seen.last().map(String::as_str).unwrap_or("none")
    )
}
