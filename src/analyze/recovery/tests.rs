//! The recovery figures on a made collapse: 10 s at the baseline, 10 s of overload whose
//! queue and latency grow, then a drop whose backlog drains in 6 s.
use super::*;
use crate::analyze::samples::FpmStatus;

const T0: i64 = 1_800_000_000_000;

fn fpm(t_s: i64, queue: u64, active: u64, accepted: u64) -> FpmSample {
    FpmSample {
        t: T0 + t_s * 1000,
        status: FpmStatus {
            listen_queue: queue,
            active_processes: active,
            total_processes: 20,
            accepted_conn: accepted,
            ..Default::default()
        },
    }
}

/// Per second: `(rate started, p95-ish latency of each, ok)` from second 0 to 39.
fn timeline() -> Timeline {
    let mut t = Timeline::default();
    for sec in 0..40i64 {
        let (rate, ms, ok) = match sec {
            0..10 => (100, 20.0, true),
            10..20 => (300, 200.0 * (sec - 9) as f64, sec < 15),
            20..26 => (50, 3000.0 - 500.0 * (sec - 20) as f64, false),
            _ => (50, 20.0, true),
        };
        for i in 0..rate {
            let start = T0 + sec * 1000 + i64::from(i) * 1000 / i64::from(rate);
            let end = start + ms as i64;
            t.record_request(start, end, ms, if ok { 200 } else { 504 }, ok);
        }
    }
    t
}

fn samples() -> Vec<FpmSample> {
    let mut v = Vec::new();
    let mut acc = 0;
    for s in (0..40).step_by(2) {
        let (q, a) = match s {
            0..10 => (1, 6),
            10..20 => (40 * (s - 8) as u64, 20),
            20..26 => (300 - 50 * (s - 20) as u64, 20),
            _ => (0, 3),
        };
        v.push(fpm(s, q, a, acc));
        acc += if s < 10 {
            200
        } else if s < 26 {
            240
        } else {
            100
        };
    }
    v
}

fn input<'a>(t: &'a Timeline, f: &'a [FpmSample]) -> RecoveryInput<'a> {
    RecoveryInput {
        timeline: t,
        fpm: f,
        span: (T0 + 20_000, T0 + 39_980),
        sent: 1000,
        baseline: (T0, T0 + 10_000),
        overload_ms: T0 + 10_000,
        slo_p95_ms: 200.0,
        handshakes: (None, None),
    }
}

#[test]
fn drain_p95_and_wasted_work_after_the_drop() {
    let (t, f) = (timeline(), samples());
    let r = recovery(&input(&t, &f));
    assert_eq!(r.drop_ms, T0 + 20_000);
    assert!((r.window_s - 19.98).abs() < 1e-9, "{}", r.window_s);
    assert!(
        (r.sent_per_s - 999.0 / 19.98).abs() < 0.01,
        "{}",
        r.sent_per_s
    );
    assert_eq!((r.baseline_queue, r.baseline_active), (Some(1), Some(6)));
    // queue 40 x (18 - 8) = 400 at 18 s, the highest
    assert_eq!(r.peak_queue, Some(400));
    // samples at 20, 22, 24 still drain (300, 200, 100); 26 s is the first at the baseline
    assert_eq!(r.drained_s, Some(6.0));
    // the requests started at 26 s complete within it at 20 ms; 25 s's still take 500 ms
    // and complete in 25 and 26: 26's p95 is 500 ms, so 27, 28, 29 is the first clean run
    let back = r.p95_back_s.unwrap();
    assert_eq!(back, 7.0, "{r:?}");
    assert!(r.p95_at_drop_ms.unwrap() > 1000.0, "{r:?}");
    assert!(r.p95_at_end_ms.unwrap() <= 21.0, "{r:?}");
    // accepted from the sample at 10 s (2 x 200 + ... ) to the one at 38 s
    let acc = f[19].status.accepted_conn - f[5].status.accepted_conn;
    assert_eq!(r.fpm_accepted, Some(acc));
    assert_eq!(r.wasted, Some(acc as i64 - r.ok as i64));
    assert!(r.wasted.unwrap() > 0, "{r:?}");
}

