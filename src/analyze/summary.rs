//! k6's end-of-test summary (`--summary-export` JSON): per-step sub-metrics and the SLO written
//! in the per-step thresholds.
use serde_json::Value;
use std::collections::BTreeMap;

/// The figures k6 printed for one step's sub-metrics.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SummaryStep {
    pub count: Option<u64>,
    pub med_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub failed_rate: Option<f64>,
    /// `p(95)<N` on the step's `http_req_duration` sub-metric.
    pub slo_p95_ms: Option<f64>,
    pub slo_p99_ms: Option<f64>,
}

/// What the analysis uses from a k6 summary export.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct K6Summary {
    /// Keyed by the tag value (`r0150`, `04_rps150`).
    pub steps: BTreeMap<String, SummaryStep>,
    pub dropped_iterations: Option<u64>,
    pub vus_max: Option<f64>,
    pub http_reqs: Option<u64>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SummaryError {
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no `metrics` object: is this k6's `--summary-export` output?")]
    NoMetrics,
}

impl K6Summary {
    /// SLOs found on the per-step thresholds (the first step that has one).
    pub fn slo_p95_ms(&self) -> Option<f64> {
        self.steps.values().find_map(|s| s.slo_p95_ms)
    }
    pub(crate) fn slo_p99_ms(&self) -> Option<f64> {
        self.steps.values().find_map(|s| s.slo_p99_ms)
    }
}

/// Parse the JSON text of `--summary-export`.
pub(crate) fn parse_summary(text: &str) -> Result<K6Summary, SummaryError> {
    let v: Value = serde_json::from_str(text)?;
    let metrics = v
        .get("metrics")
        .and_then(Value::as_object)
        .ok_or(SummaryError::NoMetrics)?;
    let mut out = K6Summary::default();
    for (key, m) in metrics {
        let num = |k: &str| m.get(k).and_then(Value::as_f64);
        match key.as_str() {
            "dropped_iterations" => out.dropped_iterations = num("count").map(|c| c as u64),
            "vus_max" => out.vus_max = num("max"),
            "http_reqs" => out.http_reqs = num("count").map(|c| c as u64),
            _ => {}
        }
        let Some((metric, tag)) = split_submetric(key) else {
            continue;
        };
        let Some((tk, tv)) = tag.split_once(':') else {
            continue;
        };
        if tk != "stage" && tk != "step" {
            continue;
        }
        let s = out.steps.entry(tv.to_string()).or_default();
        match metric {
            "http_req_duration" => {
                s.med_ms = num("med");
                s.p95_ms = num("p(95)");
                s.p99_ms = num("p(99)");
                s.max_ms = num("max");
                if let Some(c) = num("count") {
                    s.count = Some(c as u64);
                }
                if let Some(th) = m.get("thresholds").and_then(Value::as_object) {
                    for expr in th.keys() {
                        if let Some(n) = threshold_value(expr, "p(95)<") {
                            s.slo_p95_ms = Some(n);
                        }
                        if let Some(n) = threshold_value(expr, "p(99)<") {
                            s.slo_p99_ms = Some(n);
                        }
                    }
                }
            }
            "http_req_failed" => {
                let (p, f) = (num("passes").unwrap_or(0.0), num("fails").unwrap_or(0.0));
                // k6's Rate: "passes" are the samples whose value is true (= failed requests).
                s.failed_rate = num("value").or(if p + f > 0.0 { Some(p / (p + f)) } else { None });
            }
            "http_reqs" => {
                if let Some(c) = num("count") {
                    s.count = Some(c as u64);
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

fn split_submetric(key: &str) -> Option<(&str, &str)> {
    let (m, rest) = key.split_once('{')?;
    Some((m, rest.strip_suffix('}')?))
}

fn threshold_value(expr: &str, prefix: &str) -> Option<f64> {
    let e: String = expr.chars().filter(|c| !c.is_whitespace()).collect();
    e.strip_prefix(prefix)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_step_submetrics_and_slo() {
        let j = r#"{"metrics":{
          "http_req_duration{stage:r0050}":{"avg":1,"med":42.3,"p(95)":46.7,"p(99)":49.7,"max":51.7,"count":148,"thresholds":{"p(95)<200":false}},
          "http_req_failed{stage:r0050}":{"passes":3,"fails":97,"value":0.03},
          "http_reqs{stage:r0050}":{"count":148,"rate":24.4},
          "dropped_iterations":{"count":7,"rate":1.0},
          "vus_max":{"max":600,"min":600,"value":600}}}"#;
        let s = parse_summary(j).unwrap();
        let st = &s.steps["r0050"];
        assert_eq!(st.count, Some(148));
        assert_eq!(st.slo_p95_ms, Some(200.0));
        assert_eq!(st.failed_rate, Some(0.03));
        assert_eq!(s.dropped_iterations, Some(7));
        assert_eq!(s.slo_p95_ms(), Some(200.0));
    }

    #[test]
    fn rejects_other_json() {
        assert!(matches!(parse_summary("{}"), Err(SummaryError::NoMetrics)));
    }
}
