//! Fast (no Docker; an sshd and GNU parallel, a few seconds): `matrix run --hosts` as a user
//! types it, with relative paths from the plan's folder, starts parallel with paths that exist
//! where it runs; and the job list parallel is handed is rebuilt from the parsed plan on every
//! run, so a line appended to `<plan>.work/<id>/jobs` never runs (issue 38). The cells "run"
//! as `--perflab true`: these tests are about the runner's files, not a measurement.
use crate::matrix_support;
use matrix_support::*;
use std::path::{Path, PathBuf};

/// The plan's work folder (`<dir>/m.plan.work/<id>`).
fn work(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir.join("m.plan.work"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// `perflab matrix run PLAN --hosts HOSTS --out OUT --perflab true` in `dir`, arguments as given.
fn run_hosts(dir: &Path, plan: &Path, hosts: &Path, out: &Path, remote: &str) -> String {
    let o = perflab()
        .current_dir(dir)
        .args(["matrix", "run"])
        .arg(plan)
        .arg("--hosts")
        .arg(hosts)
        .arg("--out")
        .arg(out)
        .args(["--perflab", "true", "--remote-dir", remote])
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_ne!(o.status.code(), Some(2), "{text}");
    text
}

/// The seqs of parallel's job log (empty when it never started).
fn logged_seqs(work: &Path) -> Vec<String> {
    std::fs::read_to_string(work.join("joblog"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect()
}

#[test]
fn a_relative_plan_path_as_a_user_types_it_runs_its_jobs() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let sshd = sshd(t.path());
    std::fs::write(t.path().join("hosts"), sshd.login("127.0.0.1") + "\n").unwrap();
    plan(t.path(), 1);
    let remote = format!("perflab-matrix-jobs-{}", std::process::id());
    // `perflab matrix run m.plan --hosts hosts --out out` from the plan's folder
    let text = run_hosts(
        t.path(),
        Path::new("m.plan"),
        Path::new("hosts"),
        Path::new("out"),
        &remote,
    );
    assert_eq!(logged_seqs(&work(t.path())), ["1"], "{text}");
    let _ = std::fs::remove_dir_all(Path::new(&std::env::var("HOME").unwrap()).join(&remote));
}

#[test]
fn a_line_appended_to_the_job_list_never_runs() {
    let _serial = crate::serial();
    let t = tempfile::tempdir().unwrap();
    let sshd = sshd(t.path());
    let hosts = t.path().join("hosts");
    std::fs::write(&hosts, sshd.login("127.0.0.1") + "\n").unwrap();
    let (out, plan) = plan(t.path(), 1);
    let remote = format!("perflab-matrix-jobs-{}", std::process::id());
    let first = run_hosts(t.path(), &plan, &hosts, &out, &remote);
    let w = work(t.path());
    assert_eq!(logged_seqs(&w), ["1"], "{first}");
    let marker = t.path().join("PWNED");
    let mut jobs = std::fs::read_to_string(w.join("jobs")).unwrap();
    jobs.push_str(&format!("x\ttouch {}\n", marker.display()));
    std::fs::write(w.join("jobs"), jobs).unwrap();
    let again = run_hosts(t.path(), &plan, &hosts, &out, &remote);
    assert!(!marker.exists(), "the appended job ran:\n{again}");
    assert!(
        !std::fs::read_to_string(w.join("jobs"))
            .unwrap()
            .contains("PWNED"),
        "the job list was not rebuilt"
    );
    let _ = std::fs::remove_dir_all(Path::new(&std::env::var("HOME").unwrap()).join(&remote));
}
