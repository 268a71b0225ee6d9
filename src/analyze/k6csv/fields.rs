//! The shape of k6's CSV: columns found by name, fields split (RFC 4180 quoting), the metrics
//! read, timestamps in unix s, unix ms or RFC 3339, and a row's step tag.
use super::data::{CsvError, MAX_COUNT, MAX_DURATION_MS};
use std::borrow::Cow;

/// Column positions from the header line (k6's column order varies between versions).
pub(super) struct Cols {
    pub name: usize,
    pub ts: usize,
    pub value: usize,
    pub expected: Option<usize>,
    pub status: Option<usize>,
    pub scenario: Option<usize>,
    pub error_code: Option<usize>,
    pub extra: Option<usize>,
    pub stage: Option<usize>,
    pub step: Option<usize>,
}

/// One field of a split line; a missing field reads as empty.
pub(super) fn field<'a>(f: &'a [Cow<'a, [u8]>], i: usize) -> &'a [u8] {
    f.get(i).map(|c| c.as_ref()).unwrap_or(b"")
}

impl Cols {
    /// Find the step tag of a row: dedicated `stage`/`step` columns, else `extra_tags`.
    pub(super) fn step_tag<'a>(&self, f: &'a [Cow<'a, [u8]>]) -> Option<(&'static str, &'a [u8])> {
        if let Some(i) = self.stage
            && !field(f, i).is_empty()
        {
            return Some(("stage", field(f, i)));
        }
        if let Some(i) = self.step
            && !field(f, i).is_empty()
        {
            return Some(("step", field(f, i)));
        }
        let extra = field(f, self.extra?);
        for kv in extra.split(|&b| b == b'&') {
            if let Some(v) = kv.strip_prefix(b"stage=") {
                return Some(("stage", v));
            }
            if let Some(v) = kv.strip_prefix(b"step=") {
                return Some(("step", v));
            }
        }
        None
    }
}

/// Find the columns by name; the three k6 always writes are required.
pub(super) fn header(line: &[u8]) -> Result<Cols, CsvError> {
    let names: Vec<String> = split_fields(line)
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let find = |n: &str| names.iter().position(|c| c == n);
    Ok(Cols {
        name: find("metric_name").ok_or(CsvError::MissingColumn("metric_name"))?,
        ts: find("timestamp").ok_or(CsvError::MissingColumn("timestamp"))?,
        value: find("metric_value").ok_or(CsvError::MissingColumn("metric_value"))?,
        expected: find("expected_response"),
        status: find("status"),
        scenario: find("scenario"),
        error_code: find("error_code"),
        extra: find("extra_tags"),
        stage: find("stage"),
        step: find("step"),
    })
}

/// Split one CSV line into fields (RFC 4180 quoting handled; quotes are rare in k6 output).
pub(super) fn split_fields(line: &[u8]) -> Vec<Cow<'_, [u8]>> {
    if memchr::memchr(b'"', line).is_none() {
        return line.split(|&b| b == b',').map(Cow::Borrowed).collect();
    }
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while i < line.len() {
        let b = line[i];
        if quoted {
            if b == b'"' {
                if line.get(i + 1) == Some(&b'"') {
                    cur.push(b'"');
                    i += 1;
                } else {
                    quoted = false;
                }
            } else {
                cur.push(b);
            }
        } else if b == b'"' {
            quoted = true;
        } else if b == b',' {
            out.push(Cow::Owned(std::mem::take(&mut cur)));
        } else {
            cur.push(b);
        }
        i += 1;
    }
    out.push(Cow::Owned(cur));
    out
}

/// The k6 metrics the analysis reads.
#[derive(PartialEq)]
pub(super) enum Metric {
    Duration,
    Dropped,
    Vus,
    VusMax,
}

/// The metrics the analysis reads; every other row is skipped.
pub(super) fn metric_of(name: &[u8]) -> Option<Metric> {
    match name {
        b"http_req_duration" => Some(Metric::Duration),
        b"dropped_iterations" => Some(Metric::Dropped),
        b"vus" => Some(Metric::Vus),
        b"vus_max" => Some(Metric::VusMax),
        _ => None,
    }
}

