//! The two claims restated on 2026-12-07 (evening) from their mechanism after the third full
//! round read them as fails (docs/remedies.md, "Restated from the mechanism"): 3a-usl's
//! `no-retrograde` against the plateau's median instead of its best step, and diag-tcp's 504
//! count replaced by the kernel's full queue and its dropped SYNs. Each is judged once where
//! it holds and once where it does not, on recorded runs and on copies edited in memory.
use crate::verify_claims::{claim, fails, holds};
use crate::verify_diag_acc_fit::verdicts;
use crate::verify_fixes_dec07::{out_root, run as fixed};
use perflab::verify::load::LoadedRun;

/// The top step's ok/s and the best step's: the old claim's reading is their ratio.
fn top_and_best(r: &LoadedRun) -> (f64, f64) {
    let best = r
        .report
        .steps
        .iter()
        .map(|s| s.ok_per_s)
        .fold(0.0, f64::max);
    (r.report.steps.last().unwrap().ok_per_s, best)
}

/// The second round's 3a-usl (10-81 VUs, one app CPU): 271.3, 265.7 and 267.8 ok/s at 61, 71
/// and 81 VUs with the core 99-100 % busy.
fn usl() -> LoadedRun {
    crate::verify_round_dec07::run("3a-usl", "20261207T063715Z")
}

/// The steps whose app core (the Node app, one CPU) is at least 95 % busy: the plateau the
/// claim reads.
fn saturated(r: &LoadedRun) -> Vec<usize> {
    (0..r.report.steps.len())
        .filter(|&i| {
            let s = &r.report.steps[i];
            s.server
                .as_ref()
                .and_then(|w| w.cpu_pct.get("app"))
                .is_some_and(|c| *c >= 95.0)
        })
        .collect()
}

#[test]
fn no_retrograde_reads_the_top_step_against_the_plateau_s_median() {
    let r = usl();
    let sat = saturated(&r);
    assert!(sat.len() >= 3, "saturated steps {sat:?}");
    let v = claim("3a-usl", "no-retrograde", &r, None);
    holds(&v);
    let mut ok: Vec<f64> = sat.iter().map(|&i| r.report.steps[i].ok_per_s).collect();
    ok.sort_by(f64::total_cmp);
    let top = r.report.steps.last().unwrap().ok_per_s;
    let m = ok.len() / 2;
    let median = if ok.len() % 2 == 1 {
        ok[m]
    } else {
        (ok[m - 1] + ok[m]) / 2.0
    };
    let want = top / median;
    assert!(
        (v.value.unwrap() - want).abs() < 1e-9,
        "{v:#?} against {want}"
    );
}

/// One step 25 % fast (the VM's speed, not the load) raised the old reference, the best step,
/// and read a flat top step as retrograde; the median does not move with it.
#[test]
fn one_fast_step_does_not_make_a_flat_top_retrograde() {
    let mut r = usl();
    let sat = saturated(&r);
    let i = sat[sat.len() - 2];
    r.report.steps[i].ok_per_s *= 1.25;
    let (top, best) = top_and_best(&r);
    assert!(top / best < 0.9, "the best-step reading {}", top / best);
    holds(&claim("3a-usl", "no-retrograde", &r, None));
}

/// A throughput that falls with N past the knee (each saturated step 12 % under the one
/// before) is retrograde, and the claim says so.
#[test]
fn a_throughput_falling_with_n_fails() {
    let mut r = usl();
    let sat = saturated(&r);
    let first = r.report.steps[sat[0]].ok_per_s;
    for (k, &i) in sat.iter().enumerate() {
        r.report.steps[i].ok_per_s = first * (1.0 - 0.12 * k as f64);
    }
    fails(&claim("3a-usl", "no-retrograde", &r, None));
}

/// Held out (the claim was restated before it ran: 2026-12-07 18:38, this VM's step-to-step
/// noise at its worst): the plateau's steps read 170.5, 185.2, 164.3, 224.5 and 169.0 ok/s at
/// 40-80 VUs with the core 97-100 % busy and 4.45-6.05 ms of CPU per ok. Against the best step
/// (224.5 at 70 VUs) the flat top reads 0.75; against the median 0.99.
#[test]
fn a_held_out_sweep_with_one_fast_step_reads_flat() {
    let r = fixed("3a-usl", "20261207T183802Z-r1");
    let v = claim("3a-usl", "no-retrograde", &r, None);
    holds(&v);
    assert!((v.value.unwrap() - 169.0 / 170.5).abs() < 0.002, "{v:#?}");
    let (top, best) = top_and_best(&r);
    assert!((top / best - 0.753).abs() < 0.002, "{}", top / best);
}

