//! End to end through the real Docker engine (issue 41): one `exp3sat-recover-shed --quick` run
//! checks load shedding and the recovery section together. nginx's `limit_req` at 40 rps
//! (under the pool's N/W, ~45 rps for 5 workers on /api/slow) answers the excess of 90 rps
//! with 429 while goodput stays at the limit; the load then drops to 22 rps and the report's
//! recovery section finds nothing left to drain.
use crate::run_support;
use run_support::{json, run_quick};

#[test]
fn shedding_holds_goodput_and_the_recovery_section_reads_the_drop() {
    let _serial = crate::serial();
    let (_out, dir) = run_quick("exp3sat-recover-shed", &[]);
    let status = json(&dir.join("status.json"));
    assert_eq!(status["state"], "complete", "{status}");
    let r = json(&dir.join("report.json"));
    let steps = r["steps"].as_array().unwrap();
    let top = steps.last().unwrap();
    let f =
        |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("no {k} in {v}"));
    let rec = &r["recovery"];
    eprintln!(
        "exp3sat-recover-shed --quick: top {} rps: ok/s {:.1}, 429 x {}, p95 {:.0} ms, ok p95 {:.0} ms; recovery {rec}",
        top["target"],
        f(top, "ok_per_s"),
        top["non200"]["429"],
        f(top, "p95_ms"),
        f(top, "ok_p95_ms"),
    );
    // shedding: the excess answered 429 at once, at least half of what the limit predicts
    assert_eq!(top["target"], 90);
    let shed = top["non200"]["429"].as_u64().unwrap_or(0) as f64;
    assert!(
        shed >= 0.5 * (1.0 - 40.0 / 90.0) * f(top, "requests"),
        "the excess answered 429: {top}"
    );
    // the recovery phase was read, at its rate
    assert!(
        f(rec, "window_s") >= 12.0,
        "--quick holds the drop 15 s: {rec}"
    );
    assert!(
        (f(rec, "sent_per_s") - 22.0).abs() < 4.0,
        "the drop's rate: {rec}"
    );
    assert!(
        f(rec, "fpm_accepted") > 0.0,
        "php-fpm's accepted conn read: {rec}"
    );
    assert!(rec["peak_queue"].is_number(), "{rec}");
    // the drain predicted from the drop: php-fpm's accept rate in the overload was read; no
    // handshakes without kernel_counters, so no upper bound
    let d = &rec["drain"];
    assert!(f(d, "accept_per_s") > 0.0, "{rec}");
    assert!(d["max_s"].is_null() && d["half_open"].is_null(), "{rec}");
    // Goodput at the limit and nothing to drain need php-fpm to serve more than the limit:
    // on a host whose other processes take the app's CPU it serves less (measured at load 16:
    // 28/s), and the queue builds behind the limit too.
    let accepted = f(&top["server"]["fpm"], "accepted_per_s");
    if top["host_limited"].is_null() && accepted >= 40.0 {
        assert!(
            f(top, "ok_per_s") >= 0.9 * 40.0,
            "goodput at the limit: {top}"
        );
        assert!(
            f(rec, "drained_s") <= 4.0,
            "nothing to drain behind the limit: {rec}"
        );
        let wasted = f(rec, "wasted") / f(rec, "fpm_accepted");
        assert!(
            wasted < 0.1,
            "php-fpm worked for clients still waiting: {rec}"
        );
    } else {
        eprintln!(
            "not judged: goodput at the limit and the drain (php-fpm served {accepted:.1}/s; {})",
            top["host_limited"]
        );
    }
    let txt = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    assert!(txt.contains("the drain predicted from the drop: "), "{txt}");
    for (file, title) in [
        ("report.txt", "Recovery after overload"),
        ("report.md", "Recovery after overload"),
        ("report.html", "Recovery after overload"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains(title), "{file} has the recovery section");
    }
}

