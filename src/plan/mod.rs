//! Planning one experiment: step timeline (offsets from k6 start), measured windows, k6 stage
//! lists, VU sizing by Little's law, the `--quick` profile, the k6 environment; alignment
//! (`align`) and CPU layout (`layout`) live in submodules.
pub mod actions;
pub mod align;
pub mod fit;
pub mod layout;
pub mod parts;
pub mod pause;
pub(crate) mod planning;
pub(crate) mod show;
pub(crate) mod show_fit;
pub mod trigger;
pub mod turns;

use crate::experiment::schema::ActionWindow;
use crate::experiment::validate::{vus_needed_at_slo, vus_needed_at_timeout};
use crate::experiment::{Diagnostic, Experiment, LoadSettings, Model, Script};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub use align::Alignment;
pub use layout::{CpuLayout, CpuSet, Slot};
pub use parts::{AbortPlan, K6Stage, QuickProfile, Step, VuSizing, Window, WindowKind};

/// Tag value of the recovery phase's requests (key `stage`; `analyze` reads it back).
pub(crate) const RECOVER_TAG: &str = "recover";

/// Version of the plan's JSON shape (`plan.json`, manifest).
pub(crate) const PLAN_SCHEMA_VERSION: u32 = 1;

/// One experiment ready to run: resolved (overrides applied), planned.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub experiment: Experiment,
    pub plan: Plan,
    pub warnings: Vec<Diagnostic>,
}

/// Options that change the plan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// Scale hold/ramp/warm-up down (CI); recorded in the plan.
    pub quick: bool,
}

/// The resolved plan of one experiment run (written to `plan.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub schema_version: u32,
    pub experiment_id: String,
    pub lab: crate::experiment::Lab,
    pub script: Script,
    pub model: Model,
    pub endpoint: String,
    /// `Some` when `--quick` scaled the durations.
    pub quick: Option<QuickProfile>,
    pub hold_s: u32,
    pub ramp_s: u32,
    pub warmup_s: u32,
    pub warmup_rps: u32,
    pub slo_p95_ms: f64,
    pub slo_p99_ms: Option<f64>,
    pub error_budget: f64,
    pub timeout_s: u32,
    pub think_time_s: Option<f64>,
    pub steps: Vec<Step>,
    /// Every window in time order.
    pub windows: Vec<Window>,
    /// Offset (s) from k6 start at which the first step begins: the instant put on :00 by alignment.
    pub align_offset_s: u32,
    /// Total scheduled k6 duration (s), excluding graceful stop.
    pub total_s: u32,
    /// k6 stages of the main scenario.
    pub stages: Vec<K6Stage>,
    pub vus: VuSizing,
    pub abort: AbortPlan,
    /// Environment for the k6 script (lab-spec §3/§4 names); the run adds URL/BASE.
    pub k6_env: BTreeMap<String, String>,
    /// The freeze of the app in the first step (`load.pause`), when the experiment has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<pause::PausePlan>,
    /// The timed actions of the load (`load.actions`: a php-fpm reload during the collapse).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<actions::ActionPlan>,
    /// The drop profile's clients (`load.drop`): the load runs drop.js instead of stepped.js.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<crate::experiment::DropLoad>,
    /// The trigger in one step (`load.trigger`), when the experiment has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<trigger::TriggerPlan>,
    /// This side's turns when `perflab compare` interleaves two stacks step by step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<Turns>,
}

/// One side's turns in a pair by turns (`plan.json`'s `turns`; `turns::split` makes them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turns {
    /// `A` or `B`.
    pub side: String,
    /// Per step: whether this side takes the level's first turn.
    pub first: Vec<bool>,
    /// Per step: seconds at rate 0 before its ramp (the other side's turns).
    pub idle_s: Vec<u32>,
    /// One turn: the step's ramp and hold (s).
    pub slot_s: u32,
}

/// Tag of a stepped.js step: `r0150`.
pub(crate) fn stage_tag(rate: u32) -> String {
    format!("r{rate:04}")
}

/// Tag of a breakpoint.js step: `04_rps150` (open) or `04_vus40` (closed).
pub(crate) fn step_tag(index: usize, model: Model, target: u32) -> String {
    let unit = if model == Model::Open { "rps" } else { "vus" };
    format!("{:02}_{unit}{target}", index + 1)
}

/// Compute the k6 start for `plan` given the current time. With `enabled = false` k6 starts now.
///
/// The first step starts `plan.align_offset_s` after k6 starts (the warm-up for breakpoint.js,
/// 0 for stepped.js); the smallest minute boundary `M >= now + offset` gives `k6_start = M - offset`.
pub fn align(now: chrono::DateTime<chrono::Utc>, plan: &Plan, enabled: bool) -> Alignment {
    align::align_offset(now, plan.align_offset_s, plan.total_s, enabled)
}

