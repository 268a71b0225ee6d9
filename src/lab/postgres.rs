//! `stack.postgres:`, the settings of the PostgreSQL container of the labs that have one.
use super::StackSettings;
use super::settings::{Bound, Issue, Section, positive};
use serde::{Deserialize, Serialize};

use super::Role;
use super::pgbouncer::Auth;
use super::source::{Read, Shape, SourceDecl, SqlField};

/// `samples/pg.jsonl` of the labs with a PostgreSQL: `pg_stat_activity` grouped by state and
/// wait event, and the databases' commit counter, read through the harness's own connection
/// (opened before the lab's workers take every slot: exp2-pgconn fills `max_connections`).
pub(crate) const PG_SOURCE: SourceDecl = SourceDecl {
    name: "pg",
    offered_by: Role::PG,
    read: Read::Sql {
        fields: &[
            SqlField {
                field: "activity",
                query: "select coalesce(state, '') as state, wait_event_type, wait_event, count(*) as count \
                        from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid() \
                        group by 1, 2, 3 order by 4 desc",
                shape: Shape::Rows,
            },
            SqlField {
                field: "xact_commit",
                query: "select coalesce(sum(xact_commit), 0)::bigint from pg_stat_database",
                shape: Shape::Value,
            },
        ],
    },
    every_ms: 2000,
};

/// `stack.postgres:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostgresSettings {
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    /// Run `pg_prewarm` on the lab's big table before measuring (Node 1a).
    #[serde(default)]
    pub prewarm: bool,
    /// Report the `pg_stat_database.xact_commit` delta over the run (Node 1a).
    #[serde(default)]
    pub xact_delta: bool,
    /// How PostgreSQL (and PgBouncer, when the app goes through it) authenticates TCP clients:
    /// `scram-sha-256` (the image's) or `trust`, to split a connection's cost (issue 41).
    #[serde(default, skip_serializing_if = "Auth::is_scram")]
    pub auth: Auth,
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            max_connections: default_max_connections(),
            prewarm: false,
            xact_delta: false,
            auth: Auth::Scram,
        }
    }
}

impl Section for PostgresSettings {
    #[rustfmt::skip]
    const BOUNDS: &'static [Bound<Self>] = &[
        Bound { key: "max_connections", max: 10_000.0, unit: "connections", what: "PostgreSQL's max_connections", get: |p| p.max_connections.into() },
    ];

    fn check(&self, _stack: &StackSettings) -> Vec<Issue> {
        positive("postgres", &[("max_connections", self.max_connections)])
    }
}

fn default_max_connections() -> u32 {
    100
}
