//! What every bounded read shares: the kinds of file and their caps ([`FileKind`]), the file
//! to read ([`RunFile`]), what a read refuses ([`ReadError`]) or changes ([`ReadNotes`]), and
//! opening a regular file only.
use std::borrow::Cow;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// What a file past its kind's size cap gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    /// Refused (bad input, exit 2): a whole document cut short is no document.
    Refuse,
    /// Its first bytes are read, the rest is left out (and said).
    Head,
    /// Its last bytes are read (a log's end says how the run ended), the rest left out (said).
    Tail,
    /// Streamed whatever its size, in constant memory.
    Stream,
}

/// The kinds of file a run directory holds, each with its caps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `manifest.json` (a run's or a tool's).
    Manifest,
    /// `status.json`.
    Status,
    /// `plan.json`.
    Plan,
    /// `report.json`.
    Report,
    /// k6's `--summary-export`: `k6/summary.json`, `k6/g<i>/summary.json`.
    K6Summary,
    /// The samplers' JSON lines, `samples/*.jsonl`.
    Samples,
    /// k6's own log, `k6/k6.log`, `k6/g<i>/k6.log`.
    K6Log,
    /// The stack's logs, `logs/*.log`.
    Log,
    /// The access logs, `logs/access/{fpm,nginx}.log`.
    AccessLog,
    /// k6's per-request CSV, `k6/requests.csv.gz` (or plain), `k6/g<i>/requests.csv.gz`.
    K6Csv,
    /// A matrix plan file (`matrix plan --plan FILE`).
    MatrixPlan,
    /// A hosts file of `matrix run --hosts` (one ssh login a line).
    Hosts,
    /// What GNU parallel leaves in a plan's work folder: its job log, a job's `stdout`.
    JobLog,
    /// A job's `stderr` (its end says why the job failed).
    JobErr,
    /// A plan's `controller.pid` (pid and start ticks).
    Pid,
    /// `out/history-ack.json`, the acknowledged change points (`perflab history ack`).
    HistoryAck,
}

impl FileKind {
    /// The most bytes read of a file of this kind (see [`FileKind::over`]).
    pub(crate) const fn max_bytes(self) -> u64 {
        match self {
            FileKind::Status => MIB,
            FileKind::Plan => 4 * MIB,
            FileKind::Manifest | FileKind::K6Summary => 8 * MIB,
            FileKind::Report => 32 * MIB,
            FileKind::K6Log => 16 * MIB,
            FileKind::Log => 64 * MIB,
            FileKind::AccessLog => 128 * MIB,
            FileKind::Samples => 256 * MIB,
            FileKind::K6Csv => u64::MAX,
            FileKind::MatrixPlan => 4 * MIB,
            // 1,000 logins of at most 512 bytes, a line each
            FileKind::Hosts => 1000 * 513,
            FileKind::JobLog | FileKind::JobErr => 8 * MIB,
            FileKind::Pid => 64,
            FileKind::HistoryAck => 4 * MIB,
        }
    }

    /// What a file over [`FileKind::max_bytes`] gives.
    pub(crate) const fn over(self) -> Over {
        match self {
            FileKind::Manifest
            | FileKind::Status
            | FileKind::Plan
            | FileKind::Report
            | FileKind::K6Summary
            | FileKind::MatrixPlan
            | FileKind::Hosts
            | FileKind::Pid
            | FileKind::HistoryAck => Over::Refuse,
            FileKind::Samples | FileKind::AccessLog | FileKind::JobLog => Over::Head,
            FileKind::K6Log | FileKind::Log | FileKind::JobErr => Over::Tail,
            FileKind::K6Csv => Over::Stream,
        }
    }

    /// The longest line kept whole (bytes): a JSON line past it is left out, a log line cut.
    pub(crate) const fn max_line(self) -> usize {
        match self {
            FileKind::Samples => MIB as usize,
            FileKind::K6Csv => crate::analyze::k6csv::MAX_LINE,
            _ => 64 * KIB as usize,
        }
    }