/// A drop in the middle of a second (as every real one is: the phase starts when k6's
/// scenario does): 1000/11 rps until 20.8 s, 1000/45 after. The rate sent is the phase's, not
/// that of its first whole second (as a CI run read it before: 27/s for 22, the overload's last
/// 0.8 s counted in), and the successes set against php-fpm's accepted count span the same
/// instants as that count (10.6 s to 35.5 s), not the whole seconds around them.
#[test]
fn a_drop_mid_second_reads_the_phases_rate_and_successes() {
    let mut t = Timeline::default();
    let (drop, end) = (T0 + 20_800, T0 + 35_800);
    let (mut sent, mut span, mut starts) = (0, (i64::MAX, 0), Vec::new());
    let mut at = T0;
    while at < end {
        t.record_request(at, at + 30, 30.0, 200, true);
        starts.push(at);
        if at >= drop {
            sent += 1;
            span = (span.0.min(at), at);
        }
        at += if at < drop { 11 } else { 45 };
    }
    let sample = |t_ms: i64| FpmSample {
        t: t_ms,
        ..fpm(0, 0, 2, 0)
    };
    let f: Vec<FpmSample> = (0..14).map(|i| sample(T0 + 10_600 + i * 1900)).collect();
    let r = recovery(&RecoveryInput {
        timeline: &t,
        fpm: &f,
        span,
        sent,
        baseline: (T0, T0 + 10_000),
        overload_ms: T0 + 10_000,
        slo_p95_ms: 200.0,
        handshakes: (None, None),
    });
    assert!((r.sent_per_s - 1000.0 / 45.0).abs() < 0.1, "{r:?}");
    // completions (30 ms after each start) from 10.6 s to the last sample, 35.3 s
    let (a, b) = (T0 + 10_600, f[13].t);
    assert_eq!(b, T0 + 35_300);
    let want = starts
        .iter()
        .filter(|s| (a..b).contains(&(*s + 30)))
        .count() as f64;
    assert!(
        (r.ok as f64 - want).abs() <= 2.0,
        "{} vs {want}: {r:?}",
        r.ok
    );
}

#[test]
fn no_samples_and_no_drain_are_none_not_zero() {
    let t = timeline();
    let r = recovery(&input(&t, &[]));
    assert_eq!((r.drained_s, r.fpm_accepted, r.wasted), (None, None, None));
    assert_eq!(r.baseline_queue, None);
    // a queue that never drains within the phase
    let f: Vec<FpmSample> = samples()
        .into_iter()
        .map(|mut s| {
            if s.t >= T0 + 20_000 {
                s.status.listen_queue = 50;
            }
            s
        })
        .collect();
    let r = recovery(&input(&t, &f));
    assert_eq!(r.drained_s, None);
    // p95 never back: every second of the phase over the SLO
    let r = recovery(&RecoveryInput {
        slo_p95_ms: 10.0,
        ..input(&t, &f)
    });
    assert_eq!(r.p95_back_s, None);
}

/// The recorded run's k6 CSV and php-fpm samples (`tests/fixtures/recovery/<id>/`) through
/// `analyze_run`, and the figures against a count made here from the raw lines.
fn recorded(id: &str) -> (Recovery, Vec<serde_json::Value>) {
    let dir = format!(
        "{}/tests/fixtures/recovery/{id}",
        env!("CARGO_MANIFEST_DIR")
    );
    let csv = std::fs::File::open(format!("{dir}/requests.csv.gz")).unwrap();
    let k6 = crate::analyze::k6csv::read_k6_csv(csv).unwrap();
    let text = std::fs::read_to_string(format!("{dir}/fpm.jsonl")).unwrap();
    let raw: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let samples = crate::analyze::samples::Samples {
        fpm: crate::sample::records::parse_jsonl(&text).unwrap(),
        ..Default::default()
    };
    let report = crate::analyze::analyze_run(crate::analyze::Inputs {
        k6,
        summary: None,
        samples,
        params: crate::analyze::Params::new(200.0),
        logs: Default::default(),
        source: Default::default(),
        caveats: Vec::new(),
    })
    .unwrap();
    (report.recovery.expect("a recovery section"), raw)
}

/// The raw sample's `listen queue`, `active processes`, `accepted conn` and time.
fn raw(v: &serde_json::Value) -> (u64, u64, u64, i64) {
    let s = &v["status"];
    let n = |k: &str| s[k].as_u64().unwrap();
    let t = v["t"].as_f64().map(|t| t as i64).unwrap_or_else(|| {
        chrono::DateTime::parse_from_rfc3339(v["t"].as_str().unwrap())
            .unwrap()
            .timestamp_millis()
    });
    (
        n("listen queue"),
        n("active processes"),
        n("accepted conn"),
        t,
    )
}

