//! Planner: timelines, k6 stages, quick profile, VU sizing, alignment of real plans.
use chrono::{Duration, TimeZone, Timelike, Utc};
use perflab::experiment::{Catalog, CatalogEntry, Experiment};
use perflab::plan::{self, K6Stage, PlanOptions, WindowKind};
use std::path::Path;

fn exp(id: &str) -> Experiment {
    let c = Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    match &c.get(id).unwrap().entry {
        CatalogEntry::Experiment(e) => e.clone(),
        _ => panic!(),
    }
}

#[test]
fn breakpoint_plan_of_1a() {
    let p = plan::build(&exp("1a"), PlanOptions::default());
    assert_eq!(
        (p.warmup_s, p.ramp_s, p.hold_s, p.align_offset_s, p.total_s),
        (20, 8, 22, 20, 20 + 7 * 30)
    );
    assert_eq!(
        p.stages[0],
        K6Stage {
            target: 100,
            duration_s: 8
        }
    );
    assert_eq!(
        p.stages[1],
        K6Stage {
            target: 100,
            duration_s: 22
        }
    );
    assert_eq!(p.stages.len(), 14);
    assert_eq!(p.windows[0].kind, WindowKind::Warmup);
    assert!(!p.windows[0].measured);
    let holds: Vec<_> = p.measured_windows().collect();
    assert_eq!(holds.len(), 7);
    assert!(holds.iter().all(|w| w.kind == WindowKind::Hold));
    assert_eq!(
        (
            p.steps[2].hold_start_s,
            p.steps[2].hold_end_s,
            p.steps[2].tag.as_str()
        ),
        (88, 110, "03_rps200")
    );
    assert_eq!(p.step_at(87.9), None, "ramp requests are not measured");
    assert_eq!(p.step_at(88.0), Some(2));
    assert_eq!(
        (p.abort.enabled, p.abort.delay_eval_s, p.abort.p95_ms),
        (true, 50, 100.0)
    );
    assert_eq!(
        (p.vus.needed_at_slo, p.vus.needed_at_timeout, p.vus.max_vus),
        (30, 1500, 400)
    );
    assert_eq!(p.k6_env["MODEL"], "open");
    assert!(!p.k6_env.contains_key("NOABORT"));
    // 150 rps x 22 s -> p99 rests on 33 requests (lab-spec §6)
    assert_eq!(
        (p.steps[1].expected_requests, p.steps[1].p99_tail_samples),
        (Some(3300), Some(33))
    );
}

#[test]
fn stepped_plan_of_exp1() {
    let p = plan::build(&exp("exp1"), PlanOptions::default());
    assert_eq!(
        (p.warmup_s, p.ramp_s, p.align_offset_s, p.total_s),
        (0, 0, 0, 160),
        "article: test lasts at most 160 s"
    );
    assert_eq!(
        p.stages[0],
        K6Stage {
            target: 60,
            duration_s: 0
        }
    );
    assert_eq!(
        p.stages[1],
        K6Stage {
            target: 60,
            duration_s: 20
        }
    );
    assert_eq!(p.steps[3].tag, "r0150");
    assert!(p.windows.iter().all(|w| w.measured));
    assert_eq!(
        (p.abort.p95_ms, p.abort.delay_eval_s),
        (500.0, 10),
        "2.5 x SLO 200, delayAbortEval 10s"
    );
    assert_eq!(p.k6_env["ABORT_P95_MS"], "500");
    assert_eq!(p.k6_env["TIMEOUT"], "10s");
}

#[test]
fn closed_plan_tags_vus() {
    let p = plan::build(&exp("3c"), PlanOptions::default());
    assert_eq!(p.steps[3].tag, "04_vus40");
    assert_eq!(p.k6_env["SLEEP"], "0.2");
    assert_eq!(p.k6_env["NOABORT"], "1");
    assert_eq!(p.steps[5].nominal_rps_max, Some(300.0));
    assert_eq!(p.steps[0].expected_requests, None);
}

