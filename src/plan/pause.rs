//! When the app freezes in a run with `load.pause:` (seconds from k6's start, `--quick` scaling
//! the step D and keeping the pause P), and the closed twin of such an experiment.
use serde::{Deserialize, Serialize};

use crate::experiment::{Experiment, Model, Script};

/// The freeze of one load, as planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PausePlan {
    /// Seconds from k6's start (t = 0 of the plan's timeline) to the freeze.
    pub start_s: f64,
    /// How long the app stays frozen (P, s).
    pub for_s: f64,
    /// Seconds into the step's hold (`load.pause.at_s`; `--quick` keeps the pause mid-step).
    pub at_s: f64,
    /// The step it falls in (D = the plan's `hold_s`).
    pub step_target: u32,
}

/// The closed twin of an experiment with `load.pause`: the same step and freeze with
/// `closed_vus` VUs and `closed_think_time_s` (breakpoint.js, no ramp, no warm-up), or None.
pub(crate) fn closed_twin(e: &Experiment) -> Option<Experiment> {
    let p = e.load.pause.as_ref()?;
    let mut t = e.clone();
    let l = &mut t.load;
    l.script = Script::Breakpoint;
    l.model = Model::Closed;
    l.steps = vec![p.closed_vus];
    l.think_time_s = Some(p.closed_think_time_s);
    l.ramp_s = 0;
    l.warmup_s = 0;
    l.pre_vus = 0;
    l.max_vus = p.closed_vus;
    l.abort_p95_ms = None;
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanOptions, build};

    fn demo(hold_s: u32, at_s: f64, for_s: f64) -> Experiment {
        let yaml = format!(
            "id: demo-pause\nlab: demo\ndescription: d\nfinding: f\nstack: {{demo: {{}}}}\n\
             load: {{script: stepped, endpoint: /work, steps: [200], hold_s: {hold_s}, \
             slo_p95_ms: 300, pre_vus: 100, max_vus: 200, timeout_s: 10, abort: false, \
             pause: {{at_s: {at_s}, for_s: {for_s}, closed_vus: 16, closed_think_time_s: 0.04}}}}\n"
        );
        serde_yaml::from_str(&yaml).unwrap()
    }

    #[test]
    fn pause_falls_in_the_middle_of_the_step_and_quick_keeps_p() {
        let e = demo(30, 14.3, 1.4);
        let full = build(&e, PlanOptions { quick: false });
        let p = full.pause.clone().unwrap();
        let first = &full.steps[0];
        assert_eq!(p.start_s, f64::from(first.hold_start_s) + 14.3);
        assert_eq!(p.for_s, 1.4);
        let quick = build(&e, PlanOptions { quick: true });
        let q = quick.pause.unwrap();
        assert!(quick.hold_s < 30, "quick scales D: {}", quick.hold_s);
        assert_eq!(q.for_s, 1.4, "quick keeps P");
        // same place in the step: the middle stays the middle
        let mid = |at: f64, hold: u32| at + 0.7 - f64::from(hold) / 2.0;
        assert!(
            mid(q.at_s, quick.hold_s).abs() < 0.3,
            "{q:?} in {} s",
            quick.hold_s
        );
        assert!(q.at_s + q.for_s <= f64::from(quick.hold_s));
    }

    #[test]
    fn pause_never_runs_past_the_step() {
        let e = demo(10, 9.5, 1.4);
        let p = build(&e, PlanOptions { quick: false }).pause.unwrap();
        assert!((p.at_s - 8.6).abs() < 1e-9, "{p:?}");
    }

    #[test]
    fn no_pause_no_plan_no_twin() {
        let mut e = demo(30, 14.3, 1.4);
        e.load.pause = None;
        assert!(build(&e, PlanOptions { quick: false }).pause.is_none());
        assert!(closed_twin(&e).is_none());
    }

    #[test]
    fn twin_is_closed_with_the_same_freeze() {
        let e = demo(30, 14.3, 1.4);
        let t = closed_twin(&e).unwrap();
        assert_eq!(t.load.model, Model::Closed);
        assert_eq!(t.load.steps, vec![16]);
        let plan = build(&t, PlanOptions { quick: false });
        assert_eq!(plan.k6_env.get("SLEEP").map(String::as_str), Some("0.04"));
        let p = plan.pause.unwrap();
        assert_eq!(p.start_s, f64::from(plan.steps[0].hold_start_s) + 14.3);
    }
}
