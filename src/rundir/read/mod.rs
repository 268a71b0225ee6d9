//! Bounded, typed reads of every file a run directory holds, by kind ([`FileKind`]): a size cap
//! per kind (whole JSON documents refused past it, logs read from their tail, sample files from
//! their head), a line cap, regular files only (a FIFO or a device is refused without blocking),
//! a UTF-8 BOM skipped, invalid UTF-8 replaced and counted, a broken k6 gzip stream read up to
//! where it breaks; what was cut, replaced or left out comes back as [`ReadNotes`], whose
//! caveats go into the report. Every reader of a run directory's files goes through here.
mod file;
mod gzip;
mod lines;

pub(crate) use gzip::k6_csv;
pub use lines::{LineReader, jsonl, lines};

pub use file::*;

use std::io::Read;

/// A whole document (JSON): its text and what reading it changed.
#[derive(Debug, Clone)]
pub struct Doc {
    pub text: String,
    pub notes: ReadNotes,
}

/// Read a whole document of `f`'s kind: refused past the kind's cap, BOM skipped, invalid
/// UTF-8 replaced and counted.
pub fn doc(f: &RunFile) -> Result<Doc, ReadError> {
    let mut bytes = whole(f)?;
    let mut notes = ReadNotes::new(f);
    if bytes.starts_with(BOM) {
        bytes.drain(..3);
    }
    let text = String::from_utf8(bytes).unwrap_or_else(|e| {
        let (text, bad) = lossy(e.as_bytes());
        notes.invalid_utf8 = bad;
        text.into_owned()
    });
    Ok(Doc { text, notes })
}

/// The bytes of a whole file of `f`'s kind, as they are (for a reader with its own rule on
/// encoding: a plan file refuses what is not UTF-8): a regular file only, refused past the
/// kind's cap.
pub(crate) fn whole(f: &RunFile) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(f)?;
    let cap = f.kind.max_bytes();
    let too_large = |size| ReadError::TooLarge {
        path: f.path.display().to_string(),
        size,
        cap,
        what: f.kind.what(),
    };
    if size > cap {
        return Err(too_large(size));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow while read: never past the cap.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::io(f, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests;
