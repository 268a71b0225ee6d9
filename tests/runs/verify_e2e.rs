//! `perflab verify --run-missing --fit` through the real Docker engine and k6: an experiment
//! with claims but no run is run by the `perflab run` pipeline, fitted to this host (demo lab,
//! `--quick --no-align`), then its claims are evaluated on that fresh run. The run is shared
//! with the demo's fit test (`run_support::shared`), which checks the fit itself.
use crate::run_support::shared::demo_open_fitted_by_verify;

#[test]
fn run_missing_runs_then_verifies_demo_open() {
    let _serial = crate::serial();
    let run = demo_open_fitted_by_verify();
    let o = &run.output;
    let stderr = String::from_utf8_lossy(&o.stderr);
    // 0 or 1 are verdicts; 2 would be bad input, anything else a crash
    let code = o.status.code();
    assert!(matches!(code, Some(0) | Some(1)), "exit {code:?}: {stderr}");
    // stdout is the JSON alone (the run's per-round lines go to stderr)
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    assert_eq!(v["missing"].as_array().unwrap().len(), 0, "{v}");
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 2, "{v}");
    for c in claims {
        assert_eq!(c["experiment"], "demo-open");
        assert!(c["run"].as_str().unwrap().starts_with("demo-open/"));
        // measured on the fresh run, not "-" (missing data)
        assert_ne!(c["measured"], "-", "{c}");
    }
    assert_eq!(
        code == Some(0),
        claims.iter().all(|c| c["verdict"] == "pass")
    );
    // the run it made is a complete run directory
    let latest = run.out.join("demo-open/latest/status.json");
    let st: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(latest).unwrap()).unwrap();
    assert_eq!(st["state"], "complete");
}
