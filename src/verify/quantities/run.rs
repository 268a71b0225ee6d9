//! The run quantities, one row each (name, help, reader): the figures of the whole run's
//! `report.json` (the knee, the plateau, the pause experiment, the ceilings).
use super::value::{Missing, b, need};
use crate::analyze::actions::ActionEffect;
use crate::analyze::model::{CeilingCheck, PoolCeiling, Report};
use crate::analyze::omission::Omission;
use crate::analyze::recovery::Recovery;
use crate::analyze::trigger::{Outcome, TriggerReport};
use crate::analyze::usl::UslFit;

fn no_knee() -> Missing {
    "no knee: no step failed for good in the steps run".to_string()
}

/// The knee's target.
fn knee(r: &Report) -> Result<u32, Missing> {
    need(r.knee, no_knee)
}

/// The last passing step's target.
fn last_passing(r: &Report) -> Result<u32, Missing> {
    need(r.last_passing, || "no step passed".to_string())
}

/// The position of the step with target `t` in the run's steps.
fn index_of(r: &Report, t: u32) -> Option<f64> {
    r.steps.iter().position(|s| s.target == t).map(|i| i as f64)
}

/// A figure of the pause experiment (`load.pause`).
fn pause(r: &Report, f: fn(&Omission) -> f64) -> Result<f64, Missing> {
    r.omission
        .as_ref()
        .map(f)
        .ok_or_else(|| "no pause in this run (`load.pause` with its closed twin)".to_string())
}

/// The USL fit of a closed-model run.
fn usl(r: &Report) -> Result<&UslFit, Missing> {
    let u = need(r.usl.as_ref(), || {
        "no USL sweep: the run is not a closed-model load".to_string()
    })?;
    need(u.fit.as_ref(), || {
        format!("no USL fit: {}", u.why_not.as_deref().unwrap_or("?"))
    })
}

/// γ / α, the throughput the contention alone lets through.
fn usl_ceiling(f: &UslFit) -> Result<f64, Missing> {
    let a = need((f.alpha.value > 0.0).then_some(f.alpha.value), || {
        "α = 0: no contention ceiling".to_string()
    })?;
    Ok(f.gamma.value / a)
}

fn pool(r: &Report) -> Result<&PoolCeiling, Missing> {
    need(r.checks.pool_ceiling.as_ref(), || {
        "no pool ceiling in the report".into()
    })
}

fn cpu_ceiling(r: &Report) -> Result<&CeilingCheck, Missing> {
    need(r.checks.cpu_ceiling.as_ref(), || {
        "no CPU ceiling in the report".into()
    })
}

/// A figure of the run's first timed action (`load.actions`); `None` inside: not measured.
fn action(r: &Report, f: fn(&ActionEffect) -> Option<f64>, what: &str) -> Result<f64, Missing> {
    let a = need(r.actions.first(), || {
        "no timed action in this run (`load.actions`)".to_string()
    })?;
    need(f(a), || {
        format!("{what}: not measured around action `{}`", a.name)
    })
}

/// A figure of the recovery phase (`load.recover_rps`); `None` inside: not measured there.
fn recovery(r: &Report, f: fn(&Recovery) -> Option<f64>, what: &str) -> Result<f64, Missing> {
    let x = need(r.recovery.as_ref(), || {
        "no recovery phase in this run (`load.recover_rps`)".to_string()
    })?;
    need(f(x), || {
        format!("{what} not measured (not within the phase, or no php-fpm samples)")
    })
}

/// A figure of the trigger's outcome (`load.trigger`); n/a without a steady state before it.
fn trigger(r: &Report, f: fn(&TriggerReport) -> Option<f64>, what: &str) -> Result<f64, Missing> {
    let t = need(r.trigger.as_ref(), || {
        "no trigger in this run (`load.trigger`)".to_string()
    })?;
    if let Some(why) = &t.why_na {
        return Err(why.clone());
    }
    need(f(t), || format!("{what} not measured"))
}

/// `max children reached`'s growth summed over the steps' windows; missing without php-fpm
/// status samples in any step.
fn max_children_reached_steps(r: &Report) -> Result<f64, Missing> {
    let fpm: Vec<u64> = r
        .steps
        .iter()
        .filter_map(|s| s.server.as_ref()?.fpm.as_ref())
        .map(|f| f.max_children_reached)
        .collect();
    need((!fpm.is_empty()).then_some(()), || {
        "no php-fpm status samples in any step".to_string()
    })?;
    Ok(fpm.iter().sum::<u64>() as f64)
}

