//! Verdicts by the written criteria: a failing step is transient when a later step passes;
//! the knee is the first step that fails for good, with a sentence naming why.
use crate::analyze::model::*;

/// Where the run broke, in step targets.
pub(super) struct Knee {
    /// Index of the knee step in the steps.
    pub idx: Option<usize>,
    pub knee: Option<u32>,
    pub last_passing: Option<u32>,
    pub passing_below_knee: Option<u32>,
    pub why: Option<String>,
}

/// Set each failing step's verdict (fail or transient) and find the knee.
pub(super) fn judge(steps: &mut [StepReport], has_samples: bool) -> Knee {
    let n = steps.len();
    for i in 0..n {
        if !steps[i].failures.is_empty() {
            let later_pass = steps[i + 1..].iter().any(|s| s.failures.is_empty());
            steps[i].verdict = if later_pass {
                Verdict::Transient
            } else {
                Verdict::Fail
            };
        }
    }
    let last_passing = steps
        .iter()
        .take_while(|s| s.verdict == Verdict::Pass)
        .last()
        .map(|s| s.target);
    let idx = steps.iter().position(|s| s.verdict == Verdict::Fail);
    let passing_below_knee = idx.and_then(|k| {
        steps[..k]
            .iter()
            .rev()
            .find(|s| s.verdict == Verdict::Pass)
            .map(|s| s.target)
    });
    Knee {
        idx,
        knee: idx.map(|i| steps[i].target),
        last_passing,
        passing_below_knee,
        why: idx.map(|i| knee_sentence(&steps[i], has_samples)),
    }
}

/// "knee 180 rps: p95 1,113 ms > 200; fpm 20/20 busy, listen queue 186; pg idle ClientRead -> app CPU bound"
fn knee_sentence(s: &StepReport, has_samples: bool) -> String {
    let mut parts: Vec<String> = s.failures.iter().map(|f| f.text.clone()).collect();
    if let Some(w) = &s.server {
        parts.extend(w.saturated.iter().cloned());
        let app_busy = w.saturated.iter().any(|x| {
            x.starts_with("fpm") || x.starts_with("app CPU") || x.starts_with("event loop")
        });
        if w.pg.as_ref().is_some_and(|p| p.waits_for_client) {
            parts.push(if app_busy {
                "pg idle ClientRead -> app CPU bound".into()
            } else {
                "pg idle ClientRead (the database waits for the app)".into()
            });
        }
        if w.saturated.is_empty() {
            parts.push("no server resource saturated for the whole step".into());
        }
    } else if !has_samples {
        parts.push("no server samples to name the resource".into());
    }
    if let Some(why) = &s.host_limited {
        parts.push(format!("host-limited: {why}"));
    }
    format!(
        "knee {} {}: {}",
        s.target,
        s.unit.as_str(),
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps at 10, 20, ... rps; `failing[i]` gives step i a criterion-1 failure.
    fn steps(failing: &[bool]) -> Vec<StepReport> {
        failing
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut s = super::super::test_row(10 * (i as u32 + 1), 0);
                if *f {
                    s.failures.push(Failure {
                        criterion: 1,
                        text: "p95 300.0 ms > 200".into(),
                    });
                }
                s
            })
            .collect()
    }

    #[test]
    fn a_failure_followed_by_a_pass_is_transient_and_the_knee_fails_for_good() {
        let mut s = steps(&[false, true, false, true, true]);
        let k = judge(&mut s, false);
        let v: Vec<Verdict> = s.iter().map(|s| s.verdict).collect();
        use Verdict::*;
        assert_eq!(v, [Pass, Transient, Pass, Fail, Fail]);
        assert_eq!((k.idx, k.knee), (Some(3), Some(40)));
        assert_eq!((k.last_passing, k.passing_below_knee), (Some(10), Some(30)));
        assert_eq!(
            k.why.as_deref(),
            Some("knee 40 rps: p95 300.0 ms > 200; no server samples to name the resource")
        );
    }

    #[test]
    fn no_knee_when_the_last_step_passes() {
        let mut s = steps(&[false, true, false]);
        let k = judge(&mut s, true);
        assert_eq!((k.idx, k.knee, k.why), (None, None, None));
        assert_eq!((k.last_passing, k.passing_below_knee), (Some(10), None));
    }
}
