//! Log digests: distinct messages with counts (nginx error log, php-fpm, Laravel, the Node app),
//! fed line by line by the caller.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Distinct messages of one log and how often each occurred.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogDigest {
    pub lines: u64,
    /// Normalised message -> count (bounded: past `MAX_DISTINCT` new messages count as "(other)").
    pub messages: BTreeMap<String, u64>,
}

const MAX_DISTINCT: usize = 2000;

/// Normalise a log line into its message: drop the leading timestamp, nginx's `pid#tid: *conn`
/// prefix and per-request details (`, client: ...`), and replace digit runs with `N`.
pub(crate) fn normalise(line: &str) -> String {
    let mut s = line.trim();
    // nginx: "2026/10/30 11:20:05 [error] 29#29: *1234 upstream timed out ..."
    // Laravel: "[2026-10-30 11:20:05] production.ERROR: SQLSTATE[08006] ..."
    if let Some(i) = s.find("] ")
        && i < 40
        && s[..i].chars().any(|c| c.is_ascii_digit())
    {
        s = &s[i + 2..];
    }
    if let Some(i) = s.find(", client: ") {
        s = &s[..i];
    }
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('N');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    // "N#N: *N " connection prefix of nginx.
    let out = out.trim_start_matches("N#N: *N ").to_string();
    out.chars().take(200).collect()
}

impl LogDigest {
    pub(crate) fn add_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        self.lines += 1;
        let m = normalise(line);
        if self.messages.len() >= MAX_DISTINCT && !self.messages.contains_key(&m) {
            *self.messages.entry("(other)".into()).or_default() += 1;
        } else {
            *self.messages.entry(m).or_default() += 1;
        }
    }

    /// The most frequent messages first.
    pub(crate) fn top(&self, n: usize) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> =
            self.messages.iter().map(|(k, c)| (k.clone(), *c)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_error_log_digest() {
        let mut d = LogDigest::default();
        for i in 0..3 {
            d.add_line(&format!("2026/10/30 11:20:0{i} [error] 29#29: *{} upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.0.0.2, server: _, request: \"GET /api/slow HTTP/1.1\"", 1000 + i));
        }
        d.add_line("2026/10/30 11:20:09 [error] 29#29: *77 connect() to unix:/run/php/php-fpm.sock failed (11: Resource temporarily unavailable) while connecting to upstream, client: 10.0.0.2");
        let top = d.top(5);
        assert_eq!(d.lines, 4);
        assert_eq!(top[0], ("upstream timed out (N: Connection timed out) while reading response header from upstream".to_string(), 3));
        assert!(top[1].0.contains("Resource temporarily unavailable"));
    }

    #[test]
    fn laravel_line() {
        assert_eq!(
            normalise(
                "[2026-10-30 11:20:05] production.ERROR: SQLSTATE[08006] [7] FATAL:  sorry, too many clients already"
            ),
            "production.ERROR: SQLSTATE[N] [N] FATAL:  sorry, too many clients already"
        );
    }
}
