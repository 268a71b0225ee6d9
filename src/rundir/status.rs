//! `status.json`: the state of a run (running, complete, failed, aborted), who owns it, and
//! whether that owner is still alive.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Version of `status.json` (files written before it carried one are version 1).
pub(crate) const STATUS_SCHEMA_VERSION: u32 = 1;

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
    /// The session phase a run stopped in (`warm-up`, `measure`, ...), when it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
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
            phase: None,
            pid,
            pid_start_ticks: process_start_ticks(pid),
            hostname: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|s| s.trim().to_string()),
            updated: Utc::now(),
        }
    }
}

/// Start time of a process (clock ticks since boot), from `/proc/<pid>/stat`; None when the
/// process is gone or a zombie (killed, not yet reaped: dead all the same).
pub fn process_start_ticks(pid: u32) -> Option<u64> {
    crate::owner::proc_state(pid)
        .filter(|p| !matches!(p.state, 'Z' | 'X' | 'x'))
        .map(|p| p.start)
}

/// Is the process that wrote `status` still alive (same pid and start time, not a zombie)?
pub fn owner_alive(status: &Status) -> bool {
    match process_start_ticks(status.pid) {
        None => false,
        Some(t) => status.pid_start_ticks.is_none_or(|s| s == t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_process_has_a_start_time() {
        assert!(process_start_ticks(std::process::id()).is_some());
    }

    #[test]
    fn a_killed_unreaped_child_is_not_alive() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut s = Status::new(RunState::Running, None);
        s.pid = pid;
        s.pid_start_ticks = process_start_ticks(pid);
        assert!(owner_alive(&s));
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        // Not reaped yet: a zombie until wait().
        let t0 = std::time::Instant::now();
        while owner_alive(&s) && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!owner_alive(&s), "a zombie is dead");
        assert!(
            std::fs::metadata(format!("/proc/{pid}")).is_ok(),
            "still unreaped"
        );
        child.wait().unwrap();
    }
}
