//! `perflab build`: each suite's images built (or found: content-addressed tags), with the
//! estimate of what is missing first and Ctrl-C removing the build's containers, and printed.
use anyhow::Result;
use std::process::ExitCode;

use crate::docker::Docker;
use crate::images::{self, ImageRefresh, ImageSet, Refresh, Suite, build_progress};
use crate::run::lifecycle::{interrupted_or, runtime};
use crate::run::outline::duration;
use crate::session::signals::Interrupt;

/// `perflab build --suite SUITE|all [--refresh]`: each suite's images in turn, printed as a
/// table (or, with `json`, every set as JSON at the end; with `refresh`, `{images, refresh}`,
/// what the refresh did to each image); 130 when interrupted.
pub(crate) fn build(suite: &str, json: bool, quiet: bool, refresh: bool) -> Result<ExitCode> {
    let suites: Vec<Suite> = match suite {
        "all" => Suite::ALL.to_vec(),
        s => vec![s.parse()?],
    };
    let mut sets = Vec::new();
    for suite in suites {
        match self::suite(suite, quiet, refresh)? {
            Ok(b) if json && refresh => sets.push(serde_json::json!({
                "images": b.set,
                "refresh": b.refresh,
            })),
            Ok(b) if json => sets.push(serde_json::to_value(b.set)?),
            Ok(b) => {
                crate::output::emit(&table(&b.set));
                if refresh {
                    crate::output::emit(&refresh_table(&b.refresh));
                }
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

/// A suite's images, what `--refresh` did to each, and how long it took to have them.
struct Built {
    set: ImageSet,
    refresh: Vec<ImageRefresh>,
    seconds: f64,
}

/// Build (or find, or refresh) one suite's images; `Err(code)` when interrupted.
fn suite(suite: Suite, quiet: bool, refresh: bool) -> Result<std::result::Result<Built, ExitCode>> {
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
        let done = if refresh {
            images::refresh_until(&docker, suite, &mut progress, &interrupt).await
        } else {
            images::ensure_built_until(&docker, suite, &mut progress, &interrupt)
                .await
                .map(|set| (set, Vec::new()))
        };
        match done {
            Ok((set, refresh)) => Ok(Ok(Built {
                set,
                refresh,
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

/// One line per image: up to date, built, or refreshed with the recorded versions that changed
/// and apt's upgrades (old -> new; the first 8).
fn refresh_table(report: &[ImageRefresh]) -> String {
    let mut out = String::new();
    for r in report {
        let what = match &r.refresh {
            Refresh::UpToDate => "up to date".to_string(),
            Refresh::Built => "built (was missing)".to_string(),
            Refresh::Refreshed { upgrades, changes } => {
                let moved: Vec<String> = changes
                    .iter()
                    .map(|(k, (a, b))| format!("{k} {a} -> {b}"))
                    .collect();
                let mut packages: Vec<String> = upgrades
                    .iter()
                    .take(8)
                    .map(|u| format!("{} {} -> {}", u.package, u.old, u.new))
                    .collect();
                if upgrades.len() > 8 {
                    packages.push(format!("and {} more", upgrades.len() - 8));
                }
                format!(
                    "refreshed: recorded versions: {}; {} newer packages: {}",
                    if moved.is_empty() {
                        "none moved".to_string()
                    } else {
                        moved.join(", ")
                    },
                    upgrades.len(),
                    packages.join(", ")
                )
            }
        };
        out.push_str(&format!("{:<9} {what}\n", r.image));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::images::Upgrade;

    #[test]
    fn refresh_lines_name_the_state_the_moved_versions_and_the_packages() {
        let upgrades: Vec<Upgrade> = (0..10)
            .map(|i| Upgrade {
                package: format!("lib{i}"),
                old: "1.0".into(),
                new: "1.1".into(),
            })
            .collect();
        let changes = [("php".to_string(), ("8.4.27".into(), "8.4.28".into()))].into();
        let img = |image: &str, refresh| ImageRefresh {
            image: image.into(),
            tag: format!("perflab/{image}:trixie-0"),
            id: "sha256:0".into(),
            refresh,
        };
        let text = refresh_table(&[
            img("pg", Refresh::UpToDate),
            img("k6", Refresh::Built),
            img("php-fpm", Refresh::Refreshed { upgrades, changes }),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "pg        up to date");
        assert_eq!(lines[1], "k6        built (was missing)");
        assert!(lines[2].starts_with("php-fpm   refreshed: recorded versions: php 8.4.27 -> 8.4.28; 10 newer packages: lib0 1.0 -> 1.1,"), "{}", lines[2]);
        assert!(
            lines[2].ends_with("lib7 1.0 -> 1.1, and 2 more"),
            "{}",
            lines[2]
        );
    }
}
