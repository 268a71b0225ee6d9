//! The node and demo apps' 2-second JSON metrics lines: their fields (smoke) and their
//! extraction from the app's output into `samples/node.jsonl`.
use serde_json::json;

/// The source the node and demo apps' metrics lines are (`samples/<SOURCE>.jsonl`, read back as
/// `NodeSample`s), a `Read::OutputLines` of their app's container.
pub(crate) const SOURCE: &str = "node";

/// The fields of the Node app's metrics line (lab-spec §4).
pub(crate) const NODE_METRICS_FIELDS: [&str; 18] = [
    "t",
    "pid",
    "rps",
    "err5xx",
    "eld_p50_ms",
    "eld_p99_ms",
    "eld_max_ms",
    "elu",
    "cpu_cores",
    "cpu_ms_per_req",
    "pool_total",
    "pool_idle",
    "pool_waiting",
    "pool_waiting_max",
    "inflight",
    "inflight_max",
    "rss_mb",
    "errors",
];
/// The fields of the demo server's metrics line.
pub(crate) const DEMO_METRICS_FIELDS: [&str; 8] = [
    "t",
    "pid",
    "rps",
    "inflight",
    "inflight_max",
    "queue",
    "queue_max",
    "busy",
];

/// The app's 2-second JSON metrics lines (those with `t` and `elu` or `inflight`), each with the
/// container name added, as JSON lines.
pub(crate) fn metrics_lines(log: &str, container: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let l = line.trim();
        if !l.starts_with('{') {
            continue;
        }
        let Ok(serde_json::Value::Object(mut m)) = serde_json::from_str::<serde_json::Value>(l)
        else {
            continue;
        };
        if !m.contains_key("t") || !(m.contains_key("elu") || m.contains_key("inflight")) {
            continue;
        }
        m.insert("container".into(), json!(container));
        out.push_str(&serde_json::Value::Object(m).to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_lines_keep_only_the_apps_json_lines() {
        let log = "listening on 3000\n{\"t\":\"2026-10-30T11:21:45.694Z\",\"pid\":1,\"rps\":150,\"elu\":0.81,\"inflight\":0}\nnot json {\n{\"msg\":\"other\"}\n";
        let out = metrics_lines(log, "perflab-x-app");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["container"], "perflab-x-app");
        assert_eq!(v["rps"], 150);
    }
}
