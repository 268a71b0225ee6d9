//! `perflab build --refresh` on the built trixie images, against Debian's mirror: every image is
//! up to date (its id unchanged) or refreshed with the packages that moved; none is rebuilt
//! for nothing.
use assert_cmd::Command;
use std::collections::BTreeMap;

fn build_json(extra: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .env("NO_COLOR", "1")
        .args(["build", "--suite", "trixie", "--json", "-q"])
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "perflab build {extra:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("build --json prints JSON")
}

#[test]
fn refresh_keeps_up_to_date_images_and_rebuilds_only_moved_ones() {
    let _serial = crate::serial();
    // the images as they are (built first when missing: the refresh then has nothing to build)
    let before: BTreeMap<String, String> = build_json(&[])["images"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["id"].as_str().unwrap().to_string()))
        .collect();
    assert!(before.len() >= 6, "{before:?}");
    let t0 = std::time::Instant::now();
    let after = build_json(&["--refresh"]);
    let seconds = t0.elapsed().as_secs_f64();
    let report = after["refresh"].as_array().unwrap();
    assert_eq!(report.len(), before.len(), "one line per image: {report:?}");
    let mut up_to_date = 0;
    for r in report {
        let image = r["image"].as_str().unwrap();
        let id = r["id"].as_str().unwrap();
        match r["state"].as_str().unwrap() {
            "up_to_date" => {
                up_to_date += 1;
                assert_eq!(id, before[image], "{image}: up to date but its id changed");
            }
            "refreshed" => {
                let upgrades = r["upgrades"].as_array().unwrap();
                assert!(
                    !upgrades.is_empty(),
                    "{image}: refreshed for no package: {r}"
                );
                assert!(upgrades.iter().all(|u| u["old"] != u["new"]), "{r}");
                assert_ne!(id, before[image], "{image}: refreshed but the same image");
            }
            other => panic!("{image}: {other} (nothing was missing): {r}"),
        }
    }
    // with nothing new in the archive, a refresh only asks: no rebuild, under a minute
    if up_to_date == report.len() {
        assert!(
            seconds < 60.0,
            "a refresh with nothing new took {seconds:.1} s"
        );
    }
}
