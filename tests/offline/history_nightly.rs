//! The nightly recipe of docs/history.md as far as a test can take it: the systemd units
//! validate with `systemd-analyze verify` (the service's paths pointed at this checkout), a
//! unit made wrong fails it, and the script and the CI job run what the docs say.
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn verify(dir: &Path, units: &[&str]) -> std::process::Output {
    Command::new("systemd-analyze")
        .arg("verify")
        .args(units.iter().map(|u| dir.join(u)))
        .output()
        .unwrap()
}

#[test]
fn the_timer_and_service_validate_with_systemd_analyze() {
    let nightly = Path::new(ROOT).join("docs/nightly");
    let service = std::fs::read_to_string(nightly.join("perflab-nightly.service")).unwrap();
    let timer = std::fs::read_to_string(nightly.join("perflab-nightly.timer")).unwrap();
    assert!(service.contains("ExecStart=/opt/perflab/docs/nightly/nightly.sh"));
    if Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .is_err()
    {
        println!(
            "skipped: systemd-analyze is not installed (scripts/test-prereqs.sh installs systemd)"
        );
        return;
    }
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("perflab-nightly.service"),
        service.replace("/opt/perflab", ROOT),
    )
    .unwrap();
    std::fs::write(t.path().join("perflab-nightly.timer"), &timer).unwrap();
    let ok = verify(
        t.path(),
        &["perflab-nightly.service", "perflab-nightly.timer"],
    );
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // the check can fail: a calendar systemd cannot read
    std::fs::write(
        t.path().join("perflab-nightly.timer"),
        timer.replace("*-*-* 02:00:00", "every night"),
    )
    .unwrap();
    let bad = verify(t.path(), &["perflab-nightly.timer"]);
    assert!(!bad.status.success(), "a bad OnCalendar passed");
}

#[test]
fn the_script_the_cron_line_and_the_ci_job_run_the_three_steps() {
    let script = std::fs::read_to_string(Path::new(ROOT).join("docs/nightly/nightly.sh")).unwrap();
    for step in [
        "\"$perflab\" build --suite \"$suite\" --refresh",
        "\"$perflab\" run \"$target\"",
        "history \"$target\" --suite \"$suite\" --out \"$out\" --pages --check",
    ] {
        assert!(script.contains(step), "nightly.sh lacks {step}");
    }
    // new packages come in by `--refresh`, not by deleting the suite's images
    assert!(
        !script.contains("image rm"),
        "nightly.sh still deletes images"
    );
    let ci = std::fs::read_to_string(Path::new(ROOT).join("docs/ci/history.yml")).unwrap();
    assert!(ci.contains("run: docs/nightly/nightly.sh"));
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/history.md")).unwrap();
    assert!(
        doc.contains("docs/nightly/nightly.sh"),
        "the cron line runs the script"
    );
    // the flags the script gives exist
    let help = Command::new(env!("CARGO_BIN_EXE_perflab"))
        .args(["history", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for f in ["--suite", "--out", "--pages", "--check"] {
        assert!(help.contains(f), "history --help lacks {f}");
    }
    let bash = Command::new("bash")
        .arg("-n")
        .arg(Path::new(ROOT).join("docs/nightly/nightly.sh"))
        .status()
        .unwrap();
    assert!(bash.success(), "nightly.sh does not parse");
}
