//! k6's per-request CSV as a stream of whole lines: a plain file as it is, a gzip file decoded
//! one member at a time. A gzip stream that breaks (a k6 killed mid-write) ends at its last
//! whole line and the watch says where it broke; a second gzip member (k6 writes one, so the
//! file was concatenated) ends the stream and the watch refuses the file; bytes after the
//! member that are not gzip are ignored and said.
use super::file::{ReadError, RunFile, open_regular};
use flate2::bufread::GzDecoder;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

/// Decoded bytes held at most: a partial line longer than this is passed on (the CSV reader
/// refuses lines far shorter).
const HOLD: usize = 1 << 20;

/// How a gzip stream ended, filled in while it is read.
#[derive(Debug, Clone, Default)]
struct GzEnd {
    /// (compressed offset, decoded bytes kept, torn bytes dropped, why).
    broken: Option<(u64, u64, u64, String)>,
    /// Offset of a second gzip member.
    second_member_at: Option<u64>,
    /// (offset, bytes) of what follows the member and is not gzip.
    trailing: Option<(u64, u64)>,
}

/// What became of a k6 CSV stream: read it after the stream is consumed.
pub(crate) struct CsvWatch {
    label: String,
    size: u64,
    end: Arc<Mutex<GzEnd>>,
}

impl CsvWatch {
    /// The caveats of a stream read to its end, or the refusal of a concatenated gzip file.
    pub(crate) fn finish(&self) -> anyhow::Result<Vec<String>> {
        let end = self.end.lock().map(|e| e.clone()).unwrap_or_default();
        let (l, size) = (&self.label, self.size);
        if let Some(at) = end.second_member_at {
            return Err(crate::error::invalid(format!(
                "{l}: a second gzip member starts at byte {at} of {size}: k6 writes one, so this file was \
                 concatenated (two copies count every request twice): give the file one k6 run wrote \
                 (several generators: each its own k6/g<i>/ directory)"
            )));
        }
        let mut v = Vec::new();
        if let Some((at, kept, torn, why)) = end.broken {
            v.push(format!(
                "{l}: its gzip stream breaks at byte {at} of {size} ({why}; a k6 killed mid-write leaves this): \
                 the {kept} bytes of CSV up to its last whole line are analysed, a torn line of {torn} bytes and anything after are lost"
            ));
        }
        if let Some((at, n)) = end.trailing {
            v.push(format!(
                "{l}: {n} bytes after its gzip stream (from byte {at}) are not gzip and are ignored"
            ));
        }
        Ok(v)
    }
}

/// A `BufRead` that counts the bytes its reader consumed (the compressed offset) and whether
/// the file itself failed (an I/O error, not a broken stream).
struct Counted {
    r: BufReader<std::fs::File>,
    pos: u64,
    failed: bool,
}

impl Read for Counted {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let b = self.fill_buf()?;
            let n = b.len().min(out.len());
            out[..n].copy_from_slice(&b[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Counted {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let r = self.r.fill_buf();
        self.failed |= r.is_err();
        r
    }
    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.r.consume(n);
    }
}

/// One gzip member decoded, passed on a whole line at a time: the bytes after the last newline
/// are held until the next newline or the member's clean end, so a break drops a torn line.
struct GzLines {
    dec: GzDecoder<Counted>,
    size: u64,
    buf: Vec<u8>,
    /// Bytes `start..ready` are passed on, `ready..end` held.
    start: usize,
    ready: usize,
    end: usize,
    kept: u64,
    done: bool,
    state: Arc<Mutex<GzEnd>>,
}

impl GzLines {
    fn record(&self, f: impl FnOnce(&mut GzEnd)) {
        if let Ok(mut e) = self.state.lock() {
            f(&mut e);
        }
    }

    /// After the member's clean end: a second member, or trailing bytes that are not gzip.
    fn after_member(&mut self) {
        let at = self.dec.get_ref().pos;
        if at >= self.size {
            return;
        }
        let mut magic = [0u8; 2];
        let file = self.dec.get_ref().r.get_ref();
        let n = file.read_at(&mut magic, at).unwrap_or(0);
        let size = self.size;
        if n == 2 && magic == [0x1f, 0x8b] {
            self.record(|e| e.second_member_at = Some(at));
        } else {
            self.record(|e| e.trailing = Some((at, size - at)));
        }
    }

    /// Decode more: move the held bytes to the front, read, and pass on up to the last newline.
    fn refill(&mut self) -> std::io::Result<()> {
        self.buf.copy_within(self.ready..self.end, 0);
        self.end -= self.ready;
        (self.start, self.ready) = (0, 0);
        if self.end == self.buf.len() {
            self.ready = self.end;
            return Ok(());
        }
        match self.dec.read(&mut self.buf[self.end..]) {
            Ok(0) => {
                self.after_member();
                (self.ready, self.done) = (self.end, true);
            }
            Ok(n) => {
                let from = self.end;
                self.end += n;
                if let Some(i) = memchr::memrchr(b'\n', &self.buf[from..self.end]) {
                    self.ready = from + i + 1;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if self.dec.get_ref().failed => return Err(e),
            Err(e) => {
                let (at, kept, torn) = (self.dec.get_ref().pos, self.kept, self.end as u64);
                self.record(|g| g.broken = Some((at, kept, torn, e.to_string())));
                (self.end, self.done) = (0, true);
            }
        }
        self.kept += self.ready as u64;
        Ok(())
    }
}

impl Read for GzLines {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.start == self.ready {
            if self.done {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = out.len().min(self.ready - self.start);
        out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

/// The text of a k6 CSV, plain or decoded from gzip.
pub(crate) struct CsvStream(Stream);

enum Stream {
    Plain(BufReader<std::fs::File>),
    Gzip(Box<GzLines>),
}

impl CsvStream {
    /// Whether the file is gzip (decoding is work worth a thread of its own).
    pub(crate) fn is_gzip(&self) -> bool {
        matches!(self.0, Stream::Gzip(_))
    }
}

impl Read for CsvStream {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        match &mut self.0 {
            Stream::Plain(r) => r.read(out),
            Stream::Gzip(g) => g.read(out),
        }
    }
}

/// Open k6's CSV `f` (a regular file; gzip told by its magic bytes) as a stream of its text,
/// with the watch that says how the stream ended.
pub(crate) fn k6_csv(f: &RunFile) -> Result<(CsvStream, CsvWatch), ReadError> {
    let (file, size) = open_regular(f)?;
    let mut r = BufReader::with_capacity(1 << 16, file);
    let gz = r
        .fill_buf()
        .map_err(|e| ReadError::io(f, e))?
        .starts_with(&[0x1f, 0x8b]);
    let end = Arc::new(Mutex::new(GzEnd::default()));
    let watch = CsvWatch {
        label: f.label.clone(),
        size,
        end: end.clone(),
    };
    if !gz {
        return Ok((CsvStream(Stream::Plain(r)), watch));
    }
    let counted = Counted {
        r,
        pos: 0,
        failed: false,
    };
    let lines = GzLines {
        dec: GzDecoder::new(counted),
        size,
        buf: vec![0; HOLD],
        start: 0,
        ready: 0,
        end: 0,
        kept: 0,
        done: false,
        state: end,
    };
    Ok((CsvStream(Stream::Gzip(Box::new(lines))), watch))
}