/// The pause of a load whose first step is `first`, held `hold` s (after `--quick`) where the
/// experiment says `l.hold_s`: the pause's middle keeps its place in the step, `for_s` is kept,
/// and the pause stays within the step.
fn pause_plan(l: &LoadSettings, first: Option<&Step>, hold: u32) -> Option<pause::PausePlan> {
    let p = l.pause.as_ref()?;
    let first = first?;
    let scale = if l.hold_s == 0 {
        1.0
    } else {
        f64::from(hold) / f64::from(l.hold_s)
    };
    let room = (f64::from(hold) - p.for_s).max(0.0);
    // the pause's middle keeps its place in the step (P is kept, D scaled)
    let at_s = ((p.at_s + p.for_s / 2.0) * scale - p.for_s / 2.0).clamp(0.0, room);
    Some(pause::PausePlan {
        start_s: f64::from(first.hold_start_s) + at_s,
        for_s: p.for_s,
        at_s,
        step_target: first.target,
    })
}

/// Build the plan of an (already validated) experiment.
pub fn build(e: &Experiment, opts: PlanOptions) -> Plan {
    let l = &e.load;
    let (hold, ramp, warmup, quick) = durations(l, opts);
    let trigger_scale = trigger::scale(l, hold);
    let hold = trigger::quick_hold(l, hold, trigger_scale);
    let stepped = l.script == Script::Stepped;
    let (ramp, warmup) = if stepped { (0, 0) } else { (ramp, warmup) };
    let mut tl = timeline(l, hold, ramp, warmup);
    tl.push_recover(l, opts);
    tl.push_ramp_down(l);
    let max_step = l.steps.iter().copied().max().unwrap_or(0);
    let vus = vu_sizing(e, max_step);
    let abort = AbortPlan {
        enabled: l.abort,
        p95_ms: if stepped {
            l.abort_p95_ms.unwrap_or(l.slo_p95_ms * 2.5)
        } else {
            l.slo_p95_ms
        },
        error_rate: l.error_budget,
        delay_eval_s: if stepped {
            10
        } else {
            warmup.saturating_add(30)
        },
    };
    let mut plan = Plan {
        schema_version: PLAN_SCHEMA_VERSION,
        experiment_id: e.id.clone(),
        lab: e.lab,
        script: l.script,
        model: l.model,
        endpoint: l.endpoint.clone(),
        quick,
        hold_s: hold,
        ramp_s: ramp,
        warmup_s: warmup,
        warmup_rps: l.warmup_rps,
        slo_p95_ms: l.slo_p95_ms,
        slo_p99_ms: l.slo_p99_ms,
        error_budget: l.error_budget,
        timeout_s: l.timeout_s,
        think_time_s: l.think_time_s,
        steps: tl.steps,
        windows: tl.windows,
        align_offset_s: warmup,
        total_s: tl.end_s,
        stages: tl.stages,
        vus,
        abort,
        k6_env: BTreeMap::new(),
        pause: None,
        actions: Vec::new(),
        drop: l.drop.clone(),
        trigger: None,
        turns: None,
    };
    plan.pause = pause_plan(l, plan.steps.first(), hold);
    plan.actions = actions::plan(l, |during| {
        let kind = match during {
            ActionWindow::Top => WindowKind::Hold,
            ActionWindow::Recover => WindowKind::Recover,
        };
        let w = plan.windows.iter().rev().find(|w| w.kind == kind)?;
        Some((w.start_s, w.end_s))
    });
    let spans: Vec<trigger::StepSpan> = (plan.steps.iter())
        .map(|s| trigger::StepSpan {
            target: s.target,
            hold_start_s: s.hold_start_s,
            hold_end_s: s.hold_end_s,
        })
        .collect();
    plan.trigger = trigger::plan(l, &spans, trigger_scale);
    plan.k6_env = k6_env(&plan);
    plan
}

/// Hold, ramp and warm-up (s), scaled by the `--quick` profile when asked.
fn durations(l: &LoadSettings, opts: PlanOptions) -> (u32, u32, u32, Option<QuickProfile>) {
    if !opts.quick {
        return (l.hold_s, l.ramp_s, l.warmup_s, None);
    }
    let q = QuickProfile {
        factor: QuickProfile::FACTOR,
        min_hold_s: 5,
        min_ramp_s: 2,
        min_warmup_s: 5,
        original_hold_s: l.hold_s,
        original_ramp_s: l.ramp_s,
        original_warmup_s: l.warmup_s,
    };
    (
        QuickProfile::scale(l.hold_s, q.min_hold_s),
        QuickProfile::scale(l.ramp_s, q.min_ramp_s),
        QuickProfile::scale(l.warmup_s, q.min_warmup_s),
        Some(q),
    )
}

