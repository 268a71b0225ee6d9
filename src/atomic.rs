//! Atomic file writes: a temp file beside the target (an unpredictable name, created
//! exclusively, never through a symlink), fsync, rename; and the directories below an output
//! root, never through a symlink. Used by every writer of run directories, the pages and the
//! lab's log collection.
use anyhow::Context;
use serde::Serialize;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// 16 random hex digits from the kernel (a temp name no other user can predict).
fn random_suffix() -> String {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most buf.len() bytes into buf.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // Never fails for 8 bytes on Linux >= 3.17; fall back to time and pid, still with O_EXCL.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        return format!("{:x}{:x}", t, std::process::id());
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write `bytes` to `path` atomically: a new temp file in the same directory (O_EXCL |
/// O_NOFOLLOW, so a planted file or link is never written through), fsync, rename. A device,
/// FIFO or socket at `path` is never replaced (an error); a regular file replaced keeps its
/// owner (when root writes it) and is not this process's to hand to a sudo user: only a path
/// that did not exist is noted as created.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, true)
}

/// [`write_atomic`] of a file that must not exist: the rename fails (AlreadyExists) when
/// anything appeared at `path` since it was checked (`renameat2(RENAME_NOREPLACE)`).
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, bytes, false)
}

fn write_with(path: &Path, bytes: &[u8], replace: bool) -> std::io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old = std::fs::symlink_metadata(path).ok();
    if let Some(t) = old.as_ref().map(|m| m.file_type())
        && (t.is_fifo() || t.is_char_device() || t.is_block_device() || t.is_socket())
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not a regular file: never replaced", path.display()),
        ));
    }
    let tmp = dir.join(format!(".{name}.tmp-{}", random_suffix()));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(bytes)?;
        keep_owner(&f, old.as_ref());
        f.sync_all()?;
    }
    let renamed = if replace {
        std::fs::rename(&tmp, path)
    } else {
        rename_noreplace(&tmp, path)
    };
    renamed.inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })?;
    if !old.is_some_and(|m| m.is_file()) {
        note_created(path);
    }
    Ok(())
}

/// The new file takes the owner of the regular file it replaces, when root writes it (a file
/// of the sudo user's stays theirs, a root-owned one root's).
fn keep_owner(f: &std::fs::File, old: Option<&std::fs::Metadata>) {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if let Some(m) = old.filter(|m| root && m.is_file()) {
        let _ = std::os::unix::fs::fchown(f, Some(m.uid()), Some(m.gid()));
    }
}

/// rename(2) that never replaces what is at `to`.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
    };
    let (a, b) = (c(from)?, c(to)?);
    // SAFETY: a and b are NUL-terminated paths; AT_FDCWD resolves them as rename(2) would.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// What this process wrote, to hand to the user who invoked it through sudo at exit.
static CREATED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Remember a file or folder this process created (a run directory: all of it).
pub(crate) fn note_created(path: &Path) {
    if let Ok(mut v) = CREATED.lock() {
        v.push(path.to_path_buf());
    }
}

/// The uid and gid of the user behind `sudo`, when root runs perflab through it.
pub(crate) fn sudo_ids() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let id = |k: &str| std::env::var(k).ok()?.parse::<u32>().ok();
    Some((id("SUDO_UID")?, id("SUDO_GID")?)).filter(|(u, _)| *u != 0)
}

/// Give everything this process wrote (run directories whole, pages, the index) to the user
/// who ran `sudo perflab ...`, so a workshop participant's `--out ~/runs` stays theirs, not
/// root's. Never follows a link (lchown); does nothing outside sudo. Returns how many paths.
pub(crate) fn hand_to_invoker() -> usize {
    let Some((uid, gid)) = sudo_ids() else {
        return 0;
    };
    let paths = CREATED.lock().map(|v| v.clone()).unwrap_or_default();
    let mut n = 0;
    for p in paths {
        n += chown_tree(&p, uid, gid);
    }
    n
}

/// lchown `path` and, for a real directory, everything below it.
fn chown_tree(path: &Path, uid: u32, gid: u32) -> usize {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return 0;
    };
    // SAFETY: c is a NUL-terminated path; lchown does not follow a final symlink.
    if unsafe { libc::lchown(c.as_ptr(), uid, gid) } != 0 {
        return 0;
    }
    let is_dir = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir());
    let below = is_dir
        .then(|| std::fs::read_dir(path).ok())
        .flatten()
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| chown_tree(&e.path(), uid, gid))
        .sum::<usize>();
    1 + below
}

