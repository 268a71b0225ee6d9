//! The program's own output: tables and `--json` on stdout, progress and warnings on stderr.
//! Neither panics nor fails when its reader is gone (`perflab verify all | head -3`, a closed
//! terminal): the rest of the output is dropped, so a run still tears down and marks its
//! directory. Only these two streams get that treatment; a broken pipe on a socket is an error.
use std::io::{self, Write};

/// `eprintln!` that never panics: progress and warnings go to stderr and are dropped when stderr
/// is closed, so a run still stops k6, tears its containers down and marks its directory.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` through [`stdout`]: never panics, drops what a gone reader cannot take.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::output::stdout(), $($arg)*);
    }};
}

/// `print!` of a rendered text (it carries its own newlines) through [`stdout`].
pub fn emit(text: &str) {
    let _ = stdout().write_all(text.as_bytes());
}

/// Standard output for tables and `--json`, for writers that take `impl Write`: a broken pipe
/// counts as written.
pub fn stdout() -> QuietStdout {
    QuietStdout(io::stdout().lock())
}

pub struct QuietStdout(io::StdoutLock<'static>);

impl Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write(buf) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(buf.len()),
            r => r,
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self.0.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        }
    }
}