/// The steps, windows and k6 stages in time order, and where they end (s from k6 start).
struct Timeline {
    windows: Vec<Window>,
    steps: Vec<Step>,
    stages: Vec<K6Stage>,
    end_s: u32,
}

fn timeline(l: &LoadSettings, hold: u32, ramp: u32, warmup: u32) -> Timeline {
    let mut tl = Timeline {
        windows: Vec::new(),
        steps: Vec::new(),
        stages: Vec::new(),
        end_s: warmup,
    };
    if warmup > 0 {
        tl.windows.push(Window {
            kind: WindowKind::Warmup,
            step: None,
            target: l.warmup_rps,
            start_s: 0,
            end_s: warmup,
            measured: false,
            tag: None,
        });
    }
    for (i, &target) in l.steps.iter().enumerate() {
        tl.push_step(l, i, target, hold, ramp);
    }
    tl
}

impl Timeline {
    /// The recovery phase after the last step, when the load has one (`--quick` scales it as
    /// a hold, not below 10 s: the drain needs time to show).
    fn push_recover(&mut self, l: &LoadSettings, opts: PlanOptions) {
        let (Some(rate), Some(secs)) = (l.recover_rps, l.recover_s) else {
            return;
        };
        let secs = if opts.quick {
            QuickProfile::scale(secs, 10)
        } else {
            secs
        };
        self.stages.push(K6Stage {
            target: rate,
            duration_s: 0,
        });
        self.stages.push(K6Stage {
            target: rate,
            duration_s: secs,
        });
        self.windows.push(Window {
            kind: WindowKind::Recover,
            step: None,
            target: rate,
            start_s: self.end_s,
            end_s: self.end_s.saturating_add(secs),
            measured: false,
            tag: Some(format!("stage:{RECOVER_TAG}")),
        });
        self.end_s = self.end_s.saturating_add(secs);
    }

    /// drop.js's ramp to 0 after the last step, when the load has one: k6 runs it, so the
    /// plan's total and the live view's phases hold it.
    fn push_ramp_down(&mut self, l: &LoadSettings) {
        let secs = l.drop.as_ref().map_or(0, |d| d.ramp_down_s);
        if secs == 0 {
            return;
        }
        self.stages.push(K6Stage {
            target: 0,
            duration_s: secs,
        });
        self.windows.push(Window {
            kind: WindowKind::RampDown,
            step: None,
            target: 0,
            start_s: self.end_s,
            end_s: self.end_s.saturating_add(secs),
            measured: false,
            tag: Some("stage:rampdown".into()),
        });
        self.end_s = self.end_s.saturating_add(secs);
    }

    /// Step `i`: its ramp (breakpoint.js) and its hold, from `end_s` on.
    fn push_step(&mut self, l: &LoadSettings, i: usize, target: u32, hold: u32, ramp: u32) {
        let stepped = l.script == Script::Stepped;
        let start = self.end_s;
        let mut t = start;
        if stepped {
            self.stages.push(K6Stage {
                target,
                duration_s: 0,
            });
        } else {
            self.stages.push(K6Stage {
                target,
                duration_s: ramp,
            });
            if ramp > 0 {
                self.windows.push(Window {
                    kind: WindowKind::Ramp,
                    step: Some(i),
                    target,
                    start_s: t,
                    end_s: t.saturating_add(ramp),
                    measured: false,
                    tag: Some("step:ramp".into()),
                });
            }
            t = t.saturating_add(ramp);
        }
        self.stages.push(K6Stage {
            target,
            duration_s: hold,
        });
        let tag = if stepped {
            stage_tag(target)
        } else {
            step_tag(i, l.model, target)
        };
        let key = if stepped { "stage" } else { "step" };
        self.windows.push(Window {
            kind: WindowKind::Hold,
            step: Some(i),
            target,
            start_s: t,
            end_s: t.saturating_add(hold),
            measured: true,
            tag: Some(format!("{key}:{tag}")),
        });
        let open = l.model == Model::Open;
        let expected = open.then_some(target.saturating_mul(hold));
        self.steps.push(Step {
            index: i,
            target,
            start_s: start,
            hold_start_s: t,
            hold_end_s: t.saturating_add(hold),
            tag,
            vus_at_slo: open.then(|| (target as f64 * l.slo_p95_ms / 1000.0).ceil() as u32),
            nominal_rps_max: l.think_time_s.filter(|_| !open).map(|z| target as f64 / z),
            expected_requests: expected,
            p99_tail_samples: expected.map(|n| n / 100),
        });
        self.end_s = t.saturating_add(hold);
    }
}

