//! The live state's tests: polls into points and verdicts, sampler lines into series.
use super::*;
use crate::lab::Role;
use crate::load::live::{LiveTotals, StepFigures};
use crate::plan::{CpuSet, PlanOptions};
use crate::sample::records::{FpmStatus, PgActivity};

fn plan() -> Plan {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let cat =
        crate::experiment::Catalog::load(&dir, &crate::verify::quantities::Quantities).unwrap();
    crate::plan::build(
        cat.expand("demo-open").unwrap()[0],
        PlanOptions { quick: true },
    )
}

fn snap(requests: u64, failed: u64, avg_ms: f64, steps: &[(&str, u64, f64)]) -> Snapshot {
    Snapshot {
        totals: LiveTotals {
            requests,
            failed,
            dropped: 0,
            vus: 7,
        },
        avg_ms,
        steps: steps
            .iter()
            .map(|(tag, n, p95)| {
                let f = StepFigures {
                    requests: *n,
                    failed_rate: 0.0,
                    p50_ms: p95 / 2.0,
                    p95_ms: *p95,
                    p99_ms: None,
                };
                (tag.to_string(), f)
            })
            .collect(),
    }
}

#[test]
fn polls_become_per_second_points_and_closed_steps_get_the_reports_verdict() {
    let plan = plan();
    let layout = crate::plan::layout::auto(&CpuSet::new(vec![0, 1, 2, 3])).unwrap();
    let (s1, s2) = (&plan.steps[0], &plan.steps[1]);
    let mut b = Building::new("r1", &plan, &layout, 1_000_000, Vec::new());
    assert_eq!(
        (b.data.status, b.data.steps.len()),
        ("waiting", plan.steps.len())
    );
    let at = |s: f64| 1_000_000 + (s * 1000.0) as i64;
    b.poll(at(1.0), Some(snap(100, 0, 10.0, &[(&s1.tag, 100, 20.0)])));
    b.poll(at(2.0), Some(snap(300, 10, 20.0, &[(&s1.tag, 300, 20.0)])));
    let p = &b.data.client[1];
    assert_eq!((p.t, p.offered), (2.0, s1.target));
    assert_eq!(
        (p.sent_per_s, p.ok_per_s, p.failed_per_s),
        (Some(200.0), Some(190.0), Some(10.0))
    );
    // (300 x 20 - 100 x 10) / 200 requests: the mean of the interval's requests
    assert_eq!(p.mean_ms, Some(25.0));
    assert_eq!((p.p95_ms, b.data.status), (Some(20.0), "running"));
    // a poll without an answer moves the clock, not the figures
    b.poll(at(3.0), None);
    assert_eq!((b.data.client.len(), b.data.now_s), (2, 3.0));
    assert!(b.data.steps.iter().all(|s| s.verdict.is_none()));
    // step 1 closes CLOSE_AFTER_S after its window: judged on its sub-metric
    let end1 = s1.hold_end_s as f64 + CLOSE_AFTER_S;
    let good = s1.target as u64 * (s1.hold_end_s - s1.hold_start_s) as u64;
    b.poll(
        at(end1),
        Some(snap(good + 10, 10, 20.0, &[(&s1.tag, good, 20.0)])),
    );
    assert_eq!(b.data.steps[0].verdict, Some("pass"));
    assert_eq!(b.data.steps[0].p95_ms, Some(20.0));
    assert_eq!(b.data.knee, None);
    // step 2 breaks the SLO: a fail with the criterion's words, and the knee
    let both = [
        (s1.tag.as_str(), good, 20.0),
        (s2.tag.as_str(), good * 2, 50_000.0),
    ];
    b.poll(
        at(s2.hold_end_s as f64 + CLOSE_AFTER_S),
        Some(snap(good * 3, 10, 20.0, &both)),
    );
    let v = &b.data.steps[1];
    assert_eq!(v.verdict, Some("fail"));
    assert!(
        v.failures[0].starts_with("p95 50,000 ms > "),
        "{:?}",
        v.failures
    );
    let knee = b.data.knee.as_ref().unwrap();
    assert_eq!(knee.target, s2.target);
    assert!(
        knee.why
            .starts_with(&format!("knee {} rps: p95", s2.target)),
        "{}",
        knee.why
    );
    // k6 ended (aborted): the steps it never ran get no verdict, the knee stays
    b.load_ended();
    assert!(b.data.steps[2..].iter().all(|s| s.verdict.is_none()));
    assert_eq!(b.data.steps[1].verdict, Some("fail"));
    assert_eq!(b.data.knee.as_ref().map(|k| k.target), Some(s2.target));
}

#[test]
fn since_sends_only_the_new_points_and_the_server_series_with_an_overlap() {
    let plan = plan();
    let layout = crate::plan::layout::auto(&CpuSet::new(vec![0, 1, 2, 3])).unwrap();
    let mut b = Building::new("r1", &plan, &layout, 0, Vec::new());
    for i in 1..=20 {
        b.poll(i * 1000, Some(snap(i as u64 * 10, 0, 1.0, &[])));
        b.add(
            "fpm",
            "fpm_listen_queue",
            "fpm",
            None,
            i as f64 - 0.5,
            i as f64,
        );
    }
    let d = b.data.since(17.0);
    assert_eq!(d.since, Some(17.0));
    let ts: Vec<f64> = d.client.iter().map(|p| p.t).collect();
    assert_eq!(ts, [18.0, 19.0, 20.0]);
    let first = d.server[0].points[0].0;
    assert_eq!(first, 17.0 - SERVER_OVERLAP_S + 0.5, "from 5 s before");
    assert_eq!(
        (d.steps.len(), d.run.as_str(), d.status),
        (b.data.steps.len(), "r1", "running")
    );
    assert_eq!(b.data.since(100.0).client.len(), 0);
    assert_eq!(b.data.since(-1e9).client.len(), 20);
}

