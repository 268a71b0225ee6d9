//! A started stack as data: its containers, how the host reaches its PostgreSQL, its CPU
//! pinning (`LabStack`'s work is in `mod.rs` and the files beside it).
use super::access::Access;
use crate::experiment::Lab;
use crate::lab::Role;
use crate::plan::Slot;
use anyhow::{Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// CPU pinning of one stack, as Docker cpuset strings (`0`, `1`, `2-3`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pinning {
    pub loadgen: String,
    pub db: String,
    pub app: String,
}

impl Pinning {
    /// The cpuset of a slot.
    pub(crate) fn cpuset(&self, slot: Slot) -> &str {
        match slot {
            Slot::Loadgen => &self.loadgen,
            Slot::Db => &self.db,
            Slot::App => &self.app,
        }
    }

    /// Number of CPUs in the app cpuset.
    pub(crate) fn app_cpus(&self) -> usize {
        crate::plan::CpuSet::parse(&self.app)
            .map(|s| s.len())
            .unwrap_or(1)
    }
}

impl From<&crate::plan::CpuLayout> for Pinning {
    /// The stack's view of a plan's CPU layout (`plan::layout` owns the choice).
    fn from(layout: &crate::plan::CpuLayout) -> Pinning {
        Pinning {
            loadgen: layout.cpuset(Slot::Loadgen),
            db: layout.cpuset(Slot::Db),
            app: layout.cpuset(Slot::App),
        }
    }
}

/// One running container of a stack.
#[derive(Debug, Clone, Serialize)]
pub struct StackContainer {
    #[serde(serialize_with = "crate::lab::role::as_log::serialize")]
    pub role: Role,
    pub name: String,
    /// Full 64-hex id (cgroup paths use it).
    pub id: String,
    pub image: String,
    pub cpuset: String,
    pub memory_bytes: i64,
    /// Container port -> published host port (none unless published).
    pub host_ports: BTreeMap<u16, u16>,
    /// Its IPv4 address on the lab network.
    pub address: Option<String>,
    /// Folders served from a volume of their own instead of the storage driver
    /// (`ContainerDecl::code_volumes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub code_volumes: Vec<String>,
}

/// How the host reaches PostgreSQL (its lab address, or a published port) as the harness role `perflab`
/// (member of pg_monitor and pg_read_all_data); the app connects as `app_user`.
#[derive(Debug, Clone, Serialize)]
pub struct PgConn {
    pub host: String,
    pub port: u16,
    pub user: String,
    #[serde(skip)]
    pub password: String,
    pub dbname: String,
    /// The role the lab app logs in as (filter `pg_stat_activity.usename` on it).
    pub app_user: String,
    /// The table `pg_prewarm` loads (`ContainerDecl::prewarm_table`), when the lab names one.
    #[serde(skip)]
    pub prewarm_table: Option<&'static str>,
}

impl PgConn {
    pub(crate) fn config(&self) -> tokio_postgres::Config {
        let mut c = tokio_postgres::Config::new();
        c.host(&self.host)
            .port(self.port)
            .user(&self.user)
            .password(&self.password)
            .dbname(&self.dbname)
            .application_name("perflab")
            .connect_timeout(Duration::from_secs(5));
        c
    }

    /// Connect (the connection task is spawned on the current runtime).
    pub(crate) async fn connect(&self) -> Result<tokio_postgres::Client> {
        let (client, conn) = self
            .config()
            .connect(tokio_postgres::NoTls)
            .await
            .with_context(|| format!("connecting to PostgreSQL at {}:{}", self.host, self.port))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(client)
    }
}

/// A started, ready stack. Dropping it does not remove anything: call `teardown`.
#[derive(Debug, Clone, Serialize)]
pub struct LabStack {
    pub run_id: String,
    pub lab: Lab,
    pub network: String,
    pub volume: Option<String>,
    /// The volumes serving image folders past the storage driver (`ContainerDecl::code_volumes`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub code_volumes: Vec<String>,
    #[serde(serialize_with = "crate::lab::role::as_log::map")]
    pub containers: BTreeMap<Role, StackContainer>,
    pub pinning: Pinning,
    /// PostgreSQL from the host (php and node labs).
    pub pg: Option<PgConn>,
    /// The entry point from the host: `http://<lab address>:<port>`, or the published port.
    pub entry_url: String,
    /// Where the host or a load generator elsewhere reaches the entry point: the published
    /// address and port when published (`entry_published`), else its lab address and port.
    pub entry_port: u16,
    pub entry_ip: String,
    pub entry_published: bool,
    pub access: Access,
    /// The entry point from a container on the lab network (k6): `http://nginx:80`, `http://app:3000`.
    pub target_url: String,
    /// Seconds from `start` to ready.
    pub start_seconds: f64,
}
