//! Shared hosts, bad input: a stack on this machine is never published on every interface.
use assert_cmd::Command;
use predicates::prelude::*;

#[test]
fn publish_on_any_address_for_a_local_stack_is_refused_before_anything_starts() {
    let _serial = crate::serial();
    for any in ["0.0.0.0", "::"] {
        let out = tempfile::tempdir().unwrap();
        Command::cargo_bin("perflab")
            .unwrap()
            .env("PERFLAB_LOCK", out.path().join("lock"))
            .args(["run", "demo-open", "--quick", "--publish-on", any, "--out"])
            .arg(out.path().join("runs"))
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!(
                    "--publish-on {any}: the stack runs on this machine"
                ))
                .and(predicate::str::contains("--publish-on 10.0.0.4")),
            );
        // Nothing started: no run directory, the lock never taken.
        assert!(!out.path().join("runs").exists());
        assert!(!out.path().join("lock").exists());
    }
}

/// `perflab up demo` as workshop participant `user` (root through sudo: `SUDO_USER`); returns
/// the run id it printed.
fn up_as(user: &str, lock: &std::path::Path) -> String {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .env("PERFLAB_LOCK", lock)
        .env("SUDO_USER", user)
        .args(["up", "demo", "-q"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    text.lines()
        .find_map(|l| l.trim().strip_prefix("stop it with: perflab down "))
        .unwrap_or_else(|| panic!("no run id in {text}"))
        .trim()
        .to_string()
}

/// The containers of a run, by its label.
fn containers_of(run_id: &str) -> usize {
    let out = std::process::Command::new("docker")
        .args(["ps", "-aq", "--filter"])
        .arg(format!("label=perflab.run={run_id}"))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// A workshop host, for real: two participants each keep an `up` stack; one participant's
/// `down` and `cleanup` leave the other's stack running (its owner label names its user), the
/// other's `down` removes it, and `--all` is what it takes to remove someone else's.
#[test]
fn one_users_down_leaves_another_users_stack() {
    let _serial = crate::serial();
    if !std::path::Path::new("/var/run/docker.sock").exists() {
        panic!("this test needs the Docker engine");
    }
    let tmp = tempfile::tempdir().unwrap();
    let lock = tmp.path().join("lock");
    let (alice, bob) = (up_as("alice", &lock), up_as("bob", &lock));
    assert!(containers_of(&alice) > 0 && containers_of(&bob) > 0);
    let as_user = |user: &str, args: &[&str]| {
        let o = Command::cargo_bin("perflab")
            .unwrap()
            .env("PERFLAB_LOCK", &lock)
            .env("SUDO_USER", user)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let said = as_user("alice", &["down"]);
    assert!(said.contains(&format!("removed {alice}")), "{said}");
    assert_eq!(containers_of(&alice), 0);
    assert!(
        containers_of(&bob) > 0,
        "alice's down removed bob's stack: {said}"
    );
    // naming bob's stack, or a cleanup, still leaves it, and says why
    let said = as_user("alice", &["down", &bob]);
    assert!(said.contains("of bob's stack; left in place"), "{said}");
    as_user("alice", &["cleanup"]);
    assert!(containers_of(&bob) > 0);
    // bob's own down removes it (and --all would have)
    let said = as_user("bob", &["down"]);
    assert!(said.contains(&format!("removed {bob}")), "{said}");
    assert_eq!(containers_of(&bob), 0);
}

/// `sudo perflab index --out DIR` (root with SUDO_UID/SUDO_GID): what it wrote belongs to the
/// participant who ran sudo, not to root; without sudo's variables it stays root's.
#[test]
fn what_sudo_perflab_writes_belongs_to_the_invoking_user() {
    let _serial = crate::serial();
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: sudo's hand-over cannot be exercised here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("runs");
    let plain = tmp.path().join("plain");
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&plain).unwrap();
    Command::cargo_bin("perflab")
        .unwrap()
        .env("SUDO_UID", "4242")
        .env("SUDO_GID", "4343")
        .args(["index", "--out"])
        .arg(&out)
        .assert()
        .success();
    let m = std::fs::symlink_metadata(out.join("index.html")).unwrap();
    assert_eq!((m.uid(), m.gid()), (4242, 4343));
    // the folder was there before: not perflab's to give away
    assert_eq!(std::fs::metadata(&out).unwrap().uid(), 0);
    Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("SUDO_UID")
        .args(["index", "--out"])
        .arg(&plain)
        .assert()
        .success();
    assert_eq!(
        std::fs::metadata(plain.join("index.html")).unwrap().uid(),
        0
    );
}
