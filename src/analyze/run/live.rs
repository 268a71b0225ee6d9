//! Verdicts while a run goes on (the live page, `live`): a step's figures as k6 reports them
//! when its window closes (its per-step sub-metrics and the counters' deltas), judged by the
//! report's own criteria (`step::criteria`) and knee rule (`verdict::judge`). Provisional:
//! report.html's verdicts come from every request of the CSV after the run.
use std::collections::BTreeMap;

use crate::analyze::k6csv::StepUnit;
use crate::analyze::model::*;

/// One closed step's live figures.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveStep {
    pub target: u32,
    /// Requests of the step and how many failed.
    pub requests: u64,
    pub failed: u64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub sent_per_s: f64,
    pub ok_per_s: f64,
    /// Iterations k6 dropped during the step's window.
    pub dropped: u64,
    pub max_vus: Option<f64>,
    /// Window (unix ms) and its length in seconds.
    pub start_ms: i64,
    pub window_s: f64,
    /// The server's figures over the window (`samples::window` on the lines sampled so far).
    pub server: Option<crate::analyze::samples::WindowServer>,
}

/// Each closed step's verdict with its failed criteria in words, and the knee so far.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LiveJudgement {
    pub verdicts: Vec<(Verdict, Vec<String>)>,
    pub knee: Option<u32>,
    pub why: Option<String>,
}

fn row(s: &LiveStep, model: LoadModel) -> StepReport {
    let unit = match model {
        LoadModel::Open => StepUnit::Rps,
        LoadModel::Closed => StepUnit::Vus,
    };
    StepReport {
        name: format!("{}{}", unit.as_str(), s.target),
        target: s.target,
        unit,
        requests: s.requests,
        p50_ms: s.p50_ms,
        p95_ms: s.p95_ms,
        p99_ms: s.p99_ms,
        max_ms: s.p99_ms,
        avg_ms: s.p50_ms,
        ok_p50_ms: s.p50_ms,
        ok_p95_ms: s.p95_ms,
        ok_p99_ms: s.p99_ms,
        failed_rate: if s.requests == 0 {
            0.0
        } else {
            s.failed as f64 / s.requests as f64
        },
        sent_per_s: s.sent_per_s,
        ok_per_s: s.ok_per_s,
        verdict: Verdict::Pass,
        failures: Vec::new(),
        start_ms: s.start_ms,
        window_s: s.window_s,
        truncated: false,
        non200: BTreeMap::new(),
        dropped: s.dropped,
        max_vus: s.max_vus,
        mean_vus: None,
        p99_tail_samples: s.requests as f64 / 100.0,
        server: s.server.clone(),
        ms_cpu_per_ok: None,
        host_limited: None,
    }
}

/// Judge the steps closed so far (in order) as the report would on the same figures.
pub fn judge_live(steps: &[LiveStep], params: &Params, model: LoadModel) -> LiveJudgement {
    let mut rows: Vec<StepReport> = steps
        .iter()
        .map(|s| {
            let mut r = row(s, model);
            r.failures = super::step::criteria(&r, s.failed, params, model);
            r
        })
        .collect();
    let has_samples = steps.iter().any(|s| s.server.is_some());
    let knee = super::verdict::judge(&mut rows, has_samples);
    LiveJudgement {
        verdicts: rows
            .into_iter()
            .map(|r| (r.verdict, r.failures.into_iter().map(|f| f.text).collect()))
            .collect(),
        knee: knee.knee,
        why: knee.why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(target: u32, p95_ms: f64, dropped: u64) -> LiveStep {
        LiveStep {
            target,
            requests: 1000,
            failed: 0,
            p50_ms: 5.0,
            p95_ms,
            p99_ms: p95_ms,
            sent_per_s: target as f64,
            ok_per_s: target as f64,
            dropped,
            max_vus: Some(10.0),
            start_ms: 0,
            window_s: 10.0,
            server: None,
        }
    }

    #[test]
    fn the_reports_criteria_and_knee_rule_judge_the_closed_steps() {
        let mut p = Params::new(100.0);
        p.max_vus = Some(400.0);
        let steps = [step(50, 20.0, 0), step(100, 150.0, 0), step(150, 900.0, 7)];
        let j = judge_live(&steps[..1], &p, LoadModel::Open);
        assert_eq!(j.verdicts, [(Verdict::Pass, vec![])]);
        assert_eq!(j.knee, None);
        let j = judge_live(&steps, &p, LoadModel::Open);
        assert_eq!(j.verdicts[0].0, Verdict::Pass);
        assert_eq!(
            j.verdicts[1],
            (Verdict::Fail, vec!["p95 150 ms > 100".to_string()])
        );
        assert_eq!(
            j.verdicts[2].1,
            ["p95 900 ms > 100", "k6 dropped 7 iterations"]
        );
        assert_eq!(j.knee, Some(100));
        let why = j.why.unwrap();
        assert_eq!(
            why,
            "knee 100 rps: p95 150 ms > 100; no server samples to name the resource"
        );
        // with the server's window, the knee names what saturated, as the report does
        let mut with = steps.clone();
        with[1].server = Some(crate::analyze::samples::WindowServer {
            saturated: vec!["fpm 8/8 busy, listen queue 12".into()],
            ..Default::default()
        });
        let why = judge_live(&with, &p, LoadModel::Open).why.unwrap();
        assert_eq!(
            why,
            "knee 100 rps: p95 150 ms > 100; fpm 8/8 busy, listen queue 12"
        );
        // a later passing step turns an earlier failure transient, as in the report
        let j = judge_live(&[steps[1].clone(), steps[0].clone()], &p, LoadModel::Open);
        assert_eq!(j.verdicts[0].0, Verdict::Transient);
        assert_eq!(j.knee, None);
    }
}