/// The second held-out sweep (18:48): 213.4, 215.8, 226.5 and 197.9 ok/s at 50-80 VUs; the
/// top step's CPU per ok 5.05 ms against 4.41-4.63. Against the median (of an even count: the
/// middle two's mean, 214.6) 0.92, a pass closer to the line; against the best step 0.87.
#[test]
fn the_second_held_out_sweep_reads_the_median_of_an_even_plateau() {
    let r = fixed("3a-usl", "20261207T184807Z-r1");
    assert_eq!(saturated(&r).len(), 4);
    let v = claim("3a-usl", "no-retrograde", &r, None);
    holds(&v);
    let top = r.report.steps.last().unwrap().ok_per_s;
    let (a, b) = (r.report.steps[4].ok_per_s, r.report.steps[5].ok_per_s);
    assert!(
        (v.value.unwrap() - top / ((a + b) / 2.0)).abs() < 1e-9,
        "{v:#?}"
    );
    assert!((v.value.unwrap() - 0.922).abs() < 0.001, "{v:#?}");
}

/// The diag steps as the rule computes them: the article's 60-300 rps, x 1.2, of the larger of
/// the peak probe's goodput and the working point's ceiling, over 225.
fn diag_steps(r: &LoadedRun) -> Vec<u32> {
    let fit = r.manifest.measurements.fit.as_ref().unwrap();
    let est = fit
        .peak
        .as_ref()
        .unwrap()
        .ok_per_s
        .max(fit.quantities["app_ceiling"]);
    [60.0, 90.0, 120.0, 150.0, 180.0, 210.0, 240.0, 300.0]
        .iter()
        .map(|x| (x * 1.2 * est / 225.0).round() as u32)
        .collect()
}

/// Each claim's verdict in `perflab verify diag-tcp --fit --json` over one fixture run.
fn diag_tcp_verdicts(stamp: &str) -> Vec<(String, String)> {
    verdicts(out_root(&[("diag-tcp", stamp)]).path(), "diag-tcp")
}

/// Held out (the rule and the claims were written before it ran, 18:44): the probe at 229 rps
/// served 161.6 (more than the working point's ceiling, 143.1), so the steps run 52-259; the
/// queue is full (512 of 511) from 207 rps, the kernel drops 105 SYNs a second at 259, 504s
/// come 32 and 23 times, and no 502 at any step.
#[test]
fn the_refitted_diag_tcp_fills_its_queue_and_drops_syns_at_the_top() {
    let stamp = "20261207T184402Z-r1";
    let r = fixed("diag-tcp", stamp);
    assert_eq!(r.manifest.experiment.load.steps, diag_steps(&r));
    assert_eq!(
        r.manifest.experiment.load.steps,
        [52, 78, 103, 129, 155, 181, 207, 259]
    );
    let want = [
        "backlog-visible",
        "backlog-fills",
        "syn-dropped",
        "fails-slow",
    ];
    let v = diag_tcp_verdicts(stamp);
    assert_eq!(v.len(), want.len(), "{v:?}");
    for ((name, verdict), w) in v.iter().zip(want) {
        assert_eq!((name.as_str(), verdict.as_str()), (w, "pass"));
    }
    let top = r.report.steps.last().unwrap();
    assert_eq!(top.non200.get("502"), None);
    assert!(
        top.non200.get("504").is_some_and(|n| *n > 0),
        "{:?}",
        top.non200
    );
}

/// The run before the rule (18:34): its probe at 250 rps collapsed to 125.4 ok/s (7.6 ms of
/// app CPU per request, the queue full), under the working point's ceiling of 156, so the steps
/// from the probe alone stopped at 167, where the step passed: the queue never filled (1) and
/// no SYN was dropped, and both claims say so. The rule since would have gone to 250.
#[test]
fn a_top_step_under_the_ceiling_neither_fills_the_queue_nor_drops_a_syn() {
    let stamp = "20261207T183402Z-r1";
    let r = fixed("diag-tcp", stamp);
    assert_eq!(*r.manifest.experiment.load.steps.last().unwrap(), 167);
    assert_eq!(*diag_steps(&r).last().unwrap(), 250);
    let v = diag_tcp_verdicts(stamp);
    let get = |n: &str| v.iter().find(|(c, _)| c == n).map(|(_, x)| x.as_str());
    assert_eq!(get("backlog-visible"), Some("pass"));
    assert_eq!(get("backlog-fills"), Some("fail"));
    assert_eq!(get("syn-dropped"), Some("fail"));
    assert_eq!(get("fails-slow"), Some("pass"));
}

/// A sweep whose app core never reaches 95 % has no plateau to read: the claim is not passed on
/// a guess, and the reason says what is missing.
#[test]
fn no_saturated_step_is_no_plateau() {
    let mut r = usl();
    for s in &mut r.report.steps {
        if let Some(w) = s.server.as_mut() {
            w.cpu_pct.insert("app".into(), 50.0);
        }
    }
    let v = claim("3a-usl", "no-retrograde", &r, None);
    fails(&v);
    let why = v.reason.clone().unwrap_or_default();
    assert!(why.contains("app_cpu >= 0.95"), "{v:#?}");
}