/// `root/dirs[0]/dirs[1]/...`, each level created when missing, for files written below an
/// output root (`out/compare/<experiment>/`). A level that is a symbolic link (wherever it
/// points) or not a directory is refused as invalid input naming it and the fix: writing
/// through it could put files outside `root`. `root` itself may be a link, and is created
/// when missing.
pub(crate) fn create_dirs_under(root: &Path, dirs: &[&str]) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
    let mut at = root.to_path_buf();
    for d in dirs {
        at.push(d);
        match std::fs::create_dir(&at) {
            Ok(()) => {
                note_created(&at);
                continue;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("creating {}", at.display())),
        }
        refuse_link(root, &at)?;
    }
    Ok(at)
}

/// [`create_dirs_under`]'s check alone, creating nothing: each level of `root/dirs...` that
/// exists must be a real directory (a run checks `out/<experiment>/` before anything starts,
/// and an interrupted or refused run leaves no folder behind).
pub(crate) fn check_dirs_under(root: &Path, dirs: &[&str]) -> anyhow::Result<()> {
    let mut at = root.to_path_buf();
    for d in dirs {
        at.push(d);
        if std::fs::symlink_metadata(&at).is_err() {
            return Ok(());
        }
        refuse_link(root, &at)?;
    }
    Ok(())
}

/// `at` (below `root`) is a symbolic link or not a directory: invalid input naming the fix.
fn refuse_link(root: &Path, at: &Path) -> anyhow::Result<()> {
    let refuse = |what: String| {
        crate::error::invalid(format!(
            "{}: {what}; perflab writes below {} only through real directories, never \
             through a link (remove it: `rm {}`, then run the command again)",
            at.display(),
            root.display(),
            at.display()
        ))
    };
    let m = std::fs::symlink_metadata(at).with_context(|| format!("reading {}", at.display()))?;
    if m.file_type().is_symlink() {
        let to = std::fs::read_link(at).unwrap_or_default();
        return Err(refuse(format!("a symbolic link (to {})", to.display())));
    }
    if !m.is_dir() {
        return Err(refuse("not a directory".into()));
    }
    Ok(())
}

/// JSON (pretty, newline-terminated) written atomically.
pub(crate) fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    write_atomic(path, &bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn temp_names_are_unpredictable() {
        assert_ne!(random_suffix(), random_suffix());
        assert_eq!(random_suffix().len(), 16);
    }

    #[test]
    fn output_dirs_are_made_and_links_among_them_refused() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("out");
        std::fs::create_dir(&root).unwrap();
        let made = create_dirs_under(&root, &["compare", "2a"]).unwrap();
        assert!(made.is_dir() && made.ends_with("compare/2a"));
        assert_eq!(create_dirs_under(&root, &["compare", "2a"]).unwrap(), made);
        std::fs::remove_dir_all(root.join("compare")).unwrap();
        let away = d.path().join("elsewhere");
        std::fs::create_dir(&away).unwrap();
        std::os::unix::fs::symlink(&away, root.join("compare")).unwrap();
        let e = create_dirs_under(&root, &["compare", "2a"]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(
            msg.contains("compare: a symbolic link (to ") && msg.contains("rm "),
            "{msg}"
        );
        assert_eq!(crate::error::exit_code_for(&e), crate::error::EXIT_INVALID);
        assert!(
            std::fs::read_dir(&away).unwrap().next().is_none(),
            "written through"
        );
        std::fs::remove_file(root.join("compare")).unwrap();
        std::fs::write(root.join("compare"), "").unwrap();
        let e = create_dirs_under(&root, &["compare"]).unwrap_err();
        assert!(format!("{e:#}").contains("not a directory"));
    }

    fn created(p: &Path) -> bool {
        CREATED.lock().unwrap().iter().any(|c| c == p)
    }

    #[test]
    fn a_fifo_is_never_replaced_and_a_new_file_never_replaces() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("fifo");
        crate::rundir::read::mkfifo(&p);
        assert!(write_atomic(&p, b"x").is_err());
        use std::os::unix::fs::FileTypeExt;
        assert!(std::fs::symlink_metadata(&p).unwrap().file_type().is_fifo());
        let f = d.path().join("f");
        write_new(&f, b"one").unwrap();
        assert!(created(&f));
        let e = write_new(&f, b"two").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            2,
            "a temp left"
        );
    }

    /// The sudo case of issue 38: a file that was there is not perflab's to give away.
    #[test]
    fn a_replaced_file_keeps_its_owner_and_is_not_handed_on() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("page.html");
        std::fs::write(&p, "old").unwrap();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        if root {
            std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
        }
        let before = std::fs::metadata(&p).unwrap();
        write_atomic(&p, b"new").unwrap();
        let after = std::fs::metadata(&p).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        assert!(!created(&p), "a replaced file was noted as created");
    }

    #[test]
    fn a_symlink_replaced_is_never_written_through() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let p = d.path().join("link");
        std::os::unix::fs::symlink(&target, &p).unwrap();
        write_atomic(&p, b"new").unwrap();
        // the link itself is replaced by a regular file; its target is untouched
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
        assert!(
            !std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}
