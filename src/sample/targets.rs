//! What to sample (the containers, the lab's declared sources and the ways to read them) and
//! how often.
use std::time::Duration;

use serde::Serialize;

use crate::lab::{Role, SourceDecl};

/// A container to sample: its role in the lab, its name and the pid of its init process.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub(crate) struct ContainerTarget {
    pub role: Role,
    pub name: String,
    pub pid: u32,
}

/// What to sample. Absent parts are skipped.
#[derive(Default)]
pub(crate) struct SamplerTargets {
    pub containers: Vec<ContainerTarget>,
    /// The sources the lab declares (`LabInfo::sources`).
    pub sources: Vec<&'static SourceDecl>,
    /// The entry point from the host (`LabStack::entry_url`), which the HTTP sources are read
    /// below.
    pub entry_url: Option<String>,
    /// A connection opened by the caller before the lab's workers take every slot
    /// (exp2-pgconn fills `max_connections` on purpose), which the SQL sources use.
    pub pg: Option<std::sync::Arc<tokio_postgres::Client>>,
    /// The stack's engine and containers, which the exec sources run their command in.
    pub exec: Option<super::source::ExecWay>,
}

/// Sampling periods (the declared sources have their own).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SamplerOptions {
    pub fast: Duration,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            fast: Duration::from_secs(1),
        }
    }
}
