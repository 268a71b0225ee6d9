//! The PostgreSQL sampler: `pg_stat_activity` grouped by state and wait event, and the
//! databases' commit counter, every slow tick into `samples/pg.jsonl`.
use std::sync::Arc;

use super::SampleFile;
use super::records::{PgActivity, PgSample};
use super::sampler::Sampler;

const PG_ACTIVITY_SQL: &str = "select state, wait_event_type, wait_event, count(*) from pg_stat_activity \
     where backend_type = 'client backend' and pid <> pg_backend_pid() group by 1, 2, 3 order by 4 desc";
const PG_COMMITS_SQL: &str = "select coalesce(sum(xact_commit), 0)::bigint from pg_stat_database";

/// Reads through a connection opened by the caller before the lab's workers take every slot
/// (exp2-pgconn fills `max_connections` on purpose).
pub(crate) struct PgSampler(pub(crate) Arc<tokio_postgres::Client>);

impl Sampler for PgSampler {
    const FILE: SampleFile = SampleFile::Pg;
    type Line = PgSample;

    async fn read(&mut self, t: i64) -> Result<PgSample, String> {
        let client = &self.0;
        let rows = client
            .query(PG_ACTIVITY_SQL, &[])
            .await
            .map_err(|e| e.to_string())?;
        let xact_commit: i64 = client
            .query_one(PG_COMMITS_SQL, &[])
            .await
            .map_err(|e| e.to_string())?
            .get(0);
        let activity = rows
            .iter()
            .map(|r| PgActivity {
                state: r.get::<_, Option<String>>(0).unwrap_or_default(),
                wait_event_type: r.get(1),
                wait_event: r.get(2),
                count: r.get::<_, i64>(3).max(0) as u64,
            })
            .collect();
        Ok(PgSample {
            t,
            activity,
            xact_commit: xact_commit.max(0) as u64,
        })
    }
}
