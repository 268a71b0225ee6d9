//! A shared JSON-lines writer (a file, or stdout for the sample agent) that flushes after
//! every line.
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub(crate) struct JsonlWriter(Arc<Mutex<BufWriter<Box<dyn Write + Send>>>>);

impl JsonlWriter {
    pub(crate) fn create(path: &Path) -> std::io::Result<JsonlWriter> {
        let f = File::options().create(true).append(true).open(path)?;
        Ok(JsonlWriter(Arc::new(Mutex::new(BufWriter::new(Box::new(
            f,
        ))))))
    }

    /// Lines to this process's stdout (one shared writer: clones interleave whole lines).
    pub(crate) fn stdout() -> JsonlWriter {
        JsonlWriter(Arc::new(Mutex::new(BufWriter::new(Box::new(
            std::io::stdout(),
        )))))
    }

    pub(crate) fn write<T: serde::Serialize>(&self, value: &T) -> std::io::Result<()> {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::to_writer(&mut *w, value)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}
