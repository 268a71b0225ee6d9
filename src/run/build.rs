//! `perflab build`: each suite's images built (or found: content-addressed tags), with the
//! estimate of what is missing first and Ctrl-C removing the build's containers, and printed.
use anyhow::Result;
use std::process::ExitCode;

use crate::docker::Docker;
use crate::images::{self, ImageSet, Suite, build_progress};
use crate::run::lifecycle::{interrupted_or, runtime};
use crate::run::outline::duration;
use crate::session::signals::Interrupt;

/// `perflab build --suite SUITE|all`: each suite's images in turn, printed as a table (or, with
/// `json`, every set as JSON at the end); 130 when interrupted.
pub(crate) fn build(suite: &str, json: bool, quiet: bool) -> Result<ExitCode> {
    let suites: Vec<Suite> = match suite {
        "all" => Suite::ALL.to_vec(),
        s => vec![s.parse()?],
    };
    let mut sets = Vec::new();
    for suite in suites {
        match self::suite(suite, quiet)? {
            Ok(b) if json => sets.push(b.set),
            Ok(b) => {
                crate::output::emit(&table(&b.set));
                if !quiet {
                    crate::say!("images for {suite} ready in {:.1} s", b.seconds);
                }
            }
            Err(code) => return Ok(code),
        }
    }
    if json {
        match sets.as_slice() {
            [one] => crate::out!("{}", serde_json::to_string_pretty(one)?),
            all => crate::out!("{}", serde_json::to_string_pretty(all)?),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A suite's images and how long it took to have them.
struct Built {
    set: ImageSet,
    seconds: f64,
}

/// Build (or find) one suite's images; `Err(code)` when interrupted.
fn suite(suite: Suite, quiet: bool) -> Result<std::result::Result<Built, ExitCode>> {
    runtime()?.block_on(async {
        let interrupt = Interrupt::install_with("stopping the build, removing its containers")?;
        let docker = Docker::connect().await?;
        if !quiet
            && let Ok(missing) = images::missing(&docker, suite).await
            && let Some(p) = crate::run::outline::images_estimate(suite.as_str(), missing.len())
        {
            crate::say!(
                "{}: {}, about {} ({})",
                p.what,
                p.detail,
                duration(p.seconds),
                p.source
            );
        }
        let t0 = std::time::Instant::now();
        let mut progress = build_progress(quiet);
        match images::ensure_built_until(&docker, suite, &mut progress, &interrupt).await {
            Ok(set) => Ok(Ok(Built {
                set,
                seconds: t0.elapsed().as_secs_f64(),
            })),
            Err(e) => interrupted_or(e, &interrupt).map(Err),
        }
    })
}

/// One line per image: its role, tag, size and versions (the packages' own left out).
fn table(set: &ImageSet) -> String {
    let mut out = format!("{:<9} {:<40} {:>9}  versions\n", "role", "tag", "size");
    for img in set.images.values() {
        let v: Vec<String> = img
            .versions
            .iter()
            .filter(|(k, _)| !k.starts_with("dpkg:") && *k != "source")
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out.push_str(&format!(
            "{:<9} {:<40} {:>6} MB  {}\n",
            img.role.image_name(),
            img.tag,
            img.size_bytes / 1_000_000,
            v.join(", ")
        ));
    }
    out
}
