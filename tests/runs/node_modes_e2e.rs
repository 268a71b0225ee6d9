//! 2a's /cpu off the event loop (issue 41, item 6) through the real engine: `--quick`, two
//! closed steps of 2a-async (4 and 8 VUs that send again 10 ms after each answer), pbkdf2 on
//! libuv's pool.
use crate::run_support::{json, run_quick};

/// With /cpu's pbkdf2 on libuv's pool, requests overlap inside the app: its own counter of
/// requests in flight reads above 1 at the top step (sync 2a's reads 1 under the same load,
/// the hash holding the loop), every answer is a hash (no 5xx, the app did not fail to boot),
/// and the manifest records the mode the stack ran with.
///
/// The load is closed, so overlap does not depend on this host's speed: 8 clients always have
/// a request out, and only the loop's being free lets the app hold more than one. An open step
/// below the app's ceiling (100 rps, until 2026-12-06) sends evenly spaced requests that a
/// hash of 3-5 ms finishes before the next arrives: it read 1 on a quiet host and failed.
/// Measured here: async 4 and 7, sync 1 and 1 (`--set stack.node.cpu_mode=sync`).
#[test]
fn async_pbkdf2_lets_requests_overlap_in_the_app() {
    let _serial = crate::serial();
    let (_out, dir) = run_quick(
        "2a-async",
        &[
            "--set",
            "load.model=closed",
            "--set",
            "load.think_time_s=0.01",
            "--set",
            "load.steps=4,8",
            "--set",
            "stack.node.uv_threadpool_size=2",
        ],
    );
    let status = json(&dir.join("status.json"));
    assert_eq!(status["state"], "complete", "{status}");
    let m = json(&dir.join("manifest.json"));
    let node = &m["experiment"]["stack"]["node"];
    assert_eq!(node["cpu_mode"], "async", "{node}");
    assert_eq!(node["uv_threadpool_size"], 2, "{node}");
    let r = json(&dir.join("report.json"));
    let steps = r["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 2, "{}", r["steps"]);
    let top = &steps[1];
    let node = &top["server"]["node"];
    let inflight = node["inflight_max"]
        .as_f64()
        .expect("the app's metrics lines were read");
    assert!(inflight >= 2.0, "requests overlap at 8 VUs: {node}");
    for s in steps {
        assert!(s["non200"].as_object().unwrap().is_empty(), "{s}");
        assert!(s["ok_per_s"].as_f64().unwrap() > 0.0, "{s}");
    }
    let app = std::fs::read_to_string(dir.join("logs/app.log")).unwrap();
    assert!(
        !app.contains("boot_failed") && !app.contains("worker_thread_error"),
        "{app}"
    );
}