#[test]
fn quick_profile_scales_and_is_recorded() {
    let p = plan::build(&exp("1a"), PlanOptions { quick: true });
    let q = p.quick.as_ref().unwrap();
    assert_eq!(
        (q.original_hold_s, q.original_ramp_s, q.original_warmup_s),
        (22, 8, 20)
    );
    assert_eq!((p.hold_s, p.ramp_s, p.warmup_s), (6, 2, 5));
    assert_eq!(p.total_s, 5 + 7 * 8);
    assert_eq!(p.k6_env["HOLD"], "6");
    let s = plan::build(&exp("exp1"), PlanOptions { quick: true });
    assert_eq!((s.hold_s, s.total_s), (5, 40));
    let smoke = plan::build(&exp("node-smoke"), PlanOptions { quick: true });
    assert_eq!(
        (smoke.hold_s, smoke.ramp_s, smoke.warmup_s),
        (5, 2, 0),
        "floors never raise a value"
    );
}

#[test]
fn plan_round_trips_through_json() {
    let p = plan::build(&exp("2b"), PlanOptions::default());
    let back: plan::Plan = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(p, back);
}

#[test]
fn aligned_breakpoint_puts_every_minute_boundary_in_a_ramp() {
    let p = plan::build(&exp("1a"), PlanOptions::default());
    let now = Utc.with_ymd_and_hms(2026, 10, 30, 11, 44, 21).unwrap();
    let a = plan::align(now, &p, true);
    assert_eq!(a.k6_start.second(), 40, "article: k6 started at second :40");
    assert_eq!(a.first_step_at.second(), 0);
    // every minute boundary inside the run falls in an untagged window
    let mut m = a.first_step_at;
    while m < a.end_at {
        let off = (m - a.k6_start).num_seconds() as f64;
        assert_eq!(
            p.step_at(off),
            None,
            "minute boundary {m} is in a measured window"
        );
        m += Duration::minutes(1);
    }
}

#[test]
fn aligned_stepped_starts_first_step_on_the_minute_across_the_hour() {
    let p = plan::build(&exp("exp1"), PlanOptions::default());
    let now = Utc.with_ymd_and_hms(2026, 10, 30, 11, 59, 30).unwrap() + Duration::milliseconds(250);
    let a = plan::align(now, &p, true);
    assert_eq!(
        a.k6_start,
        Utc.with_ymd_and_hms(2026, 10, 30, 12, 0, 0).unwrap()
    );
    assert_eq!(a.wait_ms, 29_750);
    assert_eq!(a.end_at, a.k6_start + Duration::seconds(160));
    let off = plan::align(now, &p, false);
    assert_eq!((off.wait_ms, off.k6_start), (0, now));
}

/// `exp3sat-recover`'s recovery phase: after the last step, one unmeasured window at the drop's
/// rate (tagged `stage:recover`), its two k6 stages, its env for stepped.js and the total;
/// `--quick` scales it as a hold, not below 10 s.
#[test]
fn the_recovery_phase_follows_the_last_step() {
    let e = exp("exp3sat-recover");
    let p = plan::build(&e, PlanOptions::default());
    let w = p.windows.last().unwrap();
    assert_eq!(w.kind, WindowKind::Recover);
    assert_eq!(
        (w.target, w.start_s, w.end_s, w.measured),
        (22, 40, 100, false)
    );
    assert_eq!(w.tag.as_deref(), Some("stage:recover"));
    assert_eq!(p.total_s, 100);
    assert_eq!(p.steps.len(), 2, "the recovery phase is not a step");
    assert_eq!(
        p.stages[p.stages.len() - 2..],
        [
            K6Stage {
                target: 22,
                duration_s: 0
            },
            K6Stage {
                target: 22,
                duration_s: 60
            }
        ]
    );
    assert_eq!(
        (
            p.k6_env["RECOVER"].as_str(),
            p.k6_env["RECOVER_HOLD"].as_str()
        ),
        ("22", "60")
    );
    assert_eq!(p.step_at(50.0), None, "its requests belong to no step");
    let q = plan::build(&e, PlanOptions { quick: true });
    let w = q.windows.last().unwrap();
    assert_eq!((w.start_s, w.end_s), (10, 25));
    assert_eq!(q.k6_env["RECOVER_HOLD"], "15");
    let none = plan::build(&exp("exp3sat-n5"), PlanOptions::default());
    assert!(!none.k6_env.contains_key("RECOVER"));
    assert!(none.windows.iter().all(|w| w.kind != WindowKind::Recover));
}
