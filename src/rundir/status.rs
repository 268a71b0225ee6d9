//! `status.json`: the state of a run (running, complete, failed, aborted), who owns it, and
//! whether that owner is still alive.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Version of `status.json` (files written before it carried one are version 1).
pub const STATUS_SCHEMA_VERSION: u32 = 1;

fn status_v1() -> u32 {
    1
}

/// State of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Running,
    Complete,
    Failed,
    Aborted,
}

/// `status.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    #[serde(default = "status_v1")]
    pub schema_version: u32,
    pub state: RunState,
    pub reason: Option<String>,
    /// The perflab process that owns the run (to detect runs killed with SIGKILL).
    pub pid: u32,
    /// Its start time in clock ticks since boot (`/proc/<pid>/stat` field 22): guards against pid reuse.
    pub pid_start_ticks: Option<u64>,
    pub hostname: Option<String>,
    pub updated: DateTime<Utc>,
}

impl Status {
    /// A status owned by this process.
    pub fn new(state: RunState, reason: Option<String>) -> Status {
        let pid = std::process::id();
        Status {
            schema_version: STATUS_SCHEMA_VERSION,
            state,
            reason,
            pid,
            pid_start_ticks: process_start_ticks(pid),
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|s| s.trim().to_string()),
            updated: Utc::now(),
        }
    }
}

/// Start time of a process (clock ticks since boot), from `/proc/<pid>/stat`.
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // fields after the command (which may contain spaces) start after the last ')'
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Is the process that wrote `status` still alive (same pid and start time)?
pub fn owner_alive(status: &Status) -> bool {
    match process_start_ticks(status.pid) {
        None => false,
        Some(t) => status.pid_start_ticks.is_none_or(|s| s == t),
    }
}