/// `exp3sat-recover`, recorded on a loaded host: php-fpm served ~28 requests/s, so after the
/// drop to 22 rps the full backlog (512: listen.backlog 511 + 1) never drained in the 60 s,
/// p95 never came back, and most of php-fpm's work went to clients already answered 504.
#[test]
fn a_recorded_collapse_that_did_not_drain() {
    let (r, raw_lines) = recorded("exp3sat-recover");
    let s: Vec<(u64, u64, u64, i64)> = raw_lines.iter().map(raw).collect();
    let end = r.drop_ms + (r.window_s * 1000.0).round() as i64;
    assert!((r.window_s - 60.0).abs() < 0.5, "{r:?}");
    assert!((r.sent_per_s - 22.0).abs() < 1.0, "{r:?}");
    // the lowest step (22 rps) at most 1 queued and 5 (all) workers active
    assert_eq!((r.baseline_queue, r.baseline_active), (Some(1), Some(5)));
    // the kernel's accept queue held one more than listen.backlog 511
    let peak = s.iter().filter(|x| x.3 <= end).map(|x| x.0).max().unwrap();
    assert_eq!((r.peak_queue, peak), (Some(512), 512));
    // no sample of the phase back at the baseline: not drained, and p95 never back
    let after: Vec<_> = s
        .iter()
        .filter(|x| x.3 >= r.drop_ms && x.3 <= end)
        .collect();
    assert!(after.len() >= 25, "{}", after.len());
    assert!(after.iter().all(|x| x.0 > 1 || x.1 > 5));
    assert_eq!((r.drained_s, r.p95_back_s), (None, None));
    assert!(r.p95_at_drop_ms.unwrap() > 5000.0 && r.p95_at_end_ms.unwrap() > 5000.0);
    // accepted conn from the first sample of the overload step to the last of the phase
    let acc = r.fpm_accepted.unwrap();
    assert!(acc > 2000, "{r:?}");
    assert_eq!(r.wasted, Some(acc as i64 - r.ok as i64));
    let share = r.wasted.unwrap() as f64 / acc as f64;
    assert!(
        share > 0.6,
        "most of the work was for clients already answered: {r:?}"
    );
}

/// The drain predicted from the drop: php-fpm accepted 240 per 2 s in the overload (120/s),
/// the queue held 300 at the drop (299 over the baseline's 1), 50/s arrive after it: 299 / 70
/// s at least; with 40 half-open and 30 connecting at the drop, 339 / 70 to 369 / 70 + one
/// 2 s sample period, and the made drain (6 s) inside.
#[test]
fn the_drain_is_predicted_from_what_waits_at_the_drop() {
    let (t, f) = (timeline(), samples());
    let d = recovery(&input(&t, &f))
        .drain
        .expect("two samples in the overload");
    assert!((d.accept_per_s - 120.0).abs() < 1e-9, "{d:?}");
    assert_eq!((d.queue, d.half_open, d.connecting), (299, None, None));
    let net = 120.0 - 999.0 / 19.98;
    assert!((d.min_s.unwrap() - 299.0 / net).abs() < 1e-9, "{d:?}");
    assert_eq!(d.max_s, None, "the handshakes were not read");
    let r = recovery(&RecoveryInput {
        handshakes: (Some(40), Some(30)),
        ..input(&t, &f)
    });
    let d = r.drain.clone().unwrap();
    let (lo, hi) = (d.min_s.unwrap(), d.max_s.unwrap());
    assert!((lo - 339.0 / net).abs() < 1e-9, "{d:?}");
    assert!((hi - (369.0 / net + 2.0)).abs() < 1e-9, "{d:?}");
    assert!((lo..=hi).contains(&r.drained_s.unwrap()), "{d:?} {r:?}");
    // arrivals at or over the accept rate: the queue never drains, no bound
    let mut slow = f.clone();
    for s in slow.iter_mut() {
        s.status.accepted_conn /= 4;
    }
    let d = recovery(&input(&t, &slow)).drain.unwrap();
    assert!(
        d.accept_per_s < 50.0 && d.min_s.is_none() && d.max_s.is_none(),
        "{d:?}"
    );
}
