//! The trigger of a run with `load.trigger:` (a CPU cut on a container or a cache flush in
//! one step, seconds from k6's start; `--quick` shortens the baseline before it with the hold
//! and keeps its length, the stated recovery time and the seconds after it judged, lengthening
//! the quick hold to fit them: a metastable failure can relapse tens of seconds after a
//! trigger, which a quarter-length step would not see), and the drop profile's k6 environment
//! (`load.drop:`, `drop.js`).
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

/// The seconds at the step's end the analysis judges the outcome over (`analyze::trigger`'s
/// `END_S`), kept after the stated recovery time in a `--quick` hold.
const JUDGED_S: f64 = 10.0;

/// `--quick`'s share of the hold `hold` is of `l.hold_s` (1 without it).
pub(crate) fn scale(l: &LoadSettings, hold: u32) -> f64 {
    if l.hold_s == 0 {
        1.0
    } else {
        f64::from(hold) / f64::from(l.hold_s)
    }
}

/// The hold of a run with a trigger under `--quick` (`hold` scaled by `scale`): long enough
/// for the shortened baseline, the trigger, the stated recovery time and the judged seconds,
/// at most the experiment's own hold.
pub(crate) fn quick_hold(l: &LoadSettings, hold: u32, scale: f64) -> u32 {
    let Some(t) = &l.trigger else { return hold };
    let need = (t.at_s * scale + t.for_s + t.recover_within_s + JUDGED_S).ceil() as u32;
    hold.max(need).min(l.hold_s)
}

/// The trigger of `l` in its plan of `steps`, `scale` the `--quick` share of its baseline,
/// or None.
pub(crate) fn plan(l: &LoadSettings, steps: &[StepSpan], scale: f64) -> Option<TriggerPlan> {
    let t = l.trigger.as_ref()?;
    let i = t.step.map_or(steps.len(), |s| s as usize).checked_sub(1)?;
    let step = steps.get(i)?;
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
        recover_within_s: t.recover_within_s,
    })
}

/// drop.js's environment beyond stepped.js's: the journeys (`home:40,landing:20,...`), the
/// retry policy and its numbers, the items of a cold page, the final ramp to 0, the seed.
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
    if let Some(s) = d.seed {
        set("SEED", s.to_string());
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::{PlanOptions, build};

    /// The catalog's experiment `id`, as loaded and checked.
    fn catalog_experiment(id: &str) -> crate::experiment::Experiment {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let cat =
            crate::experiment::Catalog::load(&dir, &crate::verify::quantities::Quantities).unwrap();
        cat.expand(id).unwrap()[0].clone()
    }

    /// `--quick` shortens the baseline before the trigger, not the trigger, the stated time or
    /// the seconds judged after it: the hold grows to fit them.
    #[test]
    fn quick_keeps_the_trigger_and_the_time_after_it() {
        let e = catalog_experiment("drop-stuck");
        let full = build(&e, PlanOptions { quick: false });
        let t = full.trigger.unwrap();
        assert_eq!(
            (full.hold_s, t.at_s, t.for_s, t.recover_within_s),
            (120, 40.0, 10.0, 40.0)
        );
        let quick = build(&e, PlanOptions { quick: true });
        let t = quick.trigger.unwrap();
        assert_eq!((t.at_s, t.for_s, t.recover_within_s), (10.0, 10.0, 40.0));
        assert_eq!(
            quick.hold_s, 70,
            "10 s baseline + 10 s cut + 40 s stated + 10 s judged"
        );
        assert_eq!(t.hold_end_s - t.hold_start_s, 70);
    }

    /// drop-profile's ramp to 0 is a window of the plan, after the last hold, unmeasured and
    /// tagged as drop.js tags its requests; the plan's total holds it (it ran past it before).
    #[test]
    fn the_ramp_to_zero_is_a_window_inside_the_plans_total() {
        let e = catalog_experiment("drop-profile");
        let p = build(&e, PlanOptions { quick: false });
        let last = p.windows.last().unwrap();
        let hold_end = p.steps.last().unwrap().hold_end_s;
        assert_eq!(last.kind, crate::plan::WindowKind::RampDown);
        assert_eq!((last.start_s, last.end_s), (hold_end, hold_end + 15));
        assert_eq!(
            (last.measured, last.tag.as_deref()),
            (false, Some("stage:rampdown"))
        );
        assert_eq!(p.total_s, hold_end + 15);
        assert_eq!(
            p.stages.last().map(|s| (s.target, s.duration_s)),
            Some((0, 15))
        );
        assert_eq!(p.k6_env.get("SEED"), None);
        let mut seeded = e.clone();
        seeded.load.drop.as_mut().unwrap().seed = Some(7);
        let p = build(&seeded, PlanOptions { quick: false });
        assert_eq!(p.k6_env.get("SEED").map(String::as_str), Some("7"));
    }
}