    /// What the file is, for messages.
    pub(crate) const fn what(self) -> &'static str {
        match self {
            FileKind::Manifest => "a run's manifest",
            FileKind::Status => "a run's status",
            FileKind::Plan => "a run's plan",
            FileKind::Report => "a run's report",
            FileKind::K6Summary => "k6's --summary-export",
            FileKind::Samples => "a sampler's JSON lines",
            FileKind::K6Log => "k6's log",
            FileKind::Log => "a stack log",
            FileKind::AccessLog => "an access log",
            FileKind::K6Csv => "k6's --out csv",
            FileKind::MatrixPlan => "a matrix plan",
            FileKind::Hosts => "a hosts file",
            FileKind::JobLog => "GNU parallel's job log or a job's output",
            FileKind::JobErr => "a job's error output",
            FileKind::Pid => "a controller's pid file",
            FileKind::HistoryAck => "the history's acknowledgements",
        }
    }
}

/// One file to read: where it is, what it is called in messages and caveats (its path inside
/// the run directory, `samples/host.jsonl`), and its kind.
#[derive(Debug, Clone)]
pub struct RunFile {
    pub path: PathBuf,
    pub label: String,
    pub kind: FileKind,
}

impl RunFile {
    /// `rel` inside the run directory `dir`, named by `rel`.
    pub fn at(dir: &Path, rel: &str, kind: FileKind) -> RunFile {
        RunFile {
            path: dir.join(rel),
            label: rel.to_string(),
            kind,
        }
    }

    /// A file given on its own (`perflab analyze FILE`), named by its path.
    pub fn loose(path: &Path, kind: FileKind) -> RunFile {
        RunFile {
            path: path.to_path_buf(),
            label: path.display().to_string(),
            kind,
        }
    }
}

/// Why a file could not be read; its message names the file's path, [`ReadError::why`] alone
/// does not (for a caveat that names the file its own way).
#[derive(Debug)]
pub enum ReadError {
    Missing(String),
    NotRegular {
        path: String,
        what: &'static str,
    },
    TooLarge {
        path: String,
        size: u64,
        cap: u64,
        what: &'static str,
    },
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io { path, .. } => write!(f, "reading {path}: {}", self.why()),
            ReadError::Missing(path)
            | ReadError::NotRegular { path, .. }
            | ReadError::TooLarge { path, .. } => write!(f, "{path}: {}", self.why()),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl ReadError {
    pub(crate) fn is_missing(&self) -> bool {
        matches!(self, ReadError::Missing(_))
    }

    /// What is wrong, without the path.
    pub(crate) fn why(&self) -> String {
        match self {
            ReadError::Missing(_) => "no such file".into(),
            ReadError::NotRegular { what, .. } => format!(
                "not a regular file ({what}): perflab reads regular files only; replace it with the file itself"
            ),
            ReadError::TooLarge {
                size, cap, what, ..
            } => format!(
                "{size} bytes, more than the {cap} bytes {what} can be: not the file perflab wrote"
            ),
            ReadError::Io { source, .. } => source.to_string(),
        }
    }

    /// As an error of the process: bad input (exit 2), except an I/O failure (exit 1).
    pub(crate) fn into_anyhow(self) -> anyhow::Error {
        match self {
            ReadError::Io { .. } => anyhow::Error::new(self),
            other => crate::error::invalid(other.to_string()),
        }
    }

    pub(super) fn io(f: &RunFile, source: std::io::Error) -> ReadError {
        ReadError::Io {
            path: f.path.display().to_string(),
            source,
        }
    }
}

/// What reading one file cut, replaced or left out; [`ReadNotes::caveats`] says it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadNotes {
    pub label: String,
    /// Bytes that were not UTF-8, each run of them replaced by U+FFFD.
    pub invalid_utf8: u64,
    /// Lines longer than the kind's cap (cut, or left out for JSON lines), and the first one.
    pub long_lines: u64,
    pub first_long_line: Option<u64>,
    pub max_line: usize,
    /// Long lines are left out (JSON lines: a cut one would not parse), not cut.
    pub long_lines_left_out: bool,
    /// JSON lines that did not parse once their invalid UTF-8 was replaced (left out).
    pub garbled_lines: u64,
    pub first_garbled_line: Option<u64>,
    /// The file's size and how much of it was read, when a cap cut it (head or tail).
    pub capped: Option<(u64, u64, Over)>,
}

