//! Criteria, transient detection, the knee sentence, Little's law, stability and the closed model
//! on small constructed k6 CSVs (same columns as k6 1.1 writes).
use perflab::analyze::k6csv::read_k6_csv;
use perflab::analyze::model::{LoadModel, Stability};
use perflab::analyze::samples::*;
use perflab::analyze::{self, Params, Report, Verdict};
use perflab::lab::Role;

const HEADER: &str = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n";
const T0: i64 = 1_800_000_000_000;

/// A request: (latency ms, status).
type Shape = dyn Fn(usize, f64) -> (f64, u16);

/// Build a stepped.js-like CSV: each step holds `hold_s` at its rate; `shape(step, x)` gives the
/// latency and status of a request started x seconds into the step.
fn csv(rates: &[u32], hold_s: f64, shape: &Shape, drops: &[(usize, u32)]) -> String {
    let mut out = String::from(HEADER);
    for (si, &rate) in rates.iter().enumerate() {
        let n = (rate as f64 * hold_s) as usize;
        let step0 = T0 + (si as f64 * hold_s * 1000.0) as i64;
        for i in 0..n {
            let x = i as f64 / rate as f64;
            let (ms, status) = shape(si, x);
            let end = step0 + (x * 1000.0) as i64 + ms.round() as i64;
            let ok = (200..400).contains(&status);
            for metric in ["http_reqs", "http_req_duration", "http_req_failed"] {
                let v = match metric {
                    "http_req_duration" => format!("{ms:.6}"),
                    "http_req_failed" => {
                        if ok {
                            "0.000000".into()
                        } else {
                            "1.000000".into()
                        }
                    }
                    _ => "1.000000".into(),
                };
                out.push_str(&format!(
                    "{metric},{end},{v},,,,{ok},,GET,http://x/api,HTTP/1.1,step,,{status},,,http://x/api,stage=r{rate:04},\n"
                ));
            }
        }
        for s in 0..hold_s as i64 {
            out.push_str(&format!(
                "vus,{},{}.000000,,,,,,,,,,,,,,,,\n",
                step0 + s * 1000 + 500,
                rate / 10
            ));
        }
        for &(step, count) in drops {
            if step == si {
                for k in 0..count {
                    out.push_str(&format!(
                        "dropped_iterations,{},1.000000,,,,,,,,,step,,,,,,,\n",
                        step0 + 1000 + k as i64
                    ));
                }
            }
        }
    }
    out
}

fn analyze_with(text: String, p: Params, samples: Samples) -> Report {
    let k6 = read_k6_csv(std::io::Cursor::new(text.into_bytes())).unwrap();
    analyze::analyze_run(analyze::Inputs {
        k6,
        summary: None,
        samples,
        params: p,
        logs: Default::default(),
        source: Default::default(),
        caveats: Vec::new(),
    })
    .unwrap()
}

fn analyze_csv(text: String, p: Params) -> Report {
    analyze_with(text, p, Samples::default())
}

fn hold(p: &mut Params, s: f64) -> &mut Params {
    p.hold_s = Some(s);
    p
}

fn crit(r: &Report, i: usize) -> Vec<u8> {
    r.steps[i].failures.iter().map(|f| f.criterion).collect()
}

#[test]
fn criterion_1_p95_over_slo() {
    let text = csv(
        &[20, 40, 60],
        10.0,
        &|s, x| {
            (
                if s == 2 && (x * 60.0).round() as i64 % 10 == 0 {
                    900.0
                } else {
                    20.0
                },
                200,
            )
        },
        &[],
    );
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0);
    let r = analyze_csv(text, p);
    assert_eq!(crit(&r, 0), Vec::<u8>::new());
    assert_eq!(crit(&r, 2), vec![1], "{:?}", r.steps[2].failures);
    assert_eq!((r.last_passing, r.knee), (Some(40), Some(60)));
    assert!(r.steps[2].p95_ms > 800.0 && r.steps[2].p50_ms < 25.0);
}

