//! Line by line reads: logs (long lines cut, a tail cap) and the samplers' JSON lines (a head
//! cap, long or garbled lines left out and counted, a torn last line dropped).
use super::file::{BOM, Over, ReadError, ReadNotes, RunFile, lossy, open_regular};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Lines of at most `cap` bytes from a `BufRead`: a longer line is cut there (the rest of it is
/// skipped, never buffered) and flagged, so memory stays bounded whatever the input.
pub struct LineReader<R> {
    r: R,
    cap: usize,
    buf: Vec<u8>,
    line_no: u64,
}

/// One line: its number (from 1), its bytes (no newline, no CR), whether it was cut at the cap,
/// whether a newline ended it (the last line of a file may lack one).
pub(crate) struct Line<'a> {
    pub no: u64,
    pub bytes: &'a [u8],
    pub cut: bool,
    pub ended: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(crate) fn new(r: R, cap: usize) -> Self {
        LineReader {
            r,
            cap,
            buf: Vec::new(),
            line_no: 0,
        }
    }

    /// The next line, `None` at the end.
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<Line<'_>>> {
        self.buf.clear();
        let (mut cut, mut any, mut ended) = (false, false, false);
        while !ended {
            let avail = match self.r.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                break;
            }
            any = true;
            let (part, used) = match memchr::memchr(b'\n', avail) {
                Some(i) => (&avail[..i], i + 1),
                None => (avail, avail.len()),
            };
            ended = used > part.len();
            let room = self.cap.saturating_sub(self.buf.len());
            cut |= part.len() > room;
            self.buf.extend_from_slice(&part[..part.len().min(room)]);
            self.r.consume(used);
        }
        if !any {
            return Ok(None);
        }
        self.line_no += 1;
        let bytes = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
        Ok(Some(Line {
            no: self.line_no,
            bytes,
            cut,
            ended,
        }))
    }
}

type FileLines = LineReader<BufReader<std::io::Take<std::fs::File>>>;

/// Open `f` for line reads. Past the kind's size cap only its head, or its tail from the first
/// whole line, is read, and `notes.capped` says so; a BOM at the start is skipped.
fn open_lines(
    f: &RunFile,
    notes: &mut ReadNotes,
    (cap, max_line): (u64, usize),
) -> Result<FileLines, ReadError> {
    let io = |e| ReadError::io(f, e);
    let (mut file, size) = open_regular(f)?;
    notes.max_line = max_line;
    let mut from = 0;
    if size > cap {
        notes.capped = Some((size, cap, f.kind.over()));
        if f.kind.over() == Over::Tail {
            from = size - cap;
        }
    }
    // A tail starts after the line the cut falls in (unless the cut falls on a line's start).
    let mut partial = false;
    if from > 0 {
        file.seek(SeekFrom::Start(from - 1)).map_err(io)?;
        let mut b = [0u8];
        file.read_exact(&mut b).map_err(io)?;
        partial = b[0] != b'\n';
    }
    let mut r = BufReader::with_capacity(64 * 1024, file.take(cap));
    if from == 0 && r.fill_buf().map_err(io)?.starts_with(BOM) {
        r.consume(BOM.len());
    }
    let mut lr = LineReader::new(r, max_line);
    if partial {
        lr.next_line().map_err(io)?;
        lr.line_no = 0;
    }
    Ok(lr)
}

impl ReadNotes {
    fn long_line(&mut self, no: u64) {
        self.long_lines += 1;
        self.first_long_line.get_or_insert(no);
    }
}

/// Every line of `f` as text (BOM skipped, invalid UTF-8 replaced, long lines cut, the kind's
/// size cap applied), handed to `each` with its number; what was changed comes back.
pub fn lines(f: &RunFile, each: impl FnMut(&str)) -> Result<ReadNotes, ReadError> {
    lines_within(f, caps(f), each)
}

/// The kind's caps: (bytes, line).
fn caps(f: &RunFile) -> (u64, usize) {
    (f.kind.max_bytes(), f.kind.max_line())
}

/// [`lines`] with the given caps.
pub(super) fn lines_within(
    f: &RunFile,
    caps: (u64, usize),
    mut each: impl FnMut(&str),
) -> Result<ReadNotes, ReadError> {
    let mut notes = ReadNotes::new(f);
    let mut lr = open_lines(f, &mut notes, caps)?;
    while let Some(line) = lr.next_line().map_err(|e| ReadError::io(f, e))? {
        if line.cut {
            notes.long_line(line.no);
        }
        let (text, bad) = lossy(line.bytes);
        notes.invalid_utf8 += bad;
        each(&text);
    }
    Ok(notes)
}

/// The records of a sampler's JSON lines `f` (a missing file has none), what reading them
/// changed, and whether a torn last line was dropped. A line over the cap, or one that does not
/// parse once its invalid UTF-8 is replaced, is left out and counted. A last line with no
/// newline that does not parse was torn by a killed sampler: dropped (and said by the caller).
/// Any other line that does not parse is bad input, naming the file and the line.
pub fn jsonl<T: serde::de::DeserializeOwned>(
    f: &RunFile,
) -> anyhow::Result<(Vec<T>, ReadNotes, bool)> {
    jsonl_within(f, caps(f))
}

/// [`jsonl`] with the given caps.
pub(super) fn jsonl_within<T: serde::de::DeserializeOwned>(
    f: &RunFile,
    caps: (u64, usize),
) -> anyhow::Result<(Vec<T>, ReadNotes, bool)> {
    let mut notes = ReadNotes::new(f);
    let mut lr = match open_lines(f, &mut notes, caps) {
        Err(e) if e.is_missing() => return Ok((Vec::new(), notes, false)),
        other => other.map_err(ReadError::into_anyhow)?,
    };
    let (mut out, mut torn) = (Vec::new(), false);
    while let Some(line) = lr
        .next_line()
        .map_err(|e| ReadError::io(f, e).into_anyhow())?
    {
        if line.cut {
            notes.long_line(line.no);
            continue;
        }
        let (text, bad) = lossy(line.bytes);
        notes.invalid_utf8 += bad;
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&text) {
            Ok(v) => out.push(v),
            // A head cut short by the cap is said by `capped`, not as a torn line.
            Err(_) if !line.ended && notes.capped.is_some() => {}
            Err(_) if !line.ended => torn = true,
            Err(_) if bad > 0 => {
                notes.garbled_lines += 1;
                notes.first_garbled_line.get_or_insert(line.no);
            }
            Err(e) => {
                return Err(crate::error::invalid(format!(
                    "{}: line {}: {e}",
                    f.path.display(),
                    line.no
                )));
            }
        }
    }
    Ok((out, notes, torn))
}
