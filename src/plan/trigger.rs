//! The trigger of a run with `load.trigger:` (a CPU cut on a container or a cache flush in
//! one step, seconds from k6's start; `--quick` scales where it falls in the step and the
//! stated recovery time with the hold, and keeps its length), and the drop profile's k6
//! environment (`load.drop:`, `drop.js`).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::experiment::{DropLoad, LoadSettings, TriggerKind};

/// The trigger of one load, as planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TriggerPlan {
    pub kind: TriggerKind,
    /// Seconds from k6's start (t = 0 of the plan's timeline) to the trigger.
    pub start_s: f64,
    /// How long a CPU cut lasts (s; 0 for a flush).
    pub for_s: f64,
    /// Seconds into the step's hold.
    pub at_s: f64,
    /// The share of the container's CPU a cut takes away.
    pub cut: f64,
    /// The role whose container a cut throttles.
    pub role: String,
    /// The step it falls in, its hold's start and end (s from k6's start).
    pub step_target: u32,
    pub hold_start_s: u32,
    pub hold_end_s: u32,
    /// Goodput must be back within this many seconds of the trigger's end.
    pub recover_within_s: f64,
}

/// One step of the plan as the trigger sees it: its target, its hold's start and end (s).
pub(crate) struct StepSpan {
    pub target: u32,
    pub hold_start_s: u32,
    pub hold_end_s: u32,
}

/// The trigger of `l` in its plan of `steps` with holds of `hold` s (`l.hold_s` before
/// `--quick`), or None.
pub(crate) fn plan(l: &LoadSettings, steps: &[StepSpan], hold: u32) -> Option<TriggerPlan> {
    let t = l.trigger.as_ref()?;
    let i = t.step.map_or(steps.len(), |s| s as usize).checked_sub(1)?;
    let step = steps.get(i)?;
    let scale = if l.hold_s == 0 {
        1.0
    } else {
        f64::from(hold) / f64::from(l.hold_s)
    };
    let at_s = t.at_s * scale;
    Some(TriggerPlan {
        kind: t.kind,
        start_s: f64::from(step.hold_start_s) + at_s,
        for_s: if t.kind == TriggerKind::Cpu {
            t.for_s
        } else {
            0.0
        },
        at_s,
        cut: t.cut.unwrap_or(0.0),
        role: match t.kind {
            // a flush goes to the front through the entry point
            TriggerKind::Flush => "front".to_string(),
            TriggerKind::Cpu => (t.role.clone())
                .unwrap_or_else(|| crate::experiment::DEFAULT_TRIGGER_ROLE.to_string()),
        },
        step_target: step.target,
        hold_start_s: step.hold_start_s,
        hold_end_s: step.hold_end_s,
        recover_within_s: t.recover_within_s * scale,
    })
}

/// drop.js's environment beyond stepped.js's: the journeys (`home:40,landing:20,...`), the
/// retry policy and its numbers, the items of a cold page, the final ramp to 0.
pub(crate) fn drop_env(d: &DropLoad, env: &mut BTreeMap<String, String>) {
    let journeys: Vec<String> = d.journeys.iter().map(|(k, v)| format!("{k}:{v}")).collect();
    let mut set = |k: &str, v: String| {
        env.insert(k.to_string(), v);
    };
    set("JOURNEYS", journeys.join(","));
    set("RETRY", d.retry.as_str().into());
    set("MAX_RETRIES", d.max_retries.to_string());
    set("BACKOFF_BASE_MS", d.backoff_base_ms.to_string());
    set("BACKOFF_CAP_MS", d.backoff_cap_ms.to_string());
    if let Some(b) = d.retry_budget {
        set("RETRY_BUDGET", b.to_string());
    }
    set("ITEMS", d.items.to_string());
    if d.ramp_down_s > 0 {
        set("RAMP_DOWN", d.ramp_down_s.to_string());
    }
}