#[test]
fn criterion_1_optional_p99() {
    // 2 % of requests at 500 ms: p95 fine, p99 not.
    let text = csv(
        &[50, 60],
        10.0,
        &|s, x| {
            (
                if s == 1 && (x * 60.0).round() as i64 % 50 == 0 {
                    500.0
                } else {
                    20.0
                },
                200,
            )
        },
        &[],
    );
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0).slo_p99_ms = Some(300.0);
    let r = analyze_csv(text, p);
    assert_eq!(crit(&r, 1), vec![1]);
    assert!(
        r.steps[1].failures[0].text.starts_with("p99 "),
        "{:?}",
        r.steps[1].failures
    );
}

#[test]
fn criterion_2_error_budget_and_fast_errors() {
    // 3 % fast 502s: p95 over all requests is *lower* than over the successful ones.
    let text = csv(
        &[100],
        10.0,
        &|_, x| {
            if (x * 100.0).round() as i64 % 33 == 0 {
                (1.0, 502)
            } else {
                (30.0, 200)
            }
        },
        &[],
    );
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0);
    let r = analyze_csv(text, p);
    let s = &r.steps[0];
    assert_eq!(crit(&r, 0), vec![2]);
    assert!(
        (s.failed_rate - 31.0 / 1000.0).abs() < 1e-9,
        "{}",
        s.failed_rate
    );
    assert_eq!(s.non200.get("502"), Some(&31));
    assert!(s.p50_ms <= s.ok_p50_ms);
    // Within budget: 0.5 %.
    let text = csv(
        &[200],
        10.0,
        &|_, x| {
            if (x * 200.0).round() as i64 % 200 == 0 {
                (1.0, 500)
            } else {
                (30.0, 200)
            }
        },
        &[],
    );
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0);
    assert_eq!(crit(&analyze_csv(text, p), 0), Vec::<u8>::new());
}

#[test]
fn criterion_3_goodput_falls_behind_sent() {
    // Latency grows 0 -> 3 s across the window: 23 % of responses complete after it. SLO 10 s.
    let text = csv(&[100], 10.0, &|_, x| (1.0 + 300.0 * x, 200), &[]);
    let mut p = Params::new(10_000.0);
    hold(&mut p, 10.0);
    let r = analyze_csv(text, p);
    assert_eq!(crit(&r, 0), vec![3], "{:?}", r.steps[0].failures);
    assert!(
        (r.steps[0].ok_per_s - 77.0).abs() < 2.0,
        "{}",
        r.steps[0].ok_per_s
    );
    assert_eq!(r.steps[0].sent_per_s, 100.0);
    // Tolerance 30 %: passes.
    let text = csv(&[100], 10.0, &|_, x| (1.0 + 300.0 * x, 200), &[]);
    let mut p = Params::new(10_000.0);
    hold(&mut p, 10.0).goodput_tolerance = 0.3;
    assert_eq!(crit(&analyze_csv(text, p), 0), Vec::<u8>::new());
}

#[test]
fn criterion_4_drops_and_vus_at_max() {
    let text = csv(&[50, 100], 10.0, &|_, _| (20.0, 200), &[(1, 7)]);
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0).max_vus = Some(10.0);
    let r = analyze_csv(text, p);
    assert_eq!(crit(&r, 0), Vec::<u8>::new());
    assert_eq!(crit(&r, 1), vec![4, 4], "{:?}", r.steps[1].failures);
    assert_eq!(r.steps[1].dropped, 7);
    assert_eq!(r.dropped_iterations, 7);
    assert!(
        r.steps[1].failures[1]
            .text
            .contains("VUs at max (10 of 10)")
    );
}

/// The article's exp1 r2: 90 and 120 fail then 150 passes (transient); 180 is the knee.
fn exp1_like() -> String {
    csv(
        &[60, 90, 120, 150, 180],
        20.0,
        &|s, x| {
            let stall = (s == 1 || s == 2) && x > 5.0 && x < 7.0;
            match s {
                4 => (1113.0, 200),
                _ if stall => (343.0, 200),
                _ => (18.0, 200),
            }
        },
        &[],
    )
}

