//! `perflab export k8s`: the manifests validate offline (the TestRun against k6-operator's
//! vendored schema with additionalProperties: false, the rest with kubernetes-validate
//! --strict), a broken one is refused, CPUs are whole and requests equal limits, bad input
//! exits 2 writing nothing. Needs scripts/prereqs-scaleout.sh's validators (about 3 s).
use std::path::Path;
use std::process::Command;

fn perflab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perflab"))
}

fn validate(dir: &Path) -> (bool, String) {
    let o = Command::new("bash")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/validate-k8s.sh"
        ))
        .arg(dir)
        .output()
        .expect(
            "scripts/validate-k8s.sh runs (scripts/prereqs-scaleout.sh installs its validators)",
        );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), text)
}

fn yaml(path: &Path) -> serde_yaml::Value {
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn export(exp: &str, dir: &Path, extra: &[&str]) -> std::process::Output {
    perflab()
        .args(["export", "k8s", exp, "--dir"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn exported_manifests_validate_and_a_broken_one_is_refused() {
    let t = tempfile::tempdir().unwrap();
    for (exp, labs) in [("exp1", 2), ("demo-open", 1), ("1a", 2)] {
        let dir = t.path().join(exp);
        let o = export(
            exp,
            &dir,
            &["--generators", "3", "--k8s-cpus", "loadgen=2,db=1,app=4"],
        );
        assert!(
            o.status.success(),
            "{exp}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (ok, why) = validate(&dir);
        assert!(ok, "{exp}: {why}");
        let tr = yaml(&dir.join("testrun.yaml"));
        assert_eq!(tr["spec"]["parallelism"], 3);
        assert_eq!(tr["spec"]["runner"]["resources"]["requests"]["cpu"], "2");
        let jobs: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("job-"))
            .collect();
        assert_eq!(jobs.len(), labs, "{exp}: a Job per slot");
        for j in jobs {
            let y = yaml(&j);
            assert_eq!(y["spec"]["completionMode"], "Indexed");
            for c in y["spec"]["template"]["spec"]["containers"]
                .as_sequence()
                .unwrap()
            {
                let r = &c["resources"];
                assert_eq!(r["requests"], r["limits"], "{}: Guaranteed", j.display());
                let cpu = r["requests"]["cpu"].as_str().unwrap();
                assert!(
                    cpu.parse::<u32>().is_ok_and(|n| n >= 1),
                    "{cpu}: whole CPUs"
                );
            }
        }
    }
    // the script and the environment are the run's own
    let dir = t.path().join("exp1");
    let cm = yaml(&dir.join("configmap-k6-script.yaml"));
    let script =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/labs/k6/stepped.js"))
            .unwrap();
    assert_eq!(cm["data"]["stepped.js"].as_str(), Some(script.as_str()));
    // a misspelt TestRun field fails on the vendored schema; a misspelt Job field on kubernetes-validate
    for (file, from, to) in [
        ("testrun.yaml", "parallelism:", "paralelism:"),
        ("job-app.yaml", "completionMode:", "completionMod:"),
    ] {
        let broken = t.path().join(format!("broken-{file}"));
        std::fs::create_dir(&broken).unwrap();
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.contains(from));
        std::fs::write(broken.join(file), text.replace(from, to)).unwrap();
        let (ok, why) = validate(&broken);
        assert!(!ok, "{file} with {to} passed");
        assert!(why.contains(to.trim_end_matches(':')), "{why}");
    }
}

#[test]
fn bad_export_input_exits_2_and_writes_nothing() {
    let t = tempfile::tempdir().unwrap();
    let full = t.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), "x").unwrap();
    for (args, dir, want) in [
        (
            vec!["--generators", "0"],
            t.path().join("a"),
            "--generators",
        ),
        (
            vec!["--k8s-cpus", "loadgen=1,db=1,app=0.5"],
            t.path().join("b"),
            "--k8s-cpus",
        ),
        (
            vec!["--k8s-cpus", "loadgen=1,db=1"],
            t.path().join("c"),
            "missing",
        ),
        (vec!["--registry", "a b"], t.path().join("d"), "--registry"),
        (vec![], full.clone(), "not an empty folder"),
    ] {
        let o = export("exp1", &dir, &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(
            dir == full || !dir.exists(),
            "{args:?} wrote {}",
            dir.display()
        );
    }
    let o = export("php", &t.path().join("g"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&full).unwrap().count(), 1);
}
