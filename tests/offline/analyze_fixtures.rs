//! The analyzer on real k6 outputs (tests/fixtures/k6, produced by scripts/make-fixtures.sh):
//! per-step counts and percentiles must match k6's own summary (1 % or 0.5 ms).
use perflab::analyze::model::{LoadModel, Stability};
use perflab::analyze::{self, Params, Report, Verdict};
use perflab::rundir::inputs as load;
use perflab::rundir::read::{FileKind, RunFile};
use serde_json::Value;
use std::path::PathBuf;

fn fixture(name: &str, ext: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/k6")
        .join(format!("{name}.{ext}"))
}

fn run(name: &str, tweak: impl FnOnce(&mut Params)) -> Report {
    let k6 = load::k6_csv(&RunFile::loose(&fixture(name, "csv.gz"), FileKind::K6Csv))
        .unwrap()
        .0;
    let summary = load::k6_summary(&RunFile::loose(
        &fixture(name, "summary.json"),
        FileKind::K6Summary,
    ))
    .unwrap()
    .0;
    let mut params = Params::new(
        summary
            .slo_p95_ms()
            .expect("fixture thresholds carry the SLO"),
    );
    let log = std::fs::read_to_string(fixture(name, "log")).unwrap();
    let (aborted, insufficient) = load::k6_log_flags(&log);
    params.aborted = Some(aborted);
    params.insufficient_vus = insufficient;
    tweak(&mut params);
    analyze::analyze_run(analyze::Inputs {
        k6,
        summary: Some(summary),
        samples: Default::default(),
        params,
        logs: Default::default(),
        source: Default::default(),
        caveats: Vec::new(),
    })
    .unwrap()
}

fn close(ours: f64, k6: f64) -> bool {
    (ours - k6).abs() <= 0.5 || (ours - k6).abs() <= 0.01 * k6.abs()
}

/// Compare every step with the summary JSON read independently of the analyzer.
fn assert_matches_k6_summary(name: &str, r: &Report) {
    let text = std::fs::read_to_string(fixture(name, "summary.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let m = &v["metrics"];
    let key = if r.steps[0].name.starts_with('r') {
        "stage"
    } else {
        "step"
    };
    let mut compared = 0;
    for s in &r.steps {
        let d = &m[format!("http_req_duration{{{key}:{}}}", s.name)];
        let f = &m[format!("http_req_failed{{{key}:{}}}", s.name)];
        assert_eq!(
            s.requests,
            d["count"].as_f64().unwrap() as u64,
            "{name} {} count",
            s.name
        );
        for (ours, k) in [
            (s.p50_ms, "med"),
            (s.p95_ms, "p(95)"),
            (s.p99_ms, "p(99)"),
            (s.max_ms, "max"),
        ] {
            let theirs = d[k].as_f64().unwrap();
            assert!(
                close(ours, theirs),
                "{name} {} {k}: ours {ours} vs k6 {theirs}",
                s.name
            );
        }
        let failed = f["passes"].as_f64().unwrap();
        assert!(
            (s.failed_rate * s.requests as f64 - failed).abs() < 1e-6,
            "{name} {} failed",
            s.name
        );
        compared += 1;
    }
    assert!(compared >= 3, "{name}: only {compared} steps");
    assert!(
        r.checks.cross_check.is_empty(),
        "{name}: {:?}",
        r.checks.cross_check
    );
    assert_eq!(r.checks.cross_checked_steps, compared);
}

#[test]
fn stepped_open_knee_at_capacity() {
    let r = run("stepped-open", |_| {});
    assert_matches_k6_summary("stepped-open", &r);
    // 4 workers x 40 ms = 100 rps: 120 rps queues up, times out (1 s) and loses goodput.
    assert_eq!(r.knee, Some(120));
    assert_eq!(r.last_passing, Some(100));
    let k = r.steps.last().unwrap();
    assert_eq!(k.verdict, Verdict::Fail);
    let crit: Vec<u8> = k.failures.iter().map(|f| f.criterion).collect();
    assert_eq!(crit, vec![1, 2, 3]);
    assert!(
        k.ok_per_s < 105.0 && k.ok_per_s > 90.0,
        "goodput pinned at capacity: {}",
        k.ok_per_s
    );
    assert!(
        k.non200.get("0").copied().unwrap_or(0) > 0,
        "timeouts are status 0"
    );
    assert!(
        r.knee_why
            .as_deref()
            .unwrap()
            .starts_with("knee 120 rps: p95 ")
    );
    // The queue grows at 120 rps (seed 003): unstable; the light steps are stable.
    let st = &r.checks.stability;
    assert_eq!(st.last().unwrap().verdict, Stability::Unstable);
    assert!(st[..4].iter().all(|s| s.verdict == Stability::Stable));
    // Little's law holds on the stable steps (counted in-flight vs λW).
    for l in r.checks.little.iter().filter(|l| l.stable) {
        assert!(l.diff < 0.15, "{l:?}");
    }
    assert_eq!(r.model, LoadModel::Open);
    assert_eq!(r.hold_s, 4.0);
    // Sent rate follows the offered rate (no drops with 600 VUs).
    for s in &r.steps {
        assert!(
            (s.sent_per_s - s.target as f64).abs() / (s.target as f64) < 0.05,
            "{s:?}"
        );
    }
}

#[test]
fn stepped_errors_fail_the_error_budget() {
    let r = run("stepped-errors", |_| {});
    assert_matches_k6_summary("stepped-errors", &r);
    for s in &r.steps {
        assert!(
            s.failures.iter().any(|f| f.criterion == 2),
            "{}: {:?}",
            s.name,
            s.failures
        );
        assert!(s.non200.contains_key("500"));
        assert!(
            s.failed_rate > 0.01 && s.failed_rate < 0.12,
            "{}",
            s.failed_rate
        );
        // Fast errors: latency is fine, only the budget fails.
        assert!(s.p95_ms < 200.0);
    }
    assert_eq!(r.knee, Some(20));
    assert_eq!(r.last_passing, None);
}

#[test]
fn stepped_abort_lag_b_over_g_19() {
    let r = run("stepped-abort", |_| {});
    assert_matches_k6_summary("stepped-abort", &r);
    let last = r.steps.last().unwrap();
    assert!(last.truncated, "k6 aborted inside the last step");
    let a = r.checks.abort.as_ref().expect("abort check");
    assert_eq!(a.threshold_ms, 500.0); // 2.5 x SLO 200
    // k6 aborted, so its cumulative p95 crossed 500 ms: more than G/19 bad samples.
    assert!(a.bad as f64 > a.bad_needed, "{a:?}");
    assert!(a.cumulative_p95_ms > 500.0);
    assert_eq!(r.knee, Some(last.target));
    assert_eq!(r.steps.len(), 3, "the 160 step never started");
}

#[test]
fn breakpoint_open_drops_fail_criterion_4() {
    let r = run("breakpoint-open-drops", |_| {});
    assert_matches_k6_summary("breakpoint-open-drops", &r);
    let sum: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("breakpoint-open-drops", "summary.json")).unwrap(),
    )
    .unwrap();
    let k6_dropped = sum["metrics"]["dropped_iterations"]["count"]
        .as_f64()
        .unwrap() as u64;
    assert_eq!(r.dropped_iterations + r.dropped_warmup, k6_dropped);
    for s in &r.steps[1..] {
        assert!(
            s.dropped > 0 && s.failures.iter().any(|f| f.criterion == 4),
            "{s:?}"
        );
        // Only 6 VUs: the generator cannot reach the offered rate.
        assert!(s.sent_per_s < s.target as f64 * 0.9);
        assert_eq!(s.max_vus, Some(6.0));
    }
    assert!(r.params.insufficient_vus);
    assert!(r.warnings.iter().any(|w| w.contains("Insufficient VUs")));
    // Ramp and warm-up requests are not measured.
    assert!(r.source.excluded.get("ramp").copied().unwrap_or(0) > 0);
    assert!(r.source.excluded.get("warmup").copied().unwrap_or(0) > 0);
}