impl ReadNotes {
    pub(crate) fn new(f: &RunFile) -> ReadNotes {
        ReadNotes {
            label: f.label.clone(),
            max_line: f.kind.max_line(),
            long_lines_left_out: f.kind == FileKind::Samples,
            ..Default::default()
        }
    }

    /// The report's caveats for what was lost or changed (none for a clean read).
    pub(crate) fn caveats(&self) -> Vec<String> {
        let mut v = Vec::new();
        let l = &self.label;
        if self.invalid_utf8 > 0 {
            let n = self.invalid_utf8;
            v.push(format!(
                "{n} invalid UTF-8 byte{} replaced in {l}",
                if n == 1 { "" } else { "s" }
            ));
        }
        if let Some(first) = self.first_garbled_line {
            v.push(format!(
                "{l}: {} line(s) that do not parse once their invalid UTF-8 is replaced are left out (first: line {first})",
                self.garbled_lines
            ));
        }
        if let Some(first) = self.first_long_line {
            v.push(format!(
                "{l}: {} line(s) longer than {} bytes {} (first: line {first})",
                self.long_lines,
                self.max_line,
                if self.long_lines_left_out {
                    "left out"
                } else {
                    "cut there"
                }
            ));
        }
        if let Some((size, read, how)) = self.capped {
            let part = if how == Over::Tail { "last" } else { "first" };
            v.push(format!(
                "{l} is {size} bytes: only its {part} {read} bytes are read, the rest is left out"
            ));
        }
        v
    }
}

/// The UTF-8 byte order mark some editors put first: skipped wherever a file starts.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD; with the number of invalid bytes.
pub(crate) fn lossy(bytes: &[u8]) -> (Cow<'_, str>, u64) {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return (Cow::Borrowed(s), 0);
    }
    let mut out = String::with_capacity(bytes.len());
    let mut bad = 0;
    for c in bytes.utf8_chunks() {
        out.push_str(c.valid());
        if !c.invalid().is_empty() {
            bad += c.invalid().len() as u64;
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
    (Cow::Owned(out), bad)
}

/// A FIFO at `p` (tests of readers and writers that must not wait on one).
#[cfg(test)]
pub(crate) fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: c is a NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {}",
        p.display()
    );
}

/// What a non-regular file is, for the message.
pub(crate) fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    }
}

/// Open `f` if it is a regular file (a symlink to one is followed), with its size. A FIFO, a
/// device, a socket or a directory is refused: checked before opening, and again on the open
/// descriptor (O_NONBLOCK, so a FIFO swapped in between never blocks; O_NOCTTY).
pub(crate) fn open_regular(f: &RunFile) -> Result<(std::fs::File, u64), ReadError> {
    let not_regular = |t: std::fs::FileType| ReadError::NotRegular {
        path: f.path.display().to_string(),
        what: describe(t),
    };
    let missing_or = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing(f.path.display().to_string()),
        _ => ReadError::io(f, e),
    };
    let md = std::fs::metadata(&f.path).map_err(missing_or)?;
    if !md.file_type().is_file() {
        return Err(not_regular(md.file_type()));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(&f.path)
        .map_err(missing_or)?;
    let md = file.metadata().map_err(|e| ReadError::io(f, e))?;
    if !md.file_type().is_file() {
        return Err(not_regular(md.file_type()));
    }
    Ok((file, md.len()))
}