fn vu_sizing(e: &Experiment, max_step: u32) -> VuSizing {
    let l = &e.load;
    let needed_at_slo = vus_needed_at_slo(l);
    let needed_at_timeout = vus_needed_at_timeout(l);
    if l.model == Model::Closed {
        return VuSizing {
            pre_vus: l.pre_vus,
            max_vus: max_step,
            needed_at_slo,
            needed_at_timeout,
            drop_latency_s: None,
            explanation: format!(
                "closed model: the steps are VUs (up to {max_step}); throughput = VUs / (R + {} s think time), \
                 nothing is dropped, the rate falls instead",
                l.think_time_s.unwrap_or(0.0)
            ),
        };
    }
    let drop = (max_step > 0).then(|| l.max_vus as f64 / max_step as f64);
    VuSizing {
        pre_vus: l.pre_vus,
        max_vus: l.max_vus,
        needed_at_slo,
        needed_at_timeout,
        drop_latency_s: drop,
        explanation: format!(
            "L = lambda x W: at {max_step} rps and the {} ms SLO, {needed_at_slo} VUs are busy; \
             {} max VUs hold until mean latency reaches {:.2} s; never dropping before the {} s timeout \
             would need {needed_at_timeout}",
            l.slo_p95_ms,
            l.max_vus,
            drop.unwrap_or(0.0),
            l.timeout_s
        ),
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The script's environment variables with the plan's (possibly quick-scaled) values.
fn k6_env(p: &Plan) -> BTreeMap<String, String> {
    let steps = p
        .steps
        .iter()
        .map(|s| s.target.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut env = BTreeMap::new();
    let mut set = |k: &str, v: String| {
        env.insert(k.to_string(), v);
    };
    set("STEPS", steps);
    set("HOLD", p.hold_s.to_string());
    match p.script {
        Script::Stepped => {
            set("SLO_MS", fmt_num(p.slo_p95_ms));
            set("ABORT_P95_MS", fmt_num(p.abort.p95_ms));
            set("ABORT", if p.abort.enabled { "1" } else { "0" }.into());
            set("VUS", p.vus.max_vus.to_string());
            if p.vus.pre_vus < p.vus.max_vus {
                set("PRE_VUS", p.vus.pre_vus.to_string());
            }
            set("TIMEOUT", format!("{}s", p.timeout_s));
            if let Some(w) = p.windows.iter().find(|w| w.kind == WindowKind::Recover) {
                set("RECOVER", w.target.to_string());
                set("RECOVER_HOLD", (w.end_s - w.start_s).to_string());
            }
        }
        Script::Breakpoint => {
            set("ENDPOINT", p.endpoint.clone());
            set(
                "MODEL",
                if p.model == Model::Open {
                    "open"
                } else {
                    "closed"
                }
                .into(),
            );
            set("RAMP", p.ramp_s.to_string());
            set("WARMUP", p.warmup_s.to_string());
            set("WARMUP_RPS", p.warmup_rps.to_string());
            set("SLO_P95", fmt_num(p.slo_p95_ms));
            set("PRE_VUS", p.vus.pre_vus.to_string());
            set("MAX_VUS", p.vus.max_vus.to_string());
            set("TIMEOUT", format!("{}s", p.timeout_s));
            if let Some(z) = p.think_time_s {
                set("SLEEP", fmt_num(z));
            }
            if !p.abort.enabled {
                set("NOABORT", "1".into());
            }
        }
    }
    if let Some(p99) = p.slo_p99_ms {
        set("SLO_P99_MS", fmt_num(p99));
    }
    if let Some(d) = p.drop.as_ref().filter(|_| p.script == Script::Stepped) {
        trigger::drop_env(d, &mut env);
    }
    env
}

impl Plan {
    /// Windows whose requests count for the step table.
    pub fn measured_windows(&self) -> impl Iterator<Item = &Window> {
        self.windows.iter().filter(|w| w.measured)
    }

    /// Which step (index) a request started at `offset_s` from k6 start belongs to, if measured.
    pub fn step_at(&self, offset_s: f64) -> Option<usize> {
        self.steps
            .iter()
            .find(|s| offset_s >= s.hold_start_s as f64 && offset_s < s.hold_end_s as f64)
            .map(|s| s.index)
    }
}
