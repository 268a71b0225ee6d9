//! The program's own output: tables and `--json` on stdout, progress and warnings on stderr.
//! Neither panics nor fails when its reader is gone (`perflab verify all | head -3`, a closed
//! terminal): the rest of the output is dropped, so a run still tears down and marks its
//! directory. Only these two streams get that treatment; a broken pipe on a socket is an error.
//! Whatever goes through them is [`plain`] text: data (a k6 tag, a manifest value, a log line,
//! a folder name) cannot drive the terminal.
use std::borrow::Cow;
use std::io::{self, Write};

/// Is `c` a character a terminal acts on instead of showing: a control character (C0 but
/// newline and tab, DEL, C1: `ESC`, `BEL`, `CR`, `CSI`...) or a bidirectional mark or override,
/// which reorders what follows it.
fn acts_on_terminal(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` safe to show on a terminal or in a text file: every character a terminal would act on
/// is written as its escape (`\u001b` for ESC), so text from data cannot move the cursor,
/// clear the screen, set the window title or rewrite a line already printed. Printable
/// Unicode, newlines and tabs are kept. The one escaping of perflab's text output: `say!`,
/// `out!`, [`emit`] and [`stdout`] apply it, and so do report.txt and report.md.
pub(crate) fn plain(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts_on_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if acts_on_terminal(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`plain`] over bytes that may end inside a character (a writer's chunk): a complete text is
/// escaped as text; otherwise the ASCII control bytes are escaped one by one.
fn plain_bytes(buf: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(buf) {
        Ok(s) => match plain(s) {
            Cow::Borrowed(_) => Cow::Borrowed(buf),
            Cow::Owned(o) => Cow::Owned(o.into_bytes()),
        },
        Err(_) => Cow::Owned(
            buf.iter()
                .flat_map(|&b| match b {
                    b'\n' | b'\t' => vec![b],
                    0..0x20 | 0x7f => format!("\\u{b:04x}").into_bytes(),
                    _ => vec![b],
                })
                .collect(),
        ),
    }
}

/// The width text on stdout should fit: `$COLUMNS` when it is a number (20-1000), else the
/// terminal's when stdout is one, else 100 (a pipe, a file).
pub(crate) fn width() -> usize {
    let tty = || {
        // SAFETY: TIOCGWINSZ fills the winsize we pass; stdout's descriptor is valid or the
        // call fails.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        (ok && ws.ws_col > 0).then_some(usize::from(ws.ws_col))
    };
    width_from(std::env::var("COLUMNS").ok().as_deref(), tty)
}

/// [`width`] with `$COLUMNS` and the terminal's width given (pure, for tests).
pub(crate) fn width_from(columns: Option<&str>, tty: impl Fn() -> Option<usize>) -> usize {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| (20..=1000).contains(c))
        .or_else(tty)
        .unwrap_or(100)
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word is cut).
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let need = word.len() + usize::from(used > 0);
            if used + need <= width {
                if used > 0 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // a word wider than a whole line: cut it
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Write a line to stderr as [`plain`] text; a closed stderr drops it (`say!`).
pub(crate) fn say_line(line: &str) {
    let _ = writeln!(io::stderr(), "{}", plain(line));
}

/// `eprintln!` that never panics: progress and warnings go to stderr and are dropped when stderr
/// is closed, so a run still stops k6, tears its containers down and marks its directory.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::output::say_line(&format!($($arg)*));
    }};
}

/// `println!` through [`stdout`]: never panics, drops what a gone reader cannot take.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        $crate::output::emit(&format!("{}\n", format_args!($($arg)*)));
    }};
}

/// Bytes (a man page, a completion script) through [`stdout`], flushed; what a gone reader
/// (`perflab man | head`) cannot take is dropped.
pub(crate) fn emit_bytes(bytes: &[u8]) {
    let mut out = stdout();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}

/// `print!` of a rendered text (it carries its own newlines) through [`stdout`], as [`plain`] text.
pub(crate) fn emit(text: &str) {
    let _ = stdout().write_all(text.as_bytes());
}

/// Standard output for tables and `--json`, for writers that take `impl Write`: a broken pipe
/// counts as written, and what is written is [`plain`] text.
pub(crate) fn stdout() -> QuietStdout {
    QuietStdout(io::stdout().lock())
}

pub(crate) struct QuietStdout(io::StdoutLock<'static>);

impl Write for QuietStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0.write_all(&plain_bytes(buf)) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(buf.len()),
            r => r.map(|()| buf.len()),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self.0.flush() {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            r => r,
        }
    }
}

/// The log on stderr: `warn` with `--quiet`, else `info`, or `PERFLAB_LOG`; colours on a terminal
/// unless `NO_COLOR`.
pub(crate) fn init_tracing(quiet: bool) {
    let default = if quiet { "warn" } else { "info" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("PERFLAB_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::env::var_os("NO_COLOR").is_none()
        && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_target(false)
        .without_time()
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_is_columns_else_the_terminal_else_100() {
        assert_eq!(width_from(Some("80"), || Some(200)), 80);
        assert_eq!(width_from(Some("junk"), || Some(120)), 120);
        assert_eq!(width_from(Some("5"), || None), 100);
        assert_eq!(width_from(None, || None), 100);
    }

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_long_words() {
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(wrap("", 5), [""]);
    }

    #[test]
    fn controls_are_shown_not_obeyed() {
        let tag = "r0010\u{1b}]0;PWNED\u{7}\u{1b}[2J";
        assert_eq!(plain(tag), "r0010\\u001b]0;PWNED\\u0007\\u001b[2J");
        assert_eq!(plain("up\u{1b}[1A\rB"), "up\\u001b[1A\\u000dB");
        assert_eq!(
            plain("csi \u{9b}2J del \u{7f}"),
            "csi \\u009b2J del \\u007f"
        );
        assert_eq!(plain("abc\u{202e}fed"), "abc\\u202efed");
        // printable unicode, newlines and tabs are kept, and nothing is copied then
        let ok = "µs ✗ 日本\tcol\nline";
        assert!(matches!(plain(ok), Cow::Borrowed(s) if s == ok));
        // escaping twice changes nothing
        assert_eq!(plain(&plain(tag)), plain(tag));
    }

    #[test]
    fn json_stays_json_with_the_same_strings() {
        // serde_json leaves DEL, C1 and bidirectional marks raw; their escapes are JSON's own.
        let v = serde_json::json!({"o": ["a\u{7f}b\u{9b}2J\u{202e}c\u{1b}[1A\r"]});
        let text = serde_json::to_string_pretty(&v).unwrap();
        let shown = plain(&text);
        assert!(!shown.chars().any(acts_on_terminal), "{shown}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&shown).unwrap(),
            v
        );
    }

    #[test]
    fn chunks_cut_inside_a_character_still_lose_their_control_bytes() {
        let bytes = "é\u{1b}[2J".as_bytes();
        assert_eq!(&*plain_bytes(&bytes[1..]), &b"\xa9\\u001b[2J"[..]);
        assert_eq!(&*plain_bytes(b"a\nb"), b"a\nb");
    }
}
