//! docs/grafana/perflab-live.json, the dashboard for `perflab run --prometheus`: it parses as a
//! Grafana dashboard (title, uid, schema version, panels with a type, a title, a place on the
//! grid and queries), every query names only series perflab exports (`live::prom::SERIES`) and
//! selects only by the labels it sets, and every series the page plots has a panel.
use std::collections::BTreeSet;

use perflab::live::prom::SERIES;

const DASHBOARD: &str = "docs/grafana/perflab-live.json";
const LABELS: [&str; 4] = ["run", "experiment", "step", "role"];

/// The `perflab_*` names in a PromQL expression, and the label names its selectors use.
fn names_in(expr: &str) -> (Vec<String>, Vec<String>) {
    let mut series = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("perflab_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        series.push(tail[..end].to_string());
        rest = &tail[end..];
    }
    let mut labels = Vec::new();
    for sel in expr.split('{').skip(1) {
        let sel = sel.split('}').next().unwrap_or("");
        for m in sel.split(',') {
            if let Some((name, _)) = m.split_once(['=', '!', '~']) {
                labels.push(name.trim().to_string());
            }
        }
    }
    (series, labels)
}

#[test]
fn the_grafana_dashboard_queries_only_series_perflab_exports() {
    let text = std::fs::read_to_string(DASHBOARD).unwrap();
    let d: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"));
    assert_eq!(d["uid"], "perflab-live");
    assert!(d["title"].is_string() && d["schemaVersion"].as_u64().unwrap() >= 30);
    let known: BTreeSet<String> = SERIES.iter().map(|(n, _)| format!("perflab_{n}")).collect();
    let mut exprs: Vec<String> = Vec::new();
    let panels = d["panels"].as_array().expect("panels");
    for p in panels {
        let title = p["title"].as_str().expect("a panel's title");
        assert!(p["type"].is_string(), "{title}: type");
        for k in ["x", "y", "w", "h"] {
            assert!(p["gridPos"][k].is_u64(), "{title}: gridPos.{k}");
        }
        let targets = p["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "{title}: no query");
        for t in targets {
            assert!(t["refId"].is_string(), "{title}: refId");
            exprs.push(t["expr"].as_str().expect("expr").to_string());
        }
    }
    for v in d["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            exprs.push(q.to_string());
        }
    }
    let mut used = BTreeSet::new();
    for e in &exprs {
        let (series, labels) = names_in(e);
        assert!(!series.is_empty(), "{e}: names no perflab series");
        for s in series {
            assert!(
                known.contains(&s),
                "{e}: {s} is not a series perflab exports"
            );
            used.insert(s);
        }
        for l in labels {
            assert!(
                LABELS.contains(&l.as_str()),
                "{e}: label {l} is not one perflab sets"
            );
        }
    }
    let unused: Vec<&String> = known.difference(&used).collect();
    assert!(
        unused.iter().all(|s| s.ends_with("run_finished")),
        "no panel shows {unused:?}"
    );
}

#[test]
fn the_dashboards_expression_reader_finds_names_and_labels() {
    let (s, l) =
        names_in(r#"max by (step) (perflab_step_passed{run="$run",role!="x"}) + perflab_vus"#);
    assert_eq!(s, ["perflab_step_passed", "perflab_vus"]);
    assert_eq!(l, ["run", "role"]);
}
