//! The base rootfs: `debootstrap --variant=minbase <suite>` on the host, packed as a tar for the
//! `FROM scratch` base build. Needs root and the `debootstrap` package (scripts/test.sh installs it).
use super::suite::Suite;
use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A temporary rootfs tarball, removed on drop.
pub(crate) struct Rootfs {
    dir: PathBuf,
    tar: PathBuf,
}

impl Rootfs {
    pub(crate) fn tar_path(&self) -> &Path {
        &self.tar
    }
}

impl Drop for Rootfs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Run debootstrap for `suite` into a scratch directory under `out/` and tar the result.
pub(crate) async fn debootstrap(suite: Suite, log: &mut std::fs::File) -> Result<Rootfs> {
    if which("debootstrap").is_none() {
        bail!(
            "debootstrap is not installed: run `apt-get install -y debootstrap` (scripts/test.sh does) and retry"
        );
    }
    if unsafe { libc::geteuid() } != 0 {
        bail!(
            "building the base image runs debootstrap, which needs root: run `perflab build` as root"
        );
    }
    let work = super::recipe::repo_root().join("out").join(format!(
        ".rootfs-{}-{}",
        suite,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let guard = Rootfs {
        dir: work.clone(),
        tar: work.join("rootfs.tar"),
    };
    let target = work.join("root");
    let mut cmd = tokio::process::Command::new("debootstrap");
    // An interrupted build drops this future: debootstrap must not go on alone.
    cmd.kill_on_drop(true)
        .arg("--variant=minbase")
        .arg(suite.as_str())
        .arg(&target);
    // Suites newer than the host's debootstrap (forky on bookworm) use the `sid` script with
    // debootstrap's default mirror (empty mirror argument).
    if !Path::new("/usr/share/debootstrap/scripts")
        .join(suite.as_str())
        .exists()
    {
        cmd.arg("").arg("sid");
    }
    let out = cmd.output().await.context("running debootstrap")?;
    log.write_all(&out.stdout).ok();
    log.write_all(&out.stderr).ok();
    if !out.status.success() {
        let tail: Vec<&str> = std::str::from_utf8(&out.stdout)
            .unwrap_or("")
            .lines()
            .rev()
            .take(10)
            .collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "debootstrap {suite} failed ({}):\n{}\n{}",
            out.status,
            tail.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Debian testing's Release files carry Valid-Until; a mirror snapshot older than the host
    // clock would make every `apt-get update` in the role builds fail. Stable has no expiry.
    if matches!(suite, Suite::Forky) {
        std::fs::write(
            target.join("etc/apt/apt.conf.d/80perflab-valid-until"),
            "Acquire::Check-Valid-Until \"false\";\n",
        )
        .context("writing the apt Valid-Until override into the rootfs")?;
    }
    let tar = work.join("rootfs.tar");
    let out = tokio::process::Command::new("tar")
        .kill_on_drop(true)
        .arg("--numeric-owner")
        .arg("-C")
        .arg(&target)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .output()
        .await
        .context("running tar on the rootfs")?;
    if !out.status.success() {
        bail!(
            "tar of the rootfs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&target).ok();
    Ok(guard)
}

fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}
