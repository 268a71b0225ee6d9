//! One test at a time in the binaries that use Docker, and how long each took: the guard
//! `serial()` returns holds the binary's lock and, when dropped (a pass or a panic), appends
//! `binary<TAB>test<TAB>seconds<TAB>outcome` to `target/tmp/test-times.tsv`, which
//! `scripts/test.sh` prints, slowest first, when the tests end (docs/ci-time.md).
use std::io::Write;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

/// Held for the whole of a test: the lock, the start and the test's name.
pub struct Serial {
    _lock: MutexGuard<'static, ()>,
    start: Instant,
    name: String,
}

/// One test of this binary at a time: they share the engine, the host lock and the CPUs.
pub fn serial() -> Serial {
    static SERIAL: Mutex<()> = Mutex::new(());
    let lock = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    Serial {
        _lock: lock,
        start: Instant::now(),
        // libtest names each test's thread after the test
        name: std::thread::current().name().unwrap_or("?").to_owned(),
    }
}

impl Drop for Serial {
    fn drop(&mut self) {
        let binary = std::env::current_exe()
            .ok()
            .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .map(|s| s.rsplit_once('-').map_or(s.clone(), |(b, _)| b.to_owned()))
            .unwrap_or_default();
        let outcome = if std::thread::panicking() {
            "failed"
        } else {
            "ok"
        };
        let line = format!(
            "{binary}\t{}\t{:.1}\t{outcome}\n",
            self.name,
            self.start.elapsed().as_secs_f64()
        );
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-times.tsv");
        // a timing that cannot be written must not fail the test
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}