/// A row's `metric_value`: a finite number in the range a real k6 run writes for `metric`.
pub(super) fn metric_value(b: &[u8], metric: &Metric, line: u64) -> Result<f64, CsvError> {
    let text = String::from_utf8_lossy(b);
    let bad = |what: String| CsvError::BadField {
        line,
        field: "metric_value",
        what,
    };
    let v: f64 = text
        .parse()
        .map_err(|_| bad(format!("not a number: {text:?}")))?;
    let (max, unit) = match metric {
        Metric::Duration => (MAX_DURATION_MS, "ms of http_req_duration"),
        _ => (MAX_COUNT, "(a count)"),
    };
    if !(0.0..=max).contains(&v) {
        return Err(bad(format!(
            "{text} is outside 0..={max} {unit}: no k6 run writes that; fix or remove the row"
        )));
    }
    Ok(v)
}

/// (value, is_seconds): unix ms (K6_CSV_TIME_FORMAT=unix_milli), unix s (k6's default) or RFC 3339.
pub(super) fn parse_ts(b: &[u8]) -> Option<(i64, bool)> {
    if !b.is_empty() && b.iter().all(|c| c.is_ascii_digit()) {
        let v: i64 = std::str::from_utf8(b).ok()?.parse().ok()?;
        // Unix seconds stay below 1e11 until the year 5138; unix ms are above it since 1973.
        return Some(if v < 100_000_000_000 {
            (v, true)
        } else {
            (v, false)
        });
    }
    let s = std::str::from_utf8(b).ok()?;
    let t = chrono::DateTime::parse_from_rfc3339(s).ok()?;
    Some((t.timestamp_millis(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(line: &[u8]) -> Vec<String> {
        split_fields(line)
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect()
    }

    #[test]
    fn quoted_fields_keep_commas_and_doubled_quotes() {
        assert_eq!(strings(b"a,,b"), ["a", "", "b"]);
        assert_eq!(
            strings(br#"x,"stage=r0010&k=a,b","say ""hi""",y"#),
            ["x", "stage=r0010&k=a,b", r#"say "hi""#, "y"]
        );
    }

    #[test]
    fn metric_values_a_run_cannot_write_are_errors() {
        for v in ["inf", "NaN", "-50", "1e15", "1e10", "600001", "x", ""] {
            let e = metric_value(v.as_bytes(), &Metric::Duration, 7).unwrap_err();
            assert!(e.to_string().starts_with("line 7: "), "{v}: {e}");
            assert!(
                e.to_string().ends_with("(field `metric_value`)"),
                "{v}: {e}"
            );
        }
        assert_eq!(
            metric_value(b"600000", &Metric::Duration, 1).unwrap(),
            600_000.0
        );
        assert_eq!(metric_value(b"0", &Metric::Duration, 1).unwrap(), 0.0);
        assert!(metric_value(b"1e300", &Metric::Vus, 1).is_err());
        assert!(metric_value(b"-1", &Metric::Dropped, 1).is_err());
        assert_eq!(metric_value(b"1e9", &Metric::VusMax, 1).unwrap(), 1e9);
    }

    #[test]
    fn timestamps_in_seconds_milliseconds_or_rfc3339() {
        assert_eq!(parse_ts(b"1700000000"), Some((1_700_000_000, true)));
        assert_eq!(parse_ts(b"1700000000123"), Some((1_700_000_000_123, false)));
        assert_eq!(
            parse_ts(b"2023-11-14T22:13:20.5Z"),
            Some((1_700_000_000_500, false))
        );
        assert_eq!(parse_ts(b""), None);
        assert_eq!(parse_ts(b"12:00"), None);
    }

    #[test]
    fn a_step_column_wins_over_extra_tags() {
        let c = header(b"metric_name,timestamp,metric_value,stage,extra_tags").unwrap();
        let f = split_fields(b"http_req_duration,1,2,r0020,step=03_rps30");
        assert_eq!(c.step_tag(&f), Some(("stage", &b"r0020"[..])));
        let f = split_fields(b"http_req_duration,1,2,,phase=hold&step=03_rps30");
        assert_eq!(c.step_tag(&f), Some(("step", &b"03_rps30"[..])));
        let f = split_fields(b"http_req_duration,1,2,,phase=hold");
        assert_eq!(c.step_tag(&f), None);
    }
}
