//! What the live page's tests share: `promtool check metrics` on an OpenMetrics text.
#![allow(dead_code)]

/// `promtool check metrics` (Debian's prometheus, scripts/test-prereqs.sh) on `text`: it
/// parses it and lints names, units and help.
pub fn promtool_passes(text: &str) {
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("promtool: {e}; install Debian's prometheus (scripts/test-prereqs.sh does)")
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.trim().is_empty(),
        "promtool check metrics: {said}\n{text}"
    );
}
