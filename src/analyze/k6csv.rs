//! Streaming reader of k6's per-request CSV (`--out csv`, plain or gzip): one pass, constant
//! memory in the request count (HDR histograms per step, a per-second timeline).
use super::hist::LatencyHist;
pub use super::timeline::{SecondAgg, Timeline};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

/// Which tag convention names the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Convention {
    /// stepped.js: `stage:rNNNN` (rps).
    Stage,
    /// breakpoint.js: `step:NN_rpsX` / `step:NN_vusX` (hold windows only).
    Step,
}

/// What a step's number means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepUnit {
    Rps,
    Vus,
}

impl StepUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            StepUnit::Rps => "rps",
            StepUnit::Vus => "VUs",
        }
    }
}

/// A step tag value parsed: `r0150` or `04_rps150` / `06_vus60`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepTag {
    pub convention: Convention,
    pub order: u32,
    pub target: u32,
    pub unit: StepUnit,
}

/// Parse a tag (key, value) into a step; `None` for ramp, warm-up and anything else.
pub fn parse_step_tag(key: &str, value: &str) -> Option<StepTag> {
    match key {
        "stage" => {
            let n = value.strip_prefix('r')?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let target = n.parse().ok()?;
            Some(StepTag {
                convention: Convention::Stage,
                order: target,
                target,
                unit: StepUnit::Rps,
            })
        }
        "step" => {
            let (nn, rest) = value.split_once('_')?;
            let order = nn.parse().ok()?;
            let (unit, num) = if let Some(n) = rest.strip_prefix("rps") {
                (StepUnit::Rps, n)
            } else if let Some(n) = rest.strip_prefix("vus") {
                (StepUnit::Vus, n)
            } else {
                return None;
            };
            let target = num.parse().ok()?;
            Some(StepTag {
                convention: Convention::Step,
                order,
                target,
                unit,
            })
        }
        _ => None,
    }
}

/// Everything measured about the requests that started in one step.
#[derive(Debug, Clone)]
pub struct StepAgg {
    pub name: String,
    pub tag: StepTag,
    pub all: LatencyHist,
    pub ok: LatencyHist,
    pub requests: u64,
    pub ok_count: u64,
    /// Responses by HTTP status (0 = no response: timeout, reset, refused).
    pub statuses: BTreeMap<u16, u64>,
    /// k6 `error_code` counts (e.g. 1050 = request timeout).
    pub error_codes: BTreeMap<String, u64>,
    pub first_start_ms: i64,
    pub last_start_ms: i64,
    pub last_end_ms: i64,
}

/// The result of one pass over a k6 CSV.
#[derive(Clone, Default)]
pub struct K6Data {
    pub convention: Option<Convention>,
    /// Steps in step order.
    pub steps: Vec<StepAgg>,
    pub timeline: Timeline,
    /// `vus` samples (unix ms, active VUs).
    pub vus: Vec<(i64, f64)>,
    pub vus_max: f64,
    pub dropped_total: u64,
    /// Drops in the warm-up scenario (not counted against the system).
    pub dropped_warmup: u64,
    /// Drop timestamps per scenario are folded into the timeline; this keeps the first one.
    pub first_drop_ms: Option<i64>,
    /// Requests not in any step: `ramp`, `warmup`, `(untagged)`.
    pub excluded: BTreeMap<String, u64>,
    pub rows: u64,
    pub requests: u64,
    pub first_ms: Option<i64>,
    pub last_ms: Option<i64>,
    /// Start (unix ms) of the earliest request, any tag: when this generator began sending.
    pub first_request_ms: Option<i64>,
    /// True when timestamps were whole seconds (k6's default CSV time format).
    pub second_resolution: bool,
    /// Rows skipped for a stray timestamp (see [`MAX_SPAN_MS`]), and the first one's line.
    pub skipped_rows: u64,
    pub first_skipped_line: Option<u64>,
}

/// A line longer than this (bytes) is an error: k6 writes lines of a few hundred bytes.
pub const MAX_LINE: usize = 64 * 1024;
/// The largest `http_req_duration` (ms) accepted: k6's request timeout tops out far below; the
/// latency histograms saturate here too (10 minutes).
pub const MAX_DURATION_MS: f64 = 600_000.0;
/// Largest `vus`, `vus_max` or `dropped_iterations` value accepted.
pub const MAX_COUNT: f64 = 1e9;
/// Rows are kept within this distance (ms) of the first row's timestamp; rows farther away (a
/// stray line pasted from another run, a clock jump) are skipped and counted in a warning.
pub const MAX_SPAN_MS: i64 = 24 * 3600 * 1000;
/// Timestamps before 2000-01-01 or from 2100-01-01 on are skipped the same way.
pub const PLAUSIBLE_MS: std::ops::Range<i64> = 946_684_800_000..4_102_444_800_000;