/// `exp3sat-recover-reload --quick`: the timed action (`load.actions`) reloads php-fpm (USR2
/// through the Docker API's exec) in the collapse. The manifest records it as run (exit 0),
/// php-fpm's log shows the re-executed master taking over its listening socket (so the kernel's
/// accept queue survives), its counters restart, and the report's `Timed actions` block reads
/// the queue around it in report.txt, report.md, report.json and report.html.
#[test]
fn a_reload_in_the_collapse_keeps_the_backlog_and_restarts_the_pool() {
    let _serial = crate::serial();
    let (_out, dir) = run_quick("exp3sat-recover-reload", &[]);
    let m = json(&dir.join("manifest.json"));
    let run = &m["measurements"]["actions"][0];
    assert_eq!(run["name"], "reload", "{run}");
    assert_eq!(run["exit_code"].as_i64(), Some(0), "{run}");
    assert!(
        run["started_at"].is_string() && run["ended_at"].is_string(),
        "{run}"
    );
    let log = std::fs::read_to_string(dir.join("logs/php-fpm.log")).expect("php-fpm.log");
    assert!(log.contains("Reloading in progress"), "{log}");
    assert!(log.contains("using inherited socket"), "{log}");
    let r = json(&dir.join("report.json"));
    let a = &r["actions"][0];
    eprintln!("exp3sat-recover-reload --quick: {a}");
    assert_eq!(a["ran"], true, "{a}");
    assert_eq!(a["fpm_restarted"], true, "{a}");
    assert!(
        a["queue_before"].is_u64() && a["queue_after"].is_u64(),
        "{a}"
    );
    // the kernel's reading of the socket: the queue it held is still there after the reload
    let (kb, ka) = (
        a["kernel_queue_before"].as_u64(),
        a["kernel_queue_after"].as_u64(),
    );
    assert!(kb.is_some() && ka.is_some(), "{a}");
    assert!(
        ka.unwrap() * 2 >= kb.unwrap(),
        "the backlog survives the reload: {a}"
    );
    for f in ["report.txt", "report.md", "report.html"] {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        assert!(text.contains("Timed actions"), "{f}");
    }
}

/// `exp3sat-failfast --quick` (backlog 32, 90 rps against ~45 served): the `fpm_net` source
/// reads php-fpm's listening socket from inside its network namespace through the Docker
/// API's exec. At the top step the accept queue stands at its limit plus one (the kernel's
/// full queue), the limit is the pool's backlog, and TcpExt's ListenOverflows grows.
#[test]
fn the_kernel_counts_the_full_accept_queue_and_its_overflows() {
    let _serial = crate::serial();
    let (_out, dir) = run_quick("exp3sat-failfast", &[]);
    let text = std::fs::read_to_string(dir.join("samples/fpm_net.jsonl")).expect("fpm_net.jsonl");
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let reading = first["text"].as_str().unwrap();
    assert!(
        reading.contains("TcpExt:") && reading.contains("listen.backlog"),
        "{reading}"
    );
    let m = json(&dir.join("manifest.json"));
    assert!(
        m["measurements"]["samplers"]["fpm_net_samples"].as_u64() >= Some(5),
        "{m}"
    );
    let r = json(&dir.join("report.json"));
    let top = r["steps"].as_array().unwrap().last().unwrap();
    let src = &top["server"]["sources"];
    eprintln!("exp3sat-failfast --quick top step fpm_net: {src}");
    let get = |k: &str| src[k].as_f64().unwrap_or_else(|| panic!("no {k} in {src}"));
    assert_eq!(get("fpm_net.send_q"), 32.0);
    assert_eq!(get("fpm_net.recv_q_max"), 33.0, "backlog + 1: {src}");
    assert!(get("fpm_net.overflows_per_s") >= 1.0, "{src}");
    // a dropped SYN is sent again: nginx's side holds connects in SYN_SENT (`nginx_syn`), and
    // both handshake sources were read through the same exec
    for k in ["fpm_syn_samples", "nginx_syn_samples"] {
        assert!(
            m["measurements"]["samplers"][k].as_u64() >= Some(5),
            "{k}: {m}"
        );
    }
    assert!(get("nginx_syn.connecting_max") >= 1.0, "{src}");
    assert!(src["fpm_syn.half_open_max"].is_number(), "{src}");
}
