use super::*;
use crate::analyze::k6csv::SecondAgg;
use crate::analyze::samples::sources::SourcePoint;
use crate::sample::records::FpmStatus;

fn sample(t: i64, queue: u64, active: u64, accepted: u64) -> FpmSample {
    FpmSample {
        t,
        status: FpmStatus {
            listen_queue: queue,
            active_processes: active,
            accepted_conn: accepted,
            ..Default::default()
        },
    }
}

fn run(at_ms: i64, ran: bool) -> ActionRun {
    let at = DateTime::<Utc>::from_timestamp_millis(at_ms).unwrap();
    ActionRun {
        name: "reload".into(),
        role: "fpm".into(),
        exec: vec!["sh".into(), "-c".into(), "kill -USR2 1".into()],
        planned_at: at,
        started_at: ran.then_some(at),
        ended_at: ran.then_some(at),
        exit_code: ran.then_some(0),
        output: String::new(),
        error: (!ran).then(|| "the load ended first".into()),
    }
}

/// A reload at t = 100 s in a collapse: the queue stays (the listening socket survives a
/// reload), php-fpm's counters restart (and climb past the old count again within the
/// window: still a restart), and the seconds after it count the 502s it caused.
#[test]
fn the_effect_reads_the_queue_the_counters_and_the_answers_around_the_action() {
    let at = 100_000;
    let fpm = vec![
        sample(96_000, 510, 5, 4_000),
        sample(98_000, 512, 5, 4_060),
        sample(100_500, 511, 0, 3),
        sample(104_000, 490, 5, 70),
        sample(109_000, 30, 5, 4_100),
        sample(112_000, 10, 2, 4_200),
    ];
    let mut timeline = Timeline::default();
    timeline.base_s = 80;
    timeline.secs = (80..120)
        .map(|s| SecondAgg {
            ok: if s >= 100 { 2 } else { 1 },
            non200: if s == 100 { 5 } else { 0 },
            ..Default::default()
        })
        .collect();
    // the kernel's accept queue: full before and after (php-fpm's status of the new master
    // reads 0 at first; here 511, the reading above)
    let kernel: Vec<SourcePoint> = [(98_500, 512.0), (100_400, 512.0), (104_500, 480.0)]
        .map(|(t, q)| SourcePoint {
            t,
            values: vec![q, 511.0],
        })
        .to_vec();
    let e = &effects(&[run(at, true)], &fpm, &kernel, &timeline)[0];
    assert_eq!(
        (e.kernel_queue_before, e.kernel_queue_after),
        (Some(512), Some(512))
    );
    assert!(e.ran && e.exit_code == Some(0), "{e:?}");
    assert_eq!(
        (e.queue_before, e.queue_after, e.queue_min_after),
        (Some(512), Some(511), Some(30))
    );
    assert_eq!((e.active_before, e.active_after), (Some(5), Some(0)));
    assert_eq!(e.fpm_restarted, Some(true));
    assert_eq!((e.non200_before, e.non200_after), (0, 5));
    assert_eq!((e.ok_before, e.ok_after), (10, 20));
    // an action that did not run is read at its planned instant and says so
    let missed = &effects(&[run(at, false)], &fpm, &[], &timeline)[0];
    assert!(!missed.ran && missed.error.is_some(), "{missed:?}");
    // no samples: nothing to say about the queue
    let none = &effects(&[run(at, true)], &[], &[], &timeline)[0];
    assert_eq!((none.queue_before, none.fpm_restarted), (None, None));
}