#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    #[error("reading the k6 CSV failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("the k6 CSV has no header line (empty file?)")]
    Empty,
    #[error("the k6 CSV header lacks column `{0}`: is this k6's `--out csv` output?")]
    MissingColumn(&'static str),
    #[error(
        "line {line}: longer than {MAX_LINE} bytes (no newline): is this k6's `--out csv` output?"
    )]
    LineTooLong { line: u64 },
    #[error("line {line}: {what} (field `{field}`)")]
    BadField {
        line: u64,
        field: &'static str,
        what: String,
    },
}

struct Cols {
    name: usize,
    ts: usize,
    value: usize,
    expected: Option<usize>,
    status: Option<usize>,
    scenario: Option<usize>,
    error_code: Option<usize>,
    extra: Option<usize>,
    stage: Option<usize>,
    step: Option<usize>,
}

/// Read a k6 CSV (gzip detected by its magic bytes). Decompression runs on its own thread.
pub fn read_k6_csv<R: Read + Send + 'static>(reader: R) -> Result<K6Data, CsvError> {
    let mut br = BufReader::with_capacity(1 << 16, reader);
    let gz = {
        let head = br.fill_buf()?;
        head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b
    };
    if gz {
        let dec = flate2::bufread::MultiGzDecoder::new(br);
        parse(ChunkPipe::spawn(dec))
    } else {
        parse(br)
    }
}

/// Moves decompression to a second thread: the parser reads whole 1 MiB chunks from a channel.
struct ChunkPipe {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    cur: Vec<u8>,
    pos: usize,
}

impl ChunkPipe {
    fn spawn<R: Read + Send + 'static>(mut r: R) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(4);
        std::thread::spawn(move || {
            loop {
                let mut buf = vec![0u8; 1 << 20];
                let mut filled = 0;
                while filled < buf.len() {
                    match r.read(&mut buf[filled..]) {
                        Ok(0) => break,
                        Ok(n) => filled += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    }
                }
                if filled == 0 {
                    return;
                }
                buf.truncate(filled);
                if tx.send(Ok(buf)).is_err() {
                    return;
                }
            }
        });
        ChunkPipe {
            rx,
            cur: Vec::new(),
            pos: 0,
        }
    }
}

