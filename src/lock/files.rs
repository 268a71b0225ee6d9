//! The files beside the lock: the shared folders of the holders' records and of the queue,
//! and their small files, opened without following a link.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// `<lock>.<what>`: a folder beside the lock (its queue, its holders' records).
pub(crate) fn beside(lock: &Path, what: &str) -> PathBuf {
    let mut name = lock
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "perflab.lock".into());
    name.push(".");
    name.push(what);
    lock.with_file_name(name)
}

/// The folder `dir` beside the lock when it is a real directory (never a link). With `create`,
/// it is made when missing, shared by every user of the host and sticky (1777 whatever the
/// umask: each user writes their own files there and nobody can remove or replace another's);
/// one of ours left without the sticky bit (an older perflab's 0777) is made sticky.
pub(crate) fn shared_dir(dir: &Path, create: bool) -> Option<PathBuf> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let sticky = || std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o1777));
    if create {
        match std::fs::create_dir(dir) {
            Ok(()) => {
                let _ = sticky();
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(_) => return None,
        }
    }
    let m = std::fs::symlink_metadata(dir).ok()?;
    if !m.is_dir() {
        return None;
    }
    if create && m.mode() & 0o1000 == 0 && m.uid() == unsafe { libc::geteuid() } {
        let _ = sticky();
    }
    Some(dir.to_path_buf())
}

/// A small file of a shared folder and its owner (uid): a regular file (never through a link,
/// never a FIFO), at most 4 KiB.
pub(crate) fn read_small(path: &Path) -> Option<(Vec<u8>, u32)> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let f = open_ro(path).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() {
        return None;
    }
    let mut buf = Vec::new();
    f.take(4096).read_to_end(&mut buf).ok()?;
    Some((buf, m.uid()))
}

/// Open `path` read-only without following a symlink (a FIFO is never waited on).
pub(super) fn open_ro(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
}

/// Open the lock file read-only when it is a regular file (for a look at it: `holding`).
pub(crate) fn open_read(path: &Path) -> std::io::Result<File> {
    let f = open_ro(path)?;
    match f.metadata()?.is_file() {
        true => Ok(f),
        false => Err(std::io::Error::other("not a regular file")),
    }
}