/// The lowest step's target.
fn lowest(r: &Report) -> Result<f64, Missing> {
    Ok(need(r.steps.first(), || "no steps".to_string())?.target as f64)
}

/// The highest step's target.
fn top(r: &Report) -> Result<f64, Missing> {
    Ok(need(r.steps.last(), || "no steps".to_string())?.target as f64)
}

quantities! {
    /// A figure of the whole run's report.
    RunQ, |r: &Report| {
        Knee "knee" => "target of the first failing step that is not transient"
            => knee(r)? as f64,
        MaxSustainable "max_sustainable"
            => "the refined max sustainable rate (`run --refine`), else the last passing step"
            => match r.refine.as_ref().and_then(|f| f.max_sustainable) {
                Some(rate) => rate as f64,
                None => last_passing(r)? as f64,
            },
        LastPassing "last_passing"
            => "target of the last step passing with every earlier step passing"
            => last_passing(r)? as f64,
        BelowKnee "below_knee" => "target of the passing step right below the knee"
            => need(r.passing_below_knee, || "no passing step below the knee".to_string())?
                as f64,
        KneeIndex "knee_index" => "position of the knee in the steps, 0 = lowest"
            => need(index_of(r, knee(r)?), no_knee)?,
        LastPassingIndex "last_passing_index" => "position of the last passing step"
            => need(index_of(r, last_passing(r)?), || "no step passed".to_string())?,
        Steps "steps" => "steps recorded" => r.steps.len() as f64,
        MaxChildrenReachedSteps "max_children_reached_steps"
            => "php-fpm's `max children reached` growth summed over the steps (it counts each time the pool fills, re-armed once it has shrunk below max_children)"
            => max_children_reached_steps(r)?,
        LowestStep "lowest_step" => "target of the lowest step" => lowest(r)?,
        TopStep "top_step" => "target of the highest step recorded" => top(r)?,
        MaxOkPerS "max_ok_per_s" => "highest goodput of any step (the plateau)"
            => r.steps.iter().map(|s| s.ok_per_s).fold(0.0, f64::max),
        DroppedIterations "dropped_iterations" => "iterations dropped outside the warm-up"
            => r.dropped_iterations as f64,
        PauseOpenP99Ms "pause_open_p99_ms"
            => "`load.pause`: p99 of the open load with the app frozen (ms)"
            => pause(r, |o| o.open.p99_ms)?,
        PauseClosedP99Ms "pause_closed_p99_ms"
            => "`load.pause`: p99 of the closed twin, uncorrected (ms)"
            => pause(r, |o| o.closed.p99_ms)?,
        PauseCorrectedP99Ms "pause_corrected_p99_ms"
            => "`load.pause`: p99 of the closed twin corrected from its intended schedule (ms)"
            => pause(r, |o| o.corrected_p99_ms)?,
        PauseExpectedP99Ms "pause_expected_p99_ms"
            => "`load.pause`: P - 0.01 D, the open load's expected p99 (ms)"
            => pause(r, |o| o.expected_p99_ms)?,
        PauseOpenDropped "pause_open_dropped" => "`load.pause`: iterations the open load dropped"
            => pause(r, |o| o.open.dropped as f64)?,
        PauseClosedRequests "pause_closed_requests"
            => "`load.pause`: requests the closed twin sent in the step"
            => pause(r, |o| o.closed.requests as f64)?,
        PauseCorrectedRequests "pause_corrected_requests"
            => "`load.pause`: the closed twin's requests with the corrected ones"
            => pause(r, |o| o.corrected_requests as f64)?,
        PauseClosedMissing "pause_closed_missing"
            => "`load.pause`: requests the closed twin did not send while it waited (corrected less sent)"
            => pause(r, |o| o.corrected_requests.saturating_sub(o.closed.requests) as f64)?,
        PauseS "pause_s" => "`load.pause`: P, how long the app was frozen (s)"
            => pause(r, |o| o.pause_s)?,
        PauseRate "pause_rate" => "`load.pause`: the open load's rate (rps)"
            => pause(r, |o| f64::from(o.rate))?,
        PoolCeiling "pool_ceiling" => "N / W with W the mean latency of the lowest step (rps)"
            => pool(r)?.ceiling_per_s,
        PoolWMs "pool_w_ms" => "W of the pool ceiling: mean latency of the lowest step (ms)"
            => pool(r)?.w_s * 1000.0,
        CpuCeiling "cpu_ceiling"
            => "cores x 1000 / CPU ms per ok at the last passing step (rps)"
            => cpu_ceiling(r)?.cpu_ceiling_per_s,
        DrainS "drain_s" => "seconds from the end of the last window to the last response"
            => need(r.checks.drain_s, || "no drain time".to_string())?,
        Aborted "aborted" => "1 when k6 stopped the test itself (abort threshold)"
            => b(need(r.params.aborted, || "the k6 log was not read".to_string())?),
        InsufficientVus "insufficient_vus" => "1 when k6 logged `Insufficient VUs`"
            => b(r.params.insufficient_vus),
        RecoverDrainedS "recover_drained_s"
            => "recovery phase: s from the drop until php-fpm's queue and active are back at the lowest step's"
            => recovery(r, |x| x.drained_s, "the drain")?,
        RecoverDrainMinS "recover_drain_min_s"
            => "recovery phase: the drain the mechanism predicts at least: (queue + half-open at the drop) / (php-fpm's accept rate in the overload - the arrivals)"
            => recovery(r, |x| x.drain.as_ref()?.min_s, "the predicted drain")?,
        RecoverDrainMaxS "recover_drain_max_s"
            => "recovery phase: the drain the mechanism predicts at most: the connecting ones (nginx's SYN_SENT) too, plus one php-fpm sample period; needs stack.php.kernel_counters"
            => recovery(r, |x| x.drain.as_ref()?.max_s, "the predicted drain's bound (the handshakes need stack.php.kernel_counters)")?,
        RecoverP95BackS "recover_p95_back_s"
            => "recovery phase: s from the drop until p95 stays under the SLO (3 seconds in a row)"
            => recovery(r, |x| x.p95_back_s, "p95 back under the SLO")?,
        RecoverPeakQueue "recover_peak_queue"
            => "recovery phase: longest php-fpm listen queue from the overload to the end"
            => recovery(r, |x| x.peak_queue.map(|q| q as f64), "the listen queue")?,
        RecoverSentPerS "recover_sent_per_s" => "recovery phase: requests sent per second"
            => recovery(r, |x| Some(x.sent_per_s), "the rate")?,
        RecoverWasted "recover_wasted"
            => "requests php-fpm ran, from the overload to the end, whose client got no answer from them (accepted - ok)"
            => recovery(r, |x| x.wasted.map(|w| w as f64), "php-fpm's accepted conn")?,
        RecoverWastedShare "recover_wasted_share"
            => "recover_wasted / php-fpm's accepted requests over the same span"
            => recovery(r, |x| match (x.wasted, x.fpm_accepted) {
                (Some(w), Some(a)) if a > 0 => Some(w as f64 / a as f64),
                _ => None,
            }, "php-fpm's accepted conn")?,
        ActionExitCode "action_exit_code"
            => "the first timed action's exit code (load.actions; n/a when it did not run)"
            => action(r, |a| a.ran.then_some(a.exit_code).flatten().map(|c| c as f64), "the exit code")?,
        ActionQueueBefore "action_queue_before"
            => "php-fpm's listen queue at the last sample before the first timed action"
            => action(r, |a| a.queue_before.map(|q| q as f64), "the listen queue before")?,
        ActionQueueAfter "action_queue_after"
            => "php-fpm's listen queue at the first sample after the first timed action"
            => action(r, |a| a.queue_after.map(|q| q as f64), "the listen queue after")?,
        ActionQueueMinAfter "action_queue_min_after"
            => "php-fpm's lowest listen queue within 10 s after the first timed action"
            => action(r, |a| a.queue_min_after.map(|q| q as f64), "the listen queue after")?,
        ActionKernelQueueBefore "action_kernel_queue_before"
            => "the kernel's accept queue of php-fpm's socket (fpm_net) at the last reading before the first timed action"
            => action(r, |a| a.kernel_queue_before.map(|q| q as f64), "the kernel's accept queue before")?,
        ActionKernelQueueAfter "action_kernel_queue_after"
            => "the kernel's accept queue of php-fpm's socket (fpm_net) at the first reading after the first timed action"
            => action(r, |a| a.kernel_queue_after.map(|q| q as f64), "the kernel's accept queue after")?,
        ActionFpmRestarted "action_fpm_restarted"
            => "1 when php-fpm's counters restarted across the first timed action (accepted conn fell)"
            => action(r, |a| a.fpm_restarted.map(b), "php-fpm's accepted conn")?,
        ActionNon200After "action_non200_after"
            => "answers other than 200 completed within 10 s after the first timed action"
            => action(r, |a| Some(a.non200_after as f64), "the answers")?,
        TriggerRecovered "trigger_recovered"
            => "1 when goodput came back to its pre-trigger level within the stated time, 0 when stuck (n/a without a steady state before the trigger)"
            => trigger(r, |t| Some(b(t.outcome == Outcome::Recovered)), "the outcome")?,
        TriggerBackS "trigger_back_s"
            => "s from the trigger's end until goodput held 90 % of its level before it in every 5 s to the step's end"
            => trigger(r, |t| t.back_after_s, "goodput back within the step")?,
        TriggerAmplification "trigger_amplification"
            => "requests per user arrival over the trigger step's last 10 s, from half the stated time after it at the earliest (retries included)"
            => trigger(r, |t| t.end.map(|e| e.amplification), "the step's end")?,
        TriggerAmplificationBefore "trigger_amplification_before"
            => "requests per user arrival before the trigger"
            => trigger(r, |t| t.before.map(|e| e.amplification), "the baseline")?,
        TriggerGoodputRatio "trigger_goodput_ratio"
            => "goodput over the trigger step's last 10 s / goodput before the trigger"
            => trigger(r, |t| t.goodput_ratio, "the step's end")?,
        TriggerOkBefore "trigger_ok_before" => "goodput before the trigger (ok/s)"
            => trigger(r, |t| t.before.map(|e| e.ok_per_s), "the baseline")?,
        UslAlpha "usl.alpha" => "USL contention α of a closed-model run's clean steps"
            => usl(r)?.alpha.value,
        UslAlphaLo "usl.alpha_lo" => "lower end of α's two-sided 95 % interval"
            => usl(r)?.alpha.lo,
        UslBeta "usl.beta" => "USL coherency β of a closed-model run's clean steps"
            => usl(r)?.beta.value,
        UslGamma "usl.gamma" => "USL γ, the fitted throughput at N = 1 (ok/s)"
            => usl(r)?.gamma.value,
        UslNMax "usl.n_max" => "USL peak concurrency sqrt((1 - α) / β) (VUs)"
            => need(usl(r)?.n_max, || "β = 0: the USL curve has no peak".to_string())?,
        UslCeiling "usl.ceiling" => "USL contention ceiling γ / α (ok/s)"
            => usl_ceiling(usl(r)?)?,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp1() -> Report {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/verify/exp1");
        let run = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path();
        let t = std::fs::read_to_string(run.join("report.json")).unwrap();
        crate::rundir::report::parse(&t).unwrap()
    }

    #[test]
    fn max_children_reached_sums_the_steps_and_needs_status_samples() {
        let mut r = exp1();
        let q = RunQ::MaxChildrenReachedSteps;
        assert_eq!(q.read(&r), Ok(0.0), "a static pool: 0 in every step");
        let with_fpm: Vec<usize> = (0..r.steps.len())
            .filter(|&i| r.steps[i].server.as_ref().is_some_and(|s| s.fpm.is_some()))
            .collect();
        assert!(with_fpm.len() >= 2);
        for (i, n) in [(with_fpm[0], 2), (with_fpm[1], 1)] {
            r.steps[i]
                .server
                .as_mut()
                .unwrap()
                .fpm
                .as_mut()
                .unwrap()
                .max_children_reached = n;
        }
        assert_eq!(
            q.read(&r),
            Ok(3.0),
            "the episodes of every step, not one step's"
        );
        for s in &mut r.steps {
            if let Some(sv) = s.server.as_mut() {
                sv.fpm = None;
            }
        }
        assert!(
            q.read(&r).is_err(),
            "no php-fpm samples: not measured, not 0"
        );
    }
}
