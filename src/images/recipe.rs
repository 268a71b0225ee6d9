//! Image recipes: which files make up each role's build context, and the content hash that
//! names its tag (recipe files + suite + parent tag), so an unchanged recipe is never rebuilt.
use super::suite::Suite;
use crate::lab::Role;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// One file of a build context: its path inside the context and its bytes.
#[derive(Debug, Clone)]
pub(crate) struct ContextFile {
    pub path: String,
    pub data: Vec<u8>,
    pub mode: u32,
}

/// The repository root: `PERFLAB_ROOT`, else the first ancestor of the current directory
/// holding `images/base/Dockerfile`, else the crate directory this binary was built from.
pub(crate) fn repo_root() -> PathBuf {
    if let Some(r) = std::env::var_os("PERFLAB_ROOT") {
        return PathBuf::from(r);
    }
    if let Ok(cwd) = std::env::current_dir() {
        for a in cwd.ancestors() {
            if a.join("images/base/Dockerfile").is_file() {
                return a.to_path_buf();
            }
        }
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `(source dir relative to the repo root, prefix inside the context)` for a role.
fn sources(role: Role) -> Vec<(String, String)> {
    let mut v = vec![(format!("images/{}", role.image_name()), String::new())];
    let assets = crate::experiment::Lab::ALL
        .into_iter()
        .flat_map(|lab| crate::lab::descriptor(lab).info().assets)
        .filter(|a| a.image.image_name() == role.image_name());
    v.extend(assets.map(|a| (a.dir.to_string(), a.prefix.to_string())));
    v
}

/// Read every recipe file of `role`, sorted by context path.
pub(crate) fn context_files(root: &Path, role: Role) -> std::io::Result<Vec<ContextFile>> {
    let mut out = Vec::new();
    for (dir, prefix) in sources(role) {
        let base = root.join(&dir);
        if !base.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "recipe directory {} is missing; run perflab from the repository (or set PERFLAB_ROOT)",
                    base.display()
                ),
            ));
        }
        walk(&base, &base, &prefix, &mut out)?;
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

fn walk(base: &Path, dir: &Path, prefix: &str, out: &mut Vec<ContextFile>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let ft = e.file_type()?;
        if ft.is_dir() {
            walk(base, &p, prefix, out)?;
        } else if ft.is_file() {
            use std::os::unix::fs::PermissionsExt;
            let rel = p
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let mode = if e.metadata()?.permissions().mode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            out.push(ContextFile {
                path: format!("{prefix}{rel}"),
                data: std::fs::read(&p)?,
                mode,
            });
        }
    }
    Ok(())
}

/// Content hash of a recipe: format version, role, suite, parent tag, then every file.
pub(crate) fn recipe_hash(
    role: Role,
    suite: Suite,
    parent: Option<&str>,
    files: &[ContextFile],
) -> String {
    let mut h = Sha256::new();
    h.update(b"perflab-image-v1\0");
    h.update(role.image_name().as_bytes());
    h.update(b"\0");
    h.update(suite.as_str().as_bytes());
    h.update(b"\0");
    h.update(parent.unwrap_or("").as_bytes());
    h.update(b"\0");
    for f in files {
        h.update(f.path.as_bytes());
        h.update(b"\0");
        h.update(f.mode.to_le_bytes());
        h.update((f.data.len() as u64).to_le_bytes());
        h.update(&f.data);
    }
    hex::encode(h.finalize())
}

/// The tag of a role image: `perflab/<role>:<suite>-<first 12 hex of the recipe hash>`.
pub(crate) fn tag_for(role: Role, suite: Suite, hash: &str) -> String {
    format!(
        "perflab/{}:{}-{}",
        role.image_name(),
        suite.as_str(),
        &hash[..12]
    )
}

/// Tar a build context.
pub(crate) fn tar_context(
    files: &[ContextFile],
    extra: Option<(&str, &Path)>,
) -> std::io::Result<Vec<u8>> {
    let mut b = tar::Builder::new(Vec::new());
    for f in files {
        let mut hd = tar::Header::new_gnu();
        hd.set_size(f.data.len() as u64);
        hd.set_mode(f.mode);
        hd.set_mtime(0);
        hd.set_cksum();
        b.append_data(&mut hd, &f.path, f.data.as_slice())?;
    }
    if let Some((name, path)) = extra {
        b.append_path_with_name(path, name)?;
    }
    b.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, data: &str) -> ContextFile {
        ContextFile {
            path: path.into(),
            data: data.as_bytes().to_vec(),
            mode: 0o644,
        }
    }

    #[test]
    fn hash_changes_with_content_suite_and_parent() {
        let a = vec![f("Dockerfile", "FROM x")];
        let b = vec![f("Dockerfile", "FROM y")];
        let h = recipe_hash(Role::PG, Suite::Trixie, Some("p:1"), &a);
        assert_eq!(h, recipe_hash(Role::PG, Suite::Trixie, Some("p:1"), &a));
        assert_ne!(h, recipe_hash(Role::PG, Suite::Trixie, Some("p:1"), &b));
        assert_ne!(h, recipe_hash(Role::PG, Suite::Forky, Some("p:1"), &a));
        assert_ne!(h, recipe_hash(Role::PG, Suite::Trixie, Some("p:2"), &a));
        assert_ne!(
            h,
            recipe_hash(
                Role::named("nginx").unwrap(),
                Suite::Trixie,
                Some("p:1"),
                &a
            )
        );
        assert!(tag_for(Role::PG, Suite::Trixie, &h).starts_with("perflab/pg:trixie-"));
    }

    #[test]
    fn repo_recipes_are_found() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        for role in Role::images() {
            let files = context_files(&root, role).unwrap();
            assert!(files.iter().any(|f| f.path == "Dockerfile"), "{role:?}");
        }
        let php = context_files(&root, Role::named("fpm").unwrap()).unwrap();
        assert!(php.iter().any(|f| f.path == "app/routes/api.php"));
        let node = context_files(&root, Role::named("app").unwrap()).unwrap();
        assert!(node.iter().any(|f| f.path == "node/server.js"));
        assert!(node.iter().any(|f| f.path == "demo/server.js"));
    }
}
