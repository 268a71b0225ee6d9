//! `stack.postgres:`, the settings of the PostgreSQL container of the labs that have one.
use super::StackSettings;
use super::settings::{Bound, Issue, Section, positive};
use serde::{Deserialize, Serialize};

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
}

impl Default for PostgresSettings {
    fn default() -> Self {
        PostgresSettings {
            max_connections: default_max_connections(),
            prewarm: false,
            xact_delta: false,
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