#[test]
fn transient_steps_are_not_the_knee() {
    let mut p = Params::new(200.0);
    hold(&mut p, 20.0).goodput_tolerance = 0.1;
    let r = analyze_csv(exp1_like(), p);
    let v: Vec<Verdict> = r.steps.iter().map(|s| s.verdict).collect();
    assert_eq!(
        v,
        vec![
            Verdict::Pass,
            Verdict::Transient,
            Verdict::Transient,
            Verdict::Pass,
            Verdict::Fail
        ]
    );
    assert_eq!(r.last_passing, Some(60));
    assert_eq!(r.knee, Some(180));
    assert_eq!(r.passing_below_knee, Some(150));
    let json = serde_json::to_value(r.to_analyze_json()).unwrap();
    assert_eq!(json["steps"][1]["verdict"], "transient");
    assert_eq!(json["knee"], 180);
    assert_eq!(json["last_passing"], 60);
}

#[test]
fn a_failing_last_step_is_the_knee_and_no_failure_means_no_knee() {
    let mut p = Params::new(200.0);
    hold(&mut p, 10.0);
    let r = analyze_csv(csv(&[10, 20], 10.0, &|_, _| (10.0, 200), &[]), p.clone());
    assert_eq!((r.knee, r.last_passing), (None, Some(20)));
    let r = analyze_csv(
        csv(
            &[10, 20],
            10.0,
            &|s, _| (if s == 0 { 900.0 } else { 10.0 }, 200),
            &[],
        ),
        p,
    );
    assert_eq!(r.steps[0].verdict, Verdict::Transient);
    assert_eq!((r.knee, r.last_passing), (None, None));
}

/// Samples shaped like the article's exp1 r2 at 180 rps: fpm 20/20 busy, listen queue up to 186,
/// pg connections idle in ClientRead, fpm + nginx 157 % of 200 %.
fn exp1_samples() -> Samples {
    let mut s = Samples::default();
    for sec in 0..100 {
        let t = T0 + sec * 1000;
        let knee = sec >= 80;
        for (role, cores) in [
            (Role::named("fpm").unwrap(), if knee { 1.41 } else { 0.9 }),
            (Role::named("nginx").unwrap(), 0.16),
            (Role::PG, 0.31),
            (Role::K6, 0.25),
        ] {
            s.cgroup.push(CgroupSample {
                t,
                role,
                container: role.column().into(),
                cpu_cores: cores,
                mem_bytes: 1 << 20,
                mem: None,
                throttled_ms: 0.0,
                psi_some_avg10: (role == Role::named("fpm").unwrap()).then_some(if knee {
                    68.0
                } else {
                    45.0
                }),
            });
        }
        if sec % 2 == 0 {
            let lq = if knee {
                [51, 186, 120, 90, 60][(sec as usize / 2) % 5]
            } else {
                0
            };
            s.fpm.push(FpmSample {
                t,
                status: FpmStatus {
                    listen_queue: lq,
                    idle_processes: if knee { 0 } else { 12 },
                    active_processes: if knee { 20 } else { 8 },
                    total_processes: 20,
                    listen_queue_len: 511,
                    accepted_conn: 1000 + sec as u64 * 150,
                    max_listen_queue: 188,
                    max_children_reached: 0,
                },
            });
            s.pg.push(PgSample {
                t,
                activity: vec![PgActivity {
                    state: "idle".into(),
                    wait_event_type: Some("Client".into()),
                    wait_event: Some("ClientRead".into()),
                    count: 20,
                }],
                xact_commit: sec as u64 * 300,
            });
        }
        s.host.push(HostSample {
            t,
            cpu_busy_pct: vec![30.0, 80.0],
            cpu_steal_pct: vec![0.0, 0.0],
            cpus: vec![0, 1],
            psi_some_avg10: Some(20.0),
            dockerd_cores: Some(0.03),
            perflab_cores: Some(0.005),
        });
    }
    s
}

