//! A shared JSON-lines writer that flushes after every line.
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

#[derive(Clone)]
pub struct JsonlWriter(Arc<Mutex<BufWriter<File>>>);

impl JsonlWriter {
    pub fn create(path: &Path) -> std::io::Result<JsonlWriter> {
        let f = File::options().create(true).append(true).open(path)?;
        Ok(JsonlWriter(Arc::new(Mutex::new(BufWriter::new(f)))))
    }

    pub fn write<T: serde::Serialize>(&self, value: &T) -> std::io::Result<()> {
        let mut w = self.0.lock().unwrap_or_else(|p| p.into_inner());
        serde_json::to_writer(&mut *w, value)?;
        w.write_all(b"\n")?;
        w.flush()
    }
}
