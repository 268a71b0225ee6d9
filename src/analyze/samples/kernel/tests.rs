use super::*;

/// A reading as the `cat` writes it (the kernel's formats, cut to a few of their fields):
/// php-fpm's queue full at 33 of its backlog 32, two overflows counted so far.
fn reading(recv_q: u64, overflows: u64) -> String {
    format!(
        "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPBacklogDrop\n\
         TcpExt: 0 {overflows} {overflows} 0\n\
         IpExt: InNoRoutes InTruncatedPkts\n\
         IpExt: 0 0\n\
         \x20 sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
         \x20  0: 0B00007F:A5D9 00000000:0000 0A 00000000:00000007 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n\
         \x20 sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
         \x20  0: 00000000000000000000000000000000:2328 00000000000000000000000000000000:0000 0A 00000000:{recv_q:08X} 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0\n\
         \x20  1: 0000000000000000FFFF00000A000005:2328 0000000000000000FFFF00000A000003:D2F0 01 00000000:00000000 00:00000000 00000000    33        0 3 1 0 20 4 30 10 -1\n\
         4096\n\
         ; php-fpm configuration rendered by perflab\n\
         [www]\n\
         listen = 9000\n\
         listen.backlog = 32   ; 511\n"
    )
}

#[test]
fn a_reading_gives_the_queue_its_limit_and_the_counters() {
    let line = serde_json::json!({"t": 1, "text": reading(33, 2)});
    let v = fpm_net(&line).unwrap();
    // recv_q 33 (hex 21) > send_q 32: the kernel's full queue, backlog + 1
    assert_eq!(v, [33.0, 32.0, 2.0, 2.0, 4096.0, 32.0]);
    assert_eq!(v.len(), FPM_NET.columns.len());
    // a backlog over somaxconn is capped, as listen(2) does
    let big = reading(0, 0).replace("listen.backlog = 32", "listen.backlog = 8192");
    let v = fpm_net(&serde_json::json!({"t": 1, "text": big})).unwrap();
    assert_eq!((v[1], v[5]), (4096.0, 8192.0));
    // a unix-socket pool (no TCP listener), or anything else: no reading
    let unix: String = reading(0, 0)
        .lines()
        .filter(|l| !l.contains(" 0A "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(fpm_net(&serde_json::json!({"t": 1, "text": unix})).is_none());
    assert!(
        fpm_net(&serde_json::json!({"t": 1, "text": "cat: /proc/net/tcp6: No such file"}))
            .is_none()
    );
}

/// Over a step: the queue's highest reading against its limit (the kernel's 511 -> 512), and
/// the overflows per second at the window's edges.
#[test]
fn a_step_reads_the_full_queue_and_the_overflow_rate() {
    use super::super::series::Span;
    use super::super::{Samples, WindowServer};
    let lines: Vec<Value> = (0..8)
        .map(|i| serde_json::json!({"t": i * 2000, "text": reading(if i < 3 { 5 } else { 33 }, 50 * 2 * i as u64)}))
        .collect();
    let (pts, skipped) = super::super::sources::points(&FPM_NET, &lines);
    assert_eq!((pts.len(), skipped), (8, 0));
    let mut s = Samples::default();
    s.sources.insert("fpm_net".into(), pts);
    let mut w = WindowServer::default();
    super::super::sources::window(&s, Span::step(4000, 14000), &mut w);
    let get = |n: &str| w.sources.get(n).copied();
    assert_eq!(get("fpm_net.recv_q_max"), Some(33.0));
    assert_eq!(get("fpm_net.send_q"), Some(32.0));
    let ovfl = get("fpm_net.overflows_per_s").unwrap();
    assert!((ovfl - 50.0).abs() < 1e-9, "{ovfl}");
}

/// The readings of a real `exp3sat-failfast --quick` run (2026-12-05, backlog 32; 60 rps then
/// 90 rps against ~45 served): the accept queue fills to 33 = backlog + 1 (hex 21) and stays
/// there, the kernel counting overflows all along; Docker's resolver listener is left out.
#[test]
fn a_recorded_run_reads_backlog_plus_one_and_its_overflows() {
    let lines: Vec<Value> = include_str!("recorded.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (pts, skipped) = super::super::sources::points(&FPM_NET, &lines);
    assert_eq!((pts.len(), skipped), (lines.len(), 0));
    let q: Vec<f64> = pts.iter().map(|p| p.values[0]).collect();
    assert_eq!(q, [0.0, 25.0, 31.0, 33.0, 33.0, 32.0]);
    assert!(
        pts.iter()
            .all(|p| p.values[1] == 32.0 && p.values[4] == 4096.0)
    );
    let overflows: Vec<f64> = pts.iter().map(|p| p.values[2]).collect();
    assert!(overflows.windows(2).all(|w| w[1] >= w[0]), "{overflows:?}");
    assert!(overflows.last() > overflows.first(), "{overflows:?}");
}