#[test]
fn knee_sentence_names_why() {
    let mut p = Params::new(200.0);
    hold(&mut p, 20.0).goodput_tolerance = 0.1;
    p.app_cores = Some(2.0);
    let r = analyze_with(exp1_like(), p, exp1_samples());
    assert_eq!(
        r.knee_why.as_deref(),
        Some(
            "knee 180 rps: p95 1,113 ms > 200; fpm 20/20 busy, listen queue 186; pg idle ClientRead -> app CPU bound"
        )
    );
    let k = &r.steps[4];
    let w = k.server.as_ref().unwrap();
    assert!((w.cpu_pct["fpm"] + w.cpu_pct["nginx"] - 157.0).abs() < 0.5);
    assert_eq!(w.psi_pct, Some(68.0));
    // ms CPU per ok = 1.57 cores x 1000 / ok/s; CPU ceiling = 2000 / that.
    let ms = k.ms_cpu_per_ok.unwrap();
    assert!((ms - 1570.0 / k.ok_per_s).abs() < 1e-6);
    let c = r.checks.cpu_ceiling.as_ref().unwrap();
    assert_eq!(c.step, "r0150");
    assert!((c.cpu_ceiling_per_s - 2000.0 / c.ms_cpu_per_ok).abs() < 1e-9);
    assert_eq!(r.checks.k6_cpu_max_pct, Some(25.0));
    // Criterion 5 alone does not fail a step: 150 has no saturation, 180 fails on latency.
    assert!(r.steps[3].server.as_ref().unwrap().saturated.is_empty());
}

#[test]
fn little_law_and_stability() {
    // Constant 200 ms at 50 rps: L = λW = 10, stable. Growing latency: unstable.
    let text = csv(
        &[50, 60],
        20.0,
        &|s, x| (if s == 0 { 200.0 } else { 200.0 + 100.0 * x }, 200),
        &[],
    );
    let mut p = Params::new(100_000.0);
    hold(&mut p, 20.0);
    let r = analyze_csv(text, p);
    let l = &r.checks.little[0];
    assert!((l.lambda_w - 10.0).abs() < 0.01, "{l:?}");
    assert!(l.diff < 0.03 && l.stable, "{l:?}");
    assert_eq!(r.checks.stability[0].verdict, Stability::Stable);
    assert_eq!(
        r.checks.stability[1].verdict,
        Stability::Unstable,
        "{:?}",
        r.checks.stability[1]
    );
    assert!(!r.checks.little[1].stable);
    // The last step's tail drains for ~2 s after the window.
    assert!(r.checks.drain_s.unwrap() > 1.5, "{:?}", r.checks.drain_s);
}

#[test]
fn closed_model_estimate() {
    // 60 VUs, think 0.2 s; first step R0 = 6 ms. Nominal at 60 VUs = 60 / 0.206 = 291.
    let mut text = String::from(HEADER);
    for (si, (vus, rate, ms)) in [(10u32, 48.5f64, 6.0f64), (60, 169.3, 154.0)]
        .iter()
        .enumerate()
    {
        let n = (rate * 20.0) as usize;
        let step0 = T0 + si as i64 * 30_000;
        for i in 0..n {
            let end = step0 + (i as f64 / rate * 1000.0) as i64 + *ms as i64;
            text.push_str(&format!("http_req_duration,{end},{ms:.6},,,,true,,GET,u,HTTP/1.1,breakpoint,,200,,,u,phase=hold&step={:02}_vus{vus},\n", si + 1));
        }
    }
    let mut p = Params::new(100.0);
    p.hold_s = Some(20.0);
    p.think_time_s = Some(0.2);
    let r = analyze_csv(text, p);
    assert_eq!(r.model, LoadModel::Closed);
    let c = &r.checks.closed[1];
    assert!((c.nominal_per_s - 291.3).abs() < 0.2, "{c:?}");
    assert!((c.achieved_per_s - 169.3).abs() < 0.1);
    assert!((c.missing - (291.26 - 169.3) * 20.0).abs() < 10.0, "{c:?}");
    assert!((c.implied_r_ms - 154.4).abs() < 0.5, "{c:?}");
}
