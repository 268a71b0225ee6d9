//! The live page's server on real sockets, fed as the rig feeds it (a plan, k6 snapshots, the
//! samplers' lines in a run directory): the token (401 without, 200 with it in the URL, a
//! header or the cookie it sets), the loopback's Host check, `/data`'s JSON, a hostile run name
//! escaped in the page, the JSON and the OpenMetrics labels, the report files' path checks, and
//! two servers on port 0 never sharing a port.
use std::net::SocketAddr;
use std::path::Path;

use chrono::{TimeZone, Utc};
use perflab::live::server::{Serve, Server, Source};
use perflab::live::{Begin, Feed};
use perflab::load::live::parse_snapshot;
use perflab::plan::{self, PlanOptions};
use reqwest::StatusCode;

use crate::live_support::promtool_passes;

const HOSTILE: &str = "r1-<script>alert(1)</script>\"}\n#";
const TOKEN: &str = "tok-0123456789";

fn plan() -> plan::Plan {
    let e = crate::session_fit::experiment("demo-open");
    plan::build(&e, PlanOptions { quick: true })
}

/// k6's `/v1/metrics` body with `n` requests, `r0100`'s sub-metrics and `vus`.
fn k6_body(n: u64, p95: f64) -> String {
    format!(
        r#"{{"data":[{{"id":"http_reqs","attributes":{{"sample":{{"count":{n}}}}}}},
        {{"id":"http_req_duration","attributes":{{"sample":{{"avg":10}}}}}},
        {{"id":"vus","attributes":{{"sample":{{"value":3}}}}}},
        {{"id":"http_reqs{{stage:r0100}}","attributes":{{"sample":{{"count":{n}}}}}}},
        {{"id":"http_req_failed{{stage:r0100}}","attributes":{{"sample":{{"rate":0}}}}}},
        {{"id":"http_req_duration{{stage:r0100}}","attributes":{{"sample":{{"med":9,"p(95)":{p95}}}}}}}]}}"#
    )
}

/// A feed as a run's: the run directory holds report.html, its samples one cgroup line;
/// a secret sits beside the directory and a symlink inside points at it.
fn fed(dir: &Path) -> Feed {
    let run = dir.join("run");
    let samples = run.join("samples");
    std::fs::create_dir_all(&samples).unwrap();
    std::fs::write(run.join("report.html"), "<html>the report</html>").unwrap();
    std::fs::write(dir.join("secret.html"), "secret").unwrap();
    std::os::unix::fs::symlink(dir.join("secret.html"), run.join("link.html")).unwrap();
    let start = Utc.with_ymd_and_hms(2026, 12, 5, 12, 0, 0).unwrap();
    let t = |s: i64| start + chrono::Duration::seconds(s);
    std::fs::write(
        samples.join("cgroup.jsonl"),
        format!(
            "{{\"t\":{},\"role\":\"k6\",\"container\":\"c\",\"cpu_cores\":0.25,\"mem_bytes\":1,\"throttled_ms\":0.0,\"psi_some_avg10\":null}}\n",
            t(1).timestamp_millis()
        ),
    )
    .unwrap();
    let plan = plan();
    let layout = plan::layout::auto(&plan::layout::CpuSet::new(vec![0, 1])).unwrap();
    let feed = Feed::new("waiting");
    feed.begin(&Begin {
        run: HOSTILE,
        plan: &plan,
        layout: &layout,
        k6_start: start,
        run_dir: &run,
        samples: &samples,
    });
    feed.poll(t(1), Some(parse_snapshot(&k6_body(100, 20.0)).unwrap()));
    feed.poll(t(2), Some(parse_snapshot(&k6_body(200, 30.0)).unwrap()));
    feed
}

async fn get(url: &str, headers: &[(&str, &str)]) -> (StatusCode, String, Option<String>) {
    let c = reqwest::Client::new();
    let mut r = c.get(url);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.send().await.unwrap();
    let cookie = resp
        .headers()
        .get("set-cookie")
        .map(|v| v.to_str().unwrap().to_owned());
    (resp.status(), resp.text().await.unwrap(), cookie)
}

fn at(addr: SocketAddr, path: &str) -> String {
    format!("http://127.0.0.1:{}{path}", addr.port())
}

#[tokio::test]
async fn off_the_loopback_every_request_needs_the_token() {
    let dir = tempfile::tempdir().unwrap();
    let feed = fed(dir.path());
    let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let s = Server::start(
        any,
        Some(TOKEN.into()),
        Serve::Page,
        Source::Run(feed.clone()),
    )
    .await
    .unwrap();
    for path in ["/", "/data", "/metrics", "/run/report.html"] {
        let (st, body, _) = get(&at(s.addr, path), &[]).await;
        assert_eq!(st, StatusCode::UNAUTHORIZED, "{path}");
        assert!(body.contains("needs its token"), "{body}");
        let (st, ..) = get(&at(s.addr, &format!("{path}?token=wrong-token-x")), &[]).await;
        assert_eq!(st, StatusCode::UNAUTHORIZED, "{path} with a wrong token");
    }
    let (st, body, cookie) = get(&at(s.addr, &format!("/data?token={TOKEN}")), &[]).await;
    assert_eq!(st, StatusCode::OK);
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["run"], HOSTILE, "the JSON carries the name as data");
    // the cookie the first good request set, a header and a bearer token all work
    let cookie = cookie
        .expect("a cookie for the page's links")
        .replace("; HttpOnly; SameSite=Strict; Path=/", "");
    assert_eq!(
        get(&at(s.addr, "/data"), &[("cookie", &cookie)]).await.0,
        StatusCode::OK
    );
    assert_eq!(
        get(&at(s.addr, "/"), &[("x-perflab-token", TOKEN)]).await.0,
        StatusCode::OK
    );
    let bearer = format!("Bearer {TOKEN}");
    let (st, text, _) = get(&at(s.addr, "/metrics"), &[("authorization", &bearer)]).await;
    assert_eq!(st, StatusCode::OK);
    assert!(text.ends_with("# EOF\n"));
    s.stop().await;
}

