//! End to end through the real Docker engine: `demo-pause --quick` freezes the demo server for
//! P = 1.4 s mid-step, open then closed, and the report shows coordinated omission.
use crate::run_support;
use run_support::{json, run_quick};

#[test]
fn demo_pause_shows_coordinated_omission() {
    let _serial = crate::serial();
    let (_out, dir) = run_quick("demo-pause", &[]);
    let status = json(&dir.join("status.json"));
    assert_eq!(status["state"], "complete", "{status}");
    let r = json(&dir.join("report.json"));
    let o = &r["omission"];
    let f = |k: &str| o[k].as_f64().unwrap_or_else(|| panic!("no {k} in {o}"));
    let g = |side: &str, k: &str| {
        o[side][k]
            .as_f64()
            .unwrap_or_else(|| panic!("no {side}.{k}"))
    };
    eprintln!(
        "demo-pause --quick: D {} s, P {} s, expected p99 {:.0} ms; open p99 {:.0} ms ({} requests, {} dropped); closed p99 {:.0} ms ({} requests); corrected p99 {:.0} ms ({} requests, interval {:.1} ms); freezes {}",
        o["hold_s"],
        f("pause_s"),
        f("expected_p99_ms"),
        g("open", "p99_ms"),
        o["open"]["requests"],
        o["open"]["dropped"],
        g("closed", "p99_ms"),
        o["closed"]["requests"],
        f("corrected_p99_ms"),
        o["corrected_requests"],
        f("expected_interval_ms"),
        o["freezes"]
    );
    assert_eq!(f("pause_s"), 1.4, "--quick keeps P");
    assert!(o["hold_s"].as_u64().unwrap() < 30, "--quick scales D");
    let freezes = o["freezes"].as_array().unwrap();
    assert_eq!(freezes.len(), 2, "one freeze per load: {freezes:?}");
    for z in freezes {
        assert!(z["error"].is_null(), "{z}");
        assert!(
            z["frozen_at"].is_string() && z["thawed_at"].is_string(),
            "{z}"
        );
    }
    assert!(g("open", "p99_ms") >= 1000.0, "open p99 shows the pause");
    assert!(g("open", "dropped") > 0.0, "200 max VUs < 200 rps x 1.4 s");
    assert!(g("closed", "p99_ms") < 100.0, "closed p99 hides it");
    assert!(f("corrected_p99_ms") >= 800.0, "corrected gives it back");
    assert!(
        o["closed"]["requests"].as_u64() < o["corrected_requests"].as_u64(),
        "the correction adds the requests not sent"
    );
    let text = std::fs::read_to_string(dir.join("report.txt")).unwrap();
    assert!(text.contains("coordinated omission"), "report.txt names it");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("Coordinated omission"),
        "report.html shows it"
    );
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("closed, corrected"), "report.md has the table");
    // the app was thawed: the closed load (after the first freeze) got answers
    assert!(g("closed", "ok_per_s") > 100.0);
}