#[test]
fn sampler_lines_become_series_against_their_ceilings() {
    let plan = plan();
    let layout = crate::plan::layout::auto(&CpuSet::new(vec![0, 1, 2, 3])).unwrap();
    let mut b = Building::new("r1", &plan, &layout, 0, Vec::new());
    let k6 = Role::named("k6").unwrap();
    b.cgroup(&CgroupSample {
        t: 1000,
        role: k6,
        container: "c".into(),
        cpu_cores: 0.5,
        mem_bytes: 1,
        throttled_ms: 0.0,
        psi_some_avg10: None,
        mem: None,
    });
    b.fpm(&FpmSample {
        t: 2000,
        status: FpmStatus {
            listen_queue: 2,
            active_processes: 3,
            total_processes: 4,
            ..Default::default()
        },
    });
    let act = |state: &str, wait: Option<&str>, count| PgActivity {
        state: state.into(),
        wait_event_type: None,
        wait_event: wait.map(str::to_owned),
        count,
    };
    b.pg(&PgSample {
        t: 2000,
        activity: vec![
            act("active", None, 2),
            act("idle", Some("ClientRead"), 5),
            act("idle", None, 1),
        ],
        xact_commit: 0,
    });
    let app = layout.app.cpus().to_vec();
    let cpus = [0u32, 1, 2, 3];
    let steal: Vec<f64> = cpus
        .iter()
        .map(|c| if app.contains(c) { 20.0 } else { 90.0 })
        .collect();
    b.host(&HostSample {
        t: 1000,
        cpu_busy_pct: vec![50.0; 4],
        cpu_steal_pct: steal,
        cpus: cpus.to_vec(),
        psi_some_avg10: None,
        dockerd_cores: None,
        perflab_cores: None,
    });
    let find = |name: &str| b.data.server.iter().find(|s| s.name == name).unwrap();
    let cpu = find("container_cpu_cores");
    assert_eq!(
        (cpu.role.as_str(), cpu.ceiling),
        ("k6", Some(layout.loadgen.len() as f64))
    );
    assert_eq!(cpu.points, [(1.0, 0.5)]);
    assert_eq!(
        (
            find("fpm_busy_workers").points[0].1,
            find("fpm_busy_workers").ceiling
        ),
        (3.0, Some(4.0))
    );
    assert_eq!(find("fpm_listen_queue").points, [(2.0, 2.0)]);
    assert_eq!(find("pg_active_connections").points, [(2.0, 2.0)]);
    assert_eq!(find("pg_idle_client_read_connections").points, [(2.0, 5.0)]);
    assert_eq!(
        find("app_cpu_steal_ratio").points,
        [(1.0, 0.2)],
        "only the app's CPUs"
    );
    assert_eq!(find("app_cpu_busy_ratio").points, [(1.0, 0.5)]);
    // every series name is one the OpenMetrics endpoint declares
    for s in &b.data.server {
        assert!(
            super::super::prom::SERIES.iter().any(|(n, _)| *n == s.name),
            "{}",
            s.name
        );
    }
}

#[test]
fn the_knee_names_what_saturated_in_its_window_as_the_report_does() {
    let plan = plan();
    let layout = crate::plan::layout::auto(&CpuSet::new(vec![0, 1, 2, 3])).unwrap();
    let (s1, s2) = (&plan.steps[0], &plan.steps[1]);
    let mut b = Building::new("r1", &plan, &layout, 1_000_000, Vec::new());
    let at = |s: f64| 1_000_000 + (s * 1000.0) as i64;
    for sec in 0..=(s2.hold_end_s + 1) {
        b.cgroup(&CgroupSample {
            t: at(sec as f64),
            role: Role::PG,
            container: "pg".into(),
            cpu_cores: if sec >= s2.hold_start_s { 0.99 } else { 0.2 },
            mem_bytes: 1,
            throttled_ms: 0.0,
            psi_some_avg10: None,
            mem: None,
        });
    }
    let good = s1.target as u64 * (s1.hold_end_s - s1.hold_start_s) as u64;
    let both = [
        (s1.tag.as_str(), good, 20.0),
        (s2.tag.as_str(), good * 2, 50_000.0),
    ];
    b.poll(at(1.0), Some(snap(10, 0, 1.0, &[])));
    b.poll(
        at(s2.hold_end_s as f64 + CLOSE_AFTER_S),
        Some(snap(good * 3, 0, 20.0, &both)),
    );
    assert_eq!(b.data.steps[0].verdict, Some("pass"));
    let why = &b.data.knee.as_ref().expect("a knee").why;
    assert!(
        why.contains("p95 50,000 ms > ") && why.contains("pg core at 99 %"),
        "{why}"
    );
}