#[tokio::test]
async fn data_page_and_metrics_show_the_run_with_its_name_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let feed = fed(dir.path());
    let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let s = Server::start(lo, None, Serve::Page, Source::Run(feed.clone()))
        .await
        .unwrap();
    let (st, body, _) = get(&at(s.addr, "/data"), &[]).await;
    assert_eq!(st, StatusCode::OK);
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (d["experiment"].as_str(), d["status"].as_str()),
        (Some("demo-open"), Some("running"))
    );
    let (_, body, _) = get(&at(s.addr, "/data?since=1.5"), &[]).await;
    let delta: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        delta["client"].as_array().map(Vec::len),
        Some(1),
        "only the poll after 1.5 s"
    );
    assert_eq!(delta["since"], 1.5);
    let last = &d["client"][1];
    assert_eq!(
        last["sent_per_s"], 100.0,
        "100 more requests in 1 s: {last}"
    );
    assert_eq!(last["p95_ms"], 30.0);
    let cpu = d["server"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "container_cpu_cores")
        .unwrap();
    assert_eq!(cpu["role"], "k6");
    assert_eq!(cpu["points"][0][1], 0.25);
    let (_, page, _) = get(&at(s.addr, "/"), &[]).await;
    assert!(
        page.contains("r1-&lt;script&gt;alert(1)&lt;/script&gt;&quot;}"),
        "the title escapes it"
    );
    assert!(!page.contains("<script>alert"));
    let (_, metrics, _) = get(&at(s.addr, "/metrics"), &[]).await;
    assert!(
        metrics.contains(r#"run="r1-<script>alert(1)</script>\"}\n#""#),
        "{metrics}"
    );
    assert!(
        metrics.contains("perflab_container_cpu_cores{"),
        "{metrics}"
    );
    promtool_passes(&metrics);
    for line in metrics.lines() {
        assert!(
            line.starts_with("# ") || line.starts_with("perflab_"),
            "a line broke out: {line}"
        );
    }
    // a DNS-rebinding page reaches the loopback under another name: refused
    let (st, ..) = get(&at(s.addr, "/data"), &[("host", "evil.example:80")]).await;
    assert_eq!(st, StatusCode::FORBIDDEN);
    // the end: the page links to the report, served from the run directory only
    feed.finish(Some("report.html"));
    let (_, body, _) = get(&at(s.addr, "/data"), &[]).await;
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (d["status"].as_str(), d["report"].as_str()),
        (Some("finished"), Some("run/report.html"))
    );
    let (st, body, _) = get(&at(s.addr, "/run/report.html"), &[]).await;
    assert_eq!(
        (st, body.as_str()),
        (StatusCode::OK, "<html>the report</html>")
    );
    for hostile in [
        "/run/../secret.html",
        "/run/%2e%2e/secret.html",
        "/run/link.html",
        "/run/..%2fsecret.html",
        "/run/%2fetc%2fpasswd",
        "/run/samples/cgroup.jsonl",
        "/run/.hidden.html",
        "/run/a%00.html",
    ] {
        let (st, body, _) = get(&at(s.addr, hostile), &[]).await;
        assert!(
            st == StatusCode::NOT_FOUND || st == StatusCode::BAD_REQUEST,
            "{hostile}: {st}"
        );
        assert!(!body.contains("secret"), "{hostile}");
    }
    s.stop().await;
}

#[tokio::test]
async fn servers_on_port_0_never_collide_and_stop_with_the_run() {
    let feed = Feed::new("a");
    let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let a = Server::start(lo, None, Serve::Page, Source::Run(feed.clone()))
        .await
        .unwrap();
    let b = Server::start(lo, None, Serve::Metrics, Source::Run(feed.clone()))
        .await
        .unwrap();
    assert_ne!(a.addr.port(), b.addr.port());
    // the metrics-only listener serves nothing else
    assert_eq!(
        get(&at(b.addr, "/data"), &[]).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(get(&at(b.addr, "/metrics"), &[]).await.0, StatusCode::OK);
    let port = a.addr.port();
    a.stop().await;
    b.stop().await;
    let gone = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/data"))
        .send()
        .await;
    assert!(gone.is_err(), "the server stopped");
}

/// Bad `--live` input: exit 2 naming the flag and the fix, nothing started (no run directory).
#[test]
fn bad_live_flags_exit_2_and_start_nothing() {
    let out = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (
            &["--live", "example.org"][..],
            "--live \"example.org\": not an address",
        ),
        (
            &["--live", "0.0.0.0", "--live-token", "bad token"][..],
            "--live-token: give 8 to 256",
        ),
        (
            &["--prometheus", "nowhere"][..],
            "--prometheus \"nowhere\": not an address",
        ),
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
            .args(["run", "demo-open", "--quick", "--out"])
            .arg(out.path())
            .args(args)
            .env_remove("PERFLAB_LIVE_TOKEN")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("live page:"), "nothing served: {err}");
    }
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "no run directory"
    );
}