#[test]
fn breakpoint_open_drops_with_max_vus_known() {
    let r = run("breakpoint-open-drops", |p| p.max_vus = Some(6.0));
    let s = &r.steps[2];
    assert!(
        s.failures
            .iter()
            .any(|f| f.text.starts_with("VUs at max (6 of 6)")),
        "{:?}",
        s.failures
    );
}

#[test]
fn breakpoint_closed_coordinated_omission() {
    let r = run("breakpoint-closed", |p| p.think_time_s = Some(0.05));
    assert_matches_k6_summary("breakpoint-closed", &r);
    assert_eq!(r.model, LoadModel::Closed);
    assert_eq!(r.dropped_iterations, 0);
    let last = r.checks.closed.last().unwrap();
    assert_eq!(last.vus, 16);
    // 16 VUs / (0.042 + 0.05) ~ 174/s nominal; the 100 rps server gives ~96: requests go missing.
    assert!(
        last.nominal_per_s > 150.0 && last.achieved_per_s < 105.0,
        "{last:?}"
    );
    assert!(last.missing > 200.0, "{last:?}");
    // R = N / X - Z reproduces the measured mean latency (closed-loop identity) within 10 %.
    let s = r.steps.last().unwrap();
    assert!(
        (last.implied_r_ms - s.avg_ms).abs() / s.avg_ms < 0.1,
        "{} vs {}",
        last.implied_r_ms,
        s.avg_ms
    );
    // Light steps: achieved ~ nominal.
    let first = &r.checks.closed[0];
    assert!(
        (first.achieved_per_s - first.nominal_per_s).abs() / first.nominal_per_s < 0.1,
        "{first:?}"
    );
    assert_eq!(r.knee, Some(16));
    assert_eq!(r.last_passing, Some(8));
}

#[test]
fn plain_and_gzip_give_the_same_result() {
    use std::io::Read;
    let mut gz = flate2::read::GzDecoder::new(
        std::fs::File::open(fixture("stepped-errors", "csv.gz")).unwrap(),
    );
    let mut plain = Vec::new();
    gz.read_to_end(&mut plain).unwrap();
    let a = perflab::analyze::k6csv::read_k6_csv(std::io::Cursor::new(plain)).unwrap();
    let b = load::k6_csv(&RunFile::loose(
        &fixture("stepped-errors", "csv.gz"),
        FileKind::K6Csv,
    ))
    .unwrap()
    .0;
    assert_eq!(a.rows, b.rows);
    assert_eq!(a.requests, b.requests);
    let pa: Vec<_> = a.steps.iter().map(|s| s.all.percentiles()).collect();
    let pb: Vec<_> = b.steps.iter().map(|s| s.all.percentiles()).collect();
    assert_eq!(pa, pb);
}
