//! The timed actions of a load (`load.actions`: a php-fpm reload during the collapse): what
//! each did (the record the run keeps: when it ran, its exit code) and what followed it, read
//! from php-fpm's status samples and k6's timeline around its instant: the backlog (`listen
//! queue`) and the busy workers before and after, whether php-fpm's counters restarted (a
//! reload resets `accepted conn`), and the answers that were not 200 in the seconds before
//! and after. Pure: the record and the samples in, the figures out.
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::k6csv::Timeline;
use super::samples::FpmSample;
use super::samples::sources::SourcePoint;

/// Seconds before and after an action its effect is read over.
pub const EFFECT_WINDOW_S: i64 = 10;

/// One action as it ran (the manifest's `measurements.actions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionRun {
    pub name: String,
    /// The role whose container ran it, and the command.
    pub role: String,
    pub exec: Vec<String>,
    pub planned_at: DateTime<Utc>,
    /// When the exec was started and when it ended (None: it did not run).
    pub started_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    /// Its output (stdout and stderr), cut to a few KiB.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub output: String,
    /// Why it did not run or did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What followed an action (`report.json`'s `actions`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEffect {
    pub name: String,
    pub role: String,
    pub exec: Vec<String>,
    /// When it ran (unix ms; the planned instant when it did not), and whether it ran and
    /// exited 0.
    pub at_ms: i64,
    pub ran: bool,
    pub exit_code: Option<i64>,
    pub error: Option<String>,
    /// php-fpm's `listen queue` and `active processes` at the last sample before the action,
    /// at the first after it, and the lowest queue within [`EFFECT_WINDOW_S`] after.
    pub queue_before: Option<u64>,
    pub queue_after: Option<u64>,
    pub queue_min_after: Option<u64>,
    pub active_before: Option<u64>,
    pub active_after: Option<u64>,
    /// The kernel's accept queue of php-fpm's listening socket (the `fpm_net` source's Recv-Q)
    /// at the last reading before the action and the first after: what the socket held, where
    /// php-fpm's own `listen queue` of a just re-executed master reads 0 until it counts again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_queue_before: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_queue_after: Option<u64>,
    /// php-fpm's counters restarted across the action (`accepted conn` fell): the pool was
    /// restarted, its workers with it.
    pub fpm_restarted: Option<bool>,
    /// Answers that were not 200 completed in the [`EFFECT_WINDOW_S`] seconds before the
    /// action and in as many after, and the successes in each.
    pub non200_before: u64,
    pub non200_after: u64,
    pub ok_before: u64,
    pub ok_after: u64,
}

/// The effect of each action in `runs`, over php-fpm's samples `fpm` (sorted by time), the
/// kernel's readings of its listening socket `kernel` (`fpm_net`, sorted; its first column the
/// accept queue) and the run's per-second `timeline`.
pub fn effects(
    runs: &[ActionRun],
    fpm: &[FpmSample],
    kernel: &[SourcePoint],
    timeline: &Timeline,
) -> Vec<ActionEffect> {
    runs.iter()
        .map(|r| {
            let mut e = effect(r, fpm, timeline);
            let q = |p: &SourcePoint| p.values.first().map(|v| *v as u64);
            e.kernel_queue_before = kernel.iter().rev().find(|p| p.t < e.at_ms).and_then(q);
            e.kernel_queue_after = kernel.iter().find(|p| p.t >= e.at_ms).and_then(q);
            e
        })
        .collect()
}

fn effect(r: &ActionRun, fpm: &[FpmSample], timeline: &Timeline) -> ActionEffect {
    let at = r.started_at.unwrap_or(r.planned_at).timestamp_millis();
    let before = fpm.iter().rev().find(|s| s.t < at);
    let end = at + EFFECT_WINDOW_S * 1000;
    let after: Vec<&FpmSample> = fpm.iter().filter(|s| s.t >= at && s.t <= end).collect();
    let first_after = after.first().copied();
    let queue_min_after = after.iter().map(|s| s.status.listen_queue).min();
    // A restarted pool counts from 0 again: its first samples read below the last one before
    // (later ones may climb past it again).
    let lowest_accepted = after.iter().map(|s| s.status.accepted_conn).min();
    let restarted = match (before, lowest_accepted) {
        (Some(b), Some(a)) => Some(a < b.status.accepted_conn),
        _ => None,
    };
    let sum = |from: i64, to: i64, f: fn(&super::k6csv::SecondAgg) -> u32| -> u64 {
        let (from_s, to_s) = (from.div_euclid(1000), to.div_euclid(1000));
        (from_s..to_s)
            .filter_map(|sec| usize::try_from(sec - timeline.base_s).ok())
            .filter_map(|i| timeline.secs.get(i))
            .map(|s| u64::from(f(s)))
            .sum()
    };
    let from = at - EFFECT_WINDOW_S * 1000;
    ActionEffect {
        name: r.name.clone(),
        role: r.role.clone(),
        exec: r.exec.clone(),
        at_ms: at,
        ran: r.started_at.is_some() && r.ended_at.is_some(),
        exit_code: r.exit_code,
        error: r.error.clone(),
        queue_before: before.map(|s| s.status.listen_queue),
        queue_after: first_after.map(|s| s.status.listen_queue),
        queue_min_after,
        kernel_queue_before: None,
        kernel_queue_after: None,
        active_before: before.map(|s| s.status.active_processes),
        active_after: first_after.map(|s| s.status.active_processes),
        fpm_restarted: restarted,
        non200_before: sum(from, at, |s| s.non200),
        non200_after: sum(at, end, |s| s.non200),
        ok_before: sum(from, at, |s| s.ok),
        ok_after: sum(at, end, |s| s.ok),
    }
}

#[cfg(test)]
mod tests;
