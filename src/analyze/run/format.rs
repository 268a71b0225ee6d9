//! Numbers in the report's sentences: thousands separators, latencies, percentages.

/// "1,113" (rounded to an integer, thousands separated by commas).
pub(super) fn fmt_int(v: f64) -> String {
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Latency figure for sentences: "1,113 ms" or "18.0 ms".
pub fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{} ms", fmt_int(v))
    } else {
        format!("{v:.1} ms")
    }
}

/// A fraction as a percentage: "0 %", "0.50 %" below 10 %, "12.5 %" above.
pub(super) fn pct(v: f64) -> String {
    if v == 0.0 {
        "0 %".into()
    } else if v < 0.1 {
        format!("{:.2} %", v * 100.0)
    } else {
        format!("{:.1} %", v * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_get_thousands_separators() {
        assert_eq!(fmt_int(0.0), "0");
        assert_eq!(fmt_int(999.4), "999");
        assert_eq!(fmt_int(1000.0), "1,000");
        assert_eq!(fmt_int(1234567.0), "1,234,567");
        assert_eq!(fmt_int(-1234.0), "-1,234");
    }

    #[test]
    fn latencies_switch_to_integers_at_100_ms() {
        assert_eq!(fmt_ms(18.04), "18.0 ms");
        assert_eq!(fmt_ms(99.94), "99.9 ms");
        assert_eq!(fmt_ms(1113.2), "1,113 ms");
    }

    #[test]
    fn percentages_keep_two_decimals_below_ten_percent() {
        assert_eq!(pct(0.0), "0 %");
        assert_eq!(pct(0.005), "0.50 %");
        assert_eq!(pct(0.125), "12.5 %");
    }
}
