//! The one rule for a path the user names on an output flag (`compare --html FILE`, `matrix
//! plan --plan FILE`, `man --dir DIR`, `export k8s --dir DIR`): perflab writes a new file, or
//! replaces a regular file the caller owns, and nothing else. A device, a FIFO, a socket, a
//! folder, a symbolic link (dangling or not) or a file owned by someone else is refused, and so
//! is any path inside a run directory (a folder holding manifest.json or status.json, or below
//! one): bad input (exit 2) naming the flag, the path and the fix. The write itself is
//! `atomic`'s (a replaced file keeps its owner; only a new one is handed to a sudo user).
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::layout::{MANIFEST_FILE, STATUS_FILE};

/// Bad input naming the flag and the path.
fn refuse(flag: &str, path: &Path, why: &str) -> anyhow::Error {
    crate::error::invalid(format!("{flag} {}: {why}", path.display()))
}

/// What a file system entry that is not a regular file is, for the message.
fn kind(t: std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a file"
    } else {
        super::read::describe(t)
    }
}

/// The uids whose files this process may replace: its own, and under sudo the invoker's.
fn mine(uid: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    uid == me || crate::atomic::sudo_ids().is_some_and(|(u, _)| u == uid)
}

/// May `path` be written as the file of `flag`? A new path, or a regular file the caller
/// owns, outside every run directory; returns whether a file is there (to replace).
pub(crate) fn check_file(flag: &str, path: &Path) -> anyhow::Result<bool> {
    let exists = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(refuse(flag, path, &format!("cannot inspect it ({e})"))),
        Ok(m) if m.file_type().is_symlink() => {
            let to = std::fs::read_link(path).unwrap_or_default();
            return Err(refuse(
                flag,
                path,
                &format!(
                    "a symbolic link (to {}); perflab writes a new file or replaces a regular \
                     file of yours, never through a link: remove the link or give another path",
                    to.display()
                ),
            ));
        }
        Ok(m) if !m.is_file() => {
            return Err(refuse(
                flag,
                path,
                &format!(
                    "{}; perflab writes a new file or replaces a regular file of yours, nothing \
                     else: give a file path",
                    kind(m.file_type())
                ),
            ));
        }
        Ok(m) if !mine(m.uid()) => {
            return Err(refuse(
                flag,
                path,
                &format!(
                    "a file of uid {}, not yours; perflab replaces only your own files: give \
                     another path",
                    m.uid()
                ),
            ));
        }
        Ok(_) => true,
    };
    outside_run_dirs(flag, path)?;
    Ok(exists)
}

/// May `dir` hold the files of `flag` (`--dir`)? Missing (it is created), or a real folder
/// (not a link to one, not a file) outside every run directory.
pub(crate) fn check_dir(flag: &str, dir: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(refuse(flag, dir, &format!("cannot inspect it ({e})"))),
        Ok(m) if m.is_dir() => {}
        Ok(m) => {
            return Err(refuse(
                flag,
                dir,
                &format!(
                    "{}, not a folder; give a folder (a new one is created), never a link or a \
                     file",
                    kind(m.file_type())
                ),
            ));
        }
    }
    outside_run_dirs(flag, &dir.join("x"))
}

/// Refused when `path` lies in a run directory (the nearest existing folder above it, as the
/// kernel resolves it, or any folder above that, holds manifest.json or status.json).
fn outside_run_dirs(flag: &str, path: &Path) -> anyhow::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let real = parent
        .ancestors()
        .find_map(|a| a.canonicalize().ok())
        .unwrap_or_default();
    for dir in real.ancestors() {
        for own in [MANIFEST_FILE, STATUS_FILE] {
            if std::fs::symlink_metadata(dir.join(own)).is_ok() {
                return Err(refuse(
                    flag,
                    path,
                    &format!(
                        "inside the run directory {} (it holds {own}); perflab never replaces \
                         a run's own files: give a path outside run directories",
                        dir.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Write `files` (name, bytes) into the folder a flag names, created if need be: every path is
/// checked before the first is written.
pub(crate) fn write_files(
    flag: &str,
    dir: &Path,
    files: &[(String, Vec<u8>)],
) -> anyhow::Result<()> {
    use anyhow::Context;
    check_dir(flag, dir)?;
    for (name, _) in files {
        check_file(flag, &dir.join(name))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, bytes) in files {
        write_file(flag, &dir.join(name), bytes)?;
    }
    Ok(())
}

/// Write `bytes` as the file of `flag` at `path` by the rule: checked (again: the check
/// before the work may be minutes old), its folder created, written atomically; a path that
/// was free must still be (the rename never replaces what appeared since).
pub(crate) fn write_file(flag: &str, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let exists = check_file(flag, path)?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| refuse(flag, path, &format!("cannot create its folder ({e})")))?;
    }
    let written = if exists {
        crate::atomic::write_atomic(path, bytes)
    } else {
        crate::atomic::write_new(path, bytes)
    };
    written.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => refuse(
            flag,
            path,
            "something appeared at this path while perflab worked; give another path",
        ),
        _ => anyhow::anyhow!("writing {}: {e}", path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: anyhow::Result<impl std::fmt::Debug>) -> String {
        let e = r.unwrap_err();
        assert_eq!(crate::error::exit_code_for(&e), crate::error::EXIT_INVALID);
        format!("{e:#}")
    }

    #[test]
    fn only_a_new_file_or_a_regular_file_of_ours() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("page.html");
        assert!(!check_file("--html", &p).unwrap());
        write_file("--html", &p, b"one").unwrap();
        assert!(check_file("--html", &p).unwrap());
        write_file("--html", &p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        // a FIFO, a folder, a link (dangling too), a device: refused, left as they were
        let fifo = d.path().join("fifo");
        crate::rundir::read::mkfifo(&fifo);
        let m = err(write_file("--plan", &fifo, b"x"));
        assert!(m.contains("--plan ") && m.contains("fifo: a FIFO"), "{m}");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(err(check_file("--html", d.path())).contains("a directory"));
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(err(write_file("--html", &dangling, b"x")).contains("a symbolic link"));
        assert!(!d.path().join("nowhere").exists());
        let m = err(check_file("--html", Path::new("/dev/null")));
        assert!(m.contains("/dev/null: a character device"), "{m}");
    }

    #[test]
    fn another_users_file_is_refused() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!(
                "another_users_file_is_refused: skipped, making a file of another uid needs root"
            );
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("theirs.html");
        std::fs::write(&p, "theirs").unwrap();
        std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
        let m = err(write_file("--html", &p, b"x"));
        assert!(m.contains("a file of uid 65534, not yours"), "{m}");
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
    }

    #[test]
    fn a_folder_by_the_same_rule() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_dir("--dir", &d.path().join("new")).is_ok());
        assert!(check_dir("--dir", d.path()).is_ok());
        let f = d.path().join("file");
        std::fs::write(&f, "").unwrap();
        assert!(err(check_dir("--dir", &f)).contains("not a folder"));
        let link = d.path().join("link");
        std::os::unix::fs::symlink(d.path(), &link).unwrap();
        assert!(err(check_dir("--dir", &link)).contains("a symbolic link"));
        let run = d.path().join("exp/20261130T035648Z-r1");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(MANIFEST_FILE), "{}").unwrap();
        assert!(err(check_dir("--dir", &run.join("k"))).contains("holds manifest.json"));
    }
}