impl Read for ChunkPipe {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.cur.len() {
            match self.rx.recv() {
                Ok(Ok(v)) => {
                    self.cur = v;
                    self.pos = 0;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.cur.len() - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

fn parse<R: Read>(mut r: R) -> Result<K6Data, CsvError> {
    let mut ing: Option<Ingest> = None;
    let mut buf: Vec<u8> = vec![0; 1 << 20];
    let mut start = 0; // first unconsumed byte
    let mut end = 0; // bytes valid
    let mut line_no: u64 = 0;
    loop {
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        let n = r.read(&mut buf[end..])?;
        let eof = n == 0;
        end += n;
        loop {
            let slice = &buf[start..end];
            let (line, adv) = match memchr::memchr(b'\n', slice) {
                Some(i) => (&slice[..i], i + 1),
                None if eof && !slice.is_empty() => (slice, slice.len()),
                None => break,
            };
            line_no += 1;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match ing.as_mut() {
                None => ing = Some(Ingest::new(header(line)?)),
                Some(g) => {
                    if !line.is_empty() {
                        g.line(line, line_no)?;
                    }
                }
            }
            start += adv;
        }
        if end - start > MAX_LINE {
            return Err(CsvError::LineTooLong { line: line_no + 1 });
        }
        if eof {
            break;
        }
    }
    Ok(ing.ok_or(CsvError::Empty)?.finish())
}

fn header(line: &[u8]) -> Result<Cols, CsvError> {
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
fn split_fields(line: &[u8]) -> Vec<std::borrow::Cow<'_, [u8]>> {
    if memchr::memchr(b'"', line).is_none() {
        return line
            .split(|&b| b == b',')
            .map(std::borrow::Cow::Borrowed)
            .collect();
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
            out.push(std::borrow::Cow::Owned(std::mem::take(&mut cur)));
        } else {
            cur.push(b);
        }
        i += 1;
    }
    out.push(std::borrow::Cow::Owned(cur));
    out
}

struct Ingest {
    c: Cols,
    d: K6Data,
    last_step: usize,
    /// Timestamp of the first kept row: the others must lie within [`MAX_SPAN_MS`] of it.
    anchor_ms: Option<i64>,
}

#[derive(PartialEq)]
enum Metric {
    Duration,
    Dropped,
    Vus,
    VusMax,
}

impl Ingest {
    fn new(c: Cols) -> Self {
        Ingest {
            c,
            d: K6Data::default(),
            last_step: 0,
            anchor_ms: None,
        }
    }

    fn line(&mut self, line: &[u8], line_no: u64) -> Result<(), CsvError> {
        self.d.rows += 1;
        // Fast path: the metric name is the first column in k6's output; skip uninteresting rows.
        if self.c.name == 0 {
            let first = match memchr::memchr(b',', line) {
                Some(i) => &line[..i],
                None => line,
            };
            if metric_of(first).is_none() {
                return Ok(());
            }
        }
        let f = split_fields(line);
        let get = |i: usize| f.get(i).map(|c| c.as_ref()).unwrap_or(b"");
        let Some(metric) = metric_of(get(self.c.name)) else {
            return Ok(());
        };
        let ts = parse_ts(get(self.c.ts)).ok_or_else(|| CsvError::BadField {
            line: line_no,
            field: "timestamp",
            what: format!(
                "not a unix time or RFC 3339 time: {:?}",
                String::from_utf8_lossy(get(self.c.ts))
            ),
        })?;
        let ts_ms = if ts.1 {
            self.d.second_resolution = true;
            ts.0 * 1000
        } else {
            ts.0
        };
        let value = metric_value(get(self.c.value), &metric, line_no)?;
        if !self.in_window(ts_ms) {
            self.d.skipped_rows += 1;
            self.d.first_skipped_line.get_or_insert(line_no);
            return Ok(());
        }
        self.d.first_ms = Some(self.d.first_ms.map_or(ts_ms, |m| m.min(ts_ms)));
        self.d.last_ms = Some(self.d.last_ms.map_or(ts_ms, |m| m.max(ts_ms)));
        match metric {
            Metric::Vus => {
                self.d.vus.push((ts_ms, value));
                let s = self.d.timeline.get_mut(ts_ms.div_euclid(1000));
                s.vus = Some(s.vus.map_or(value, |v| v.max(value)));
            }
            Metric::VusMax => self.d.vus_max = self.d.vus_max.max(value),
            Metric::Dropped => {
                let n = value.max(0.0).round() as u64;
                let warm = self
                    .c
                    .scenario
                    .map(|i| get(i) == b"warmup")
                    .unwrap_or(false);
                if warm {
                    self.d.dropped_warmup += n;
                } else {
                    self.d.dropped_total += n;
                    self.d.first_drop_ms =
                        Some(self.d.first_drop_ms.map_or(ts_ms, |m| m.min(ts_ms)));
                    let sec = self.d.timeline.get_mut(ts_ms.div_euclid(1000));
                    sec.dropped = sec.dropped.saturating_add(n as u32);
                    let fine = self.d.timeline.fine_mut(ts_ms);
                    fine.1 = fine.1.saturating_add(n as u32);
                }
            }
            Metric::Duration => {
                let status: u16 = self
                    .c
                    .status
                    .and_then(|i| std::str::from_utf8(get(i)).ok()?.parse().ok())
                    .unwrap_or(0);
                let ok = match self.c.expected.map(get) {
                    Some(b"true") => true,
                    Some(b"false") => false,
                    _ => (200..400).contains(&status),
                };
                let err = self.c.error_code.map(get).unwrap_or(b"");
                let tag = self.step_tag(&f);
                self.request(ts_ms, value, status, ok, err, tag);
            }
        }
        Ok(())
    }

    /// Find the step tag of a row: dedicated `stage`/`step` columns, else `extra_tags`.
    fn step_tag<'a>(
        &self,
        f: &'a [std::borrow::Cow<'a, [u8]>],
    ) -> Option<(&'static str, &'a [u8])> {
        let get = |i: usize| f.get(i).map(|c| c.as_ref()).unwrap_or(b"");
        if let Some(i) = self.c.stage
            && !get(i).is_empty()
        {
            return Some(("stage", get(i)));
        }
        if let Some(i) = self.c.step
            && !get(i).is_empty()
        {
            return Some(("step", get(i)));
        }
        let extra = get(self.c.extra?);
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

    fn request(
        &mut self,
        end_ms: i64,
        dur_ms: f64,
        status: u16,
        ok: bool,
        err: &[u8],
        tag: Option<(&str, &[u8])>,
    ) {
        self.d.requests += 1;
        let start_ms = end_ms - dur_ms.round() as i64;
        self.d.first_request_ms = Some(
            self.d
                .first_request_ms
                .map_or(start_ms, |m| m.min(start_ms)),
        );
        // Timeline (all requests).
        {
            let s = self.d.timeline.get_mut(end_ms.div_euclid(1000));
            s.done += 1;
            if ok {
                s.ok += 1;
            }
            if status != 200 {
                s.non200 += 1;
            }
            s.hist
                .get_or_insert_with(Default::default)
                .record_ms(dur_ms);
            if ok {
                self.d.timeline.fine_mut(end_ms).0 += 1;
            }
        }
        self.d.timeline.get_mut(start_ms.div_euclid(1000)).started += 1;
        let mut t = start_ms;
        while t < end_ms {
            let sec_end = (t.div_euclid(1000) + 1) * 1000;
            let upto = sec_end.min(end_ms);
            self.d.timeline.get_mut(t.div_euclid(1000)).busy_ms += (upto - t) as f64;
            t = upto;
        }
        // Step.
        let Some((key, val)) = tag else {
            *self.d.excluded.entry("(untagged)".into()).or_default() += 1;
            return;
        };
        let idx = if self
            .d
            .steps
            .get(self.last_step)
            .is_some_and(|s| s.name.as_bytes() == val)
        {
            self.last_step
        } else if let Some(i) = self.d.steps.iter().position(|s| s.name.as_bytes() == val) {
            i
        } else {
            let v = String::from_utf8_lossy(val).into_owned();
            let Some(st) = parse_step_tag(key, &v) else {
                *self.d.excluded.entry(v).or_default() += 1;
                return;
            };
            self.d.convention.get_or_insert(st.convention);
            self.d.steps.push(StepAgg {
                name: v,
                tag: st,
                all: LatencyHist::new(),
                ok: LatencyHist::new(),
                requests: 0,
                ok_count: 0,
                statuses: BTreeMap::new(),
                error_codes: BTreeMap::new(),
                first_start_ms: start_ms,
                last_start_ms: start_ms,
                last_end_ms: end_ms,
            });
            self.d.steps.len() - 1
        };
        self.last_step = idx;
        let s = &mut self.d.steps[idx];
        s.requests += 1;
        s.all.record_ms(dur_ms);
        if ok {
            s.ok_count += 1;
            s.ok.record_ms(dur_ms);
        }
        *s.statuses.entry(status).or_default() += 1;
        if !err.is_empty() {
            *s.error_codes
                .entry(String::from_utf8_lossy(err).into_owned())
                .or_default() += 1;
        }
        s.first_start_ms = s.first_start_ms.min(start_ms);
        s.last_start_ms = s.last_start_ms.max(start_ms);
        s.last_end_ms = s.last_end_ms.max(end_ms);
    }

    /// Is a row at `ts_ms` plausible and within [`MAX_SPAN_MS`] of the first kept row?
    fn in_window(&mut self, ts_ms: i64) -> bool {
        if !PLAUSIBLE_MS.contains(&ts_ms) {
            return false;
        }
        let anchor = *self.anchor_ms.get_or_insert(ts_ms);
        ts_ms.abs_diff(anchor) <= MAX_SPAN_MS as u64
    }

    fn finish(mut self) -> K6Data {
        self.d.timeline.trim();
        self.d.steps.sort_by_key(|s| (s.tag.order, s.tag.target));
        self.d.vus.sort_by_key(|v| v.0);
        self.d
    }
}

fn metric_of(name: &[u8]) -> Option<Metric> {
    match name {
        b"http_req_duration" => Some(Metric::Duration),
        b"dropped_iterations" => Some(Metric::Dropped),
        b"vus" => Some(Metric::Vus),
        b"vus_max" => Some(Metric::VusMax),
        _ => None,
    }
}

/// A row's `metric_value`: a finite number in the range a real k6 run writes for `metric`.
fn metric_value(b: &[u8], metric: &Metric, line: u64) -> Result<f64, CsvError> {
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
fn parse_ts(b: &[u8]) -> Option<(i64, bool)> {
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
#[path = "k6csv_tests.rs"]
mod tests;
