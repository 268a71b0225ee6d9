//! One streaming pass over k6's CSV text: rows into per-step histograms and the timeline.
use super::data::{CsvError, K6Data, MAX_LINE, MAX_SPAN_MS, StepAgg, parse_step_tag};
use super::fields::{Cols, Metric, field, header, metric_of, metric_value, parse_ts, split_fields};
use super::window::{Admit, Window};
use crate::analyze::hist::LatencyHist;
use crate::experiment::bounds::MAX_STEPS;

/// The most `vus` rows read: four a second over the whole window (k6 writes one a second).
pub(super) const MAX_VUS_SAMPLES: usize = 4 * 2 * (MAX_SPAN_MS / 1000) as usize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;

/// One pass over the CSV text: the header line, then every row. Memory is bounded: a line over
/// [`MAX_LINE`] bytes is an error, never a reason to grow the buffer.
pub(super) fn parse<R: Read>(mut r: R) -> Result<K6Data, CsvError> {
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
            if line.len() > MAX_LINE {
                return Err(CsvError::LineTooLong { line: line_no });
            }
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            match ing.as_mut() {
                // A UTF-8 BOM (an editor's) before the header is no part of its first column.
                None => {
                    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
                    ing = Some(Ingest::new(header(line)?))
                }
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
    ing.ok_or(CsvError::Empty)?.finish()
}

/// The state of one pass: the columns, what is counted so far, the last row's step, and which
/// rows are kept.
struct Ingest {
    c: Cols,
    d: K6Data,
    last_step: usize,
    window: Window,
}

/// A row of a metric the analysis reads, its numbers checked.
struct Row {
    metric: Metric,
    ts_ms: i64,
    /// The timestamp was whole seconds.
    secs: bool,
    value: f64,
}

/// One `http_req_duration` row.
struct Request<'a> {
    end_ms: i64,
    dur_ms: f64,
    status: u16,
    ok: bool,
    /// k6's `error_code` (empty when none).
    err: &'a [u8],
    /// (`stage` or `step`, value).
    tag: Option<(&'static str, &'a [u8])>,
}

impl Ingest {
    fn new(c: Cols) -> Self {
        Ingest {
            c,
            d: K6Data::default(),
            last_step: 0,
            window: Window::default(),
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
        let Some(row) = self.decode(&f, line_no)? else {
            return Ok(());
        };
        match self.window.admit(row.ts_ms, line_no, line) {
            Admit::Keep => self.row(row, &f, line_no)?,
            Admit::Skip => {}
            Admit::Wait if self.window.ready() => self.settle()?,
            Admit::Wait => {}
        }
        Ok(())
    }

    /// The row's metric, time and value; `None` for a metric the analysis does not read.
    fn decode(&self, f: &[Cow<'_, [u8]>], line_no: u64) -> Result<Option<Row>, CsvError> {
        let Some(metric) = metric_of(field(f, self.c.name)) else {
            return Ok(None);
        };
        let b = field(f, self.c.ts);
        let (ts, secs) = parse_ts(b).ok_or_else(|| CsvError::BadField {
            line: line_no,
            field: "timestamp",
            what: format!(
                "not a unix time or RFC 3339 time: {:?}",
                String::from_utf8_lossy(b)
            ),
        })?;
        let value = metric_value(field(f, self.c.value), &metric, line_no)?;
        let ts_ms = if secs { ts * 1000 } else { ts };
        Ok(Some(Row {
            metric,
            ts_ms,
            secs,
            value,
        }))
    }

    /// The rows held back until the window's anchor was chosen, now counted.
    fn settle(&mut self) -> Result<(), CsvError> {
        for p in self.window.settle() {
            let f = split_fields(&p.line);
            if let Some(row) = self.decode(&f, p.line_no)? {
                self.row(row, &f, p.line_no)?;
            }
        }
        Ok(())
    }

    /// Count one kept row.
    fn row(&mut self, row: Row, f: &[Cow<'_, [u8]>], line_no: u64) -> Result<(), CsvError> {
        let Row {
            metric,
            ts_ms,
            secs,
            value,
        } = row;
        self.d.second_resolution |= secs;
        self.d.first_ms = Some(self.d.first_ms.map_or(ts_ms, |m| m.min(ts_ms)));
        self.d.last_ms = Some(self.d.last_ms.map_or(ts_ms, |m| m.max(ts_ms)));
        match metric {
            Metric::Vus => {
                if self.d.vus.len() >= MAX_VUS_SAMPLES {
                    return Err(CsvError::BadField {
                        line: line_no,
                        field: "metric_name",
                        what: format!(
                            "more than {MAX_VUS_SAMPLES} `vus` rows: k6 writes one a second"
                        ),
                    });
                }
                self.d.vus.push((ts_ms, value));
                let s = self.d.timeline.get_mut(ts_ms.div_euclid(1000));
                s.vus = Some(s.vus.map_or(value, |v| v.max(value)));
            }
            Metric::VusMax => self.d.vus_max = self.d.vus_max.max(value),
            Metric::Dropped => {
                let warm = self.c.scenario.is_some_and(|i| field(f, i) == b"warmup");
                self.dropped(ts_ms, value.round() as u64, warm);
            }
            Metric::Duration => {
                let r = self.request_of(f, ts_ms, value);
                return self.request(r, line_no);
            }
        }
        Ok(())
    }

    fn dropped(&mut self, ts_ms: i64, n: u64, warm: bool) {
        if warm {
            self.d.dropped_warmup += n;
        } else {
            self.d.dropped_total += n;
            self.d.first_drop_ms = Some(self.d.first_drop_ms.map_or(ts_ms, |m| m.min(ts_ms)));
            self.d.timeline.record_drop(ts_ms, n as u32);
        }
    }

    /// The request of an `http_req_duration` row completed at `end_ms` after `dur_ms`.
    fn request_of<'a>(&self, f: &'a [Cow<'a, [u8]>], end_ms: i64, dur_ms: f64) -> Request<'a> {
        let status: u16 = self
            .c
            .status
            .and_then(|i| std::str::from_utf8(field(f, i)).ok()?.parse().ok())
            .unwrap_or(0);
        let ok = match self.c.expected.map(|i| field(f, i)) {
            Some(b"true") => true,
            Some(b"false") => false,
            _ => (200..400).contains(&status),
        };
        Request {
            end_ms,
            dur_ms,
            status,
            ok,
            err: self.c.error_code.map(|i| field(f, i)).unwrap_or(b""),
            tag: self.c.step_tag(f),
        }
    }

    fn request(&mut self, r: Request, line_no: u64) -> Result<(), CsvError> {
        self.d.requests += 1;
        let start_ms = r.end_ms - r.dur_ms.round() as i64;
        self.d.first_request_ms = Some(
            self.d
                .first_request_ms
                .map_or(start_ms, |m| m.min(start_ms)),
        );
        self.d
            .timeline
            .record_request(start_ms, r.end_ms, r.dur_ms, r.status, r.ok);
        let Some((key, val)) = r.tag else {
            *self.d.excluded.entry("(untagged)".into()).or_default() += 1;
            return Ok(());
        };
        let Some(idx) = self.step_index(key, val, start_ms, r.end_ms, line_no)? else {
            return Ok(());
        };
        self.last_step = idx;
        let s = &mut self.d.steps[idx];
        s.requests += 1;
        s.all.record_ms(r.dur_ms);
        if r.ok {
            s.ok_count += 1;
            s.ok.record_ms(r.dur_ms);
        }
        *s.statuses.entry(r.status).or_default() += 1;
        if !r.err.is_empty() {
            count_distinct(&mut s.error_codes, String::from_utf8_lossy(r.err));
        }
        s.first_start_ms = s.first_start_ms.min(start_ms);
        s.last_start_ms = s.last_start_ms.max(start_ms);
        s.last_end_ms = s.last_end_ms.max(r.end_ms);
        Ok(())
    }

    /// The step a tag value names: the last row's, a known one, or a new one; `None` (and
    /// counted as excluded) when the value is no step (ramp, warm-up).
    /// More than [`MAX_STEPS`] steps is an error (each costs two HDR histograms, 320 KiB).
    fn step_index(
        &mut self,
        key: &'static str,
        val: &[u8],
        start_ms: i64,
        end_ms: i64,
        line_no: u64,
    ) -> Result<Option<usize>, CsvError> {
        if self
            .d
            .steps
            .get(self.last_step)
            .is_some_and(|s| s.name.as_bytes() == val)
        {
            return Ok(Some(self.last_step));
        }
        if let Some(i) = self.d.steps.iter().position(|s| s.name.as_bytes() == val) {
            return Ok(Some(i));
        }
        let v = String::from_utf8_lossy(val);
        let Some(st) = parse_step_tag(key, &v) else {
            if key == "stage" && v == crate::plan::RECOVER_TAG {
                let (a, b) = self.d.recover_span.unwrap_or((start_ms, start_ms));
                self.d.recover_span = Some((a.min(start_ms), b.max(start_ms)));
                self.d.recover_sent += 1;
            }
            count_distinct(&mut self.d.excluded, v);
            return Ok(None);
        };
        if self.d.steps.len() >= MAX_STEPS {
            return Err(CsvError::BadField {
                line: line_no,
                field: key,
                what: format!(
                    "step `{v}` is past {MAX_STEPS} distinct steps: no perflab plan has that many"
                ),
            });
        }
        let v = v.into_owned();
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
        Ok(Some(self.d.steps.len() - 1))
    }

    fn finish(mut self) -> Result<K6Data, CsvError> {
        self.settle()?;
        self.d.skipped_rows = self.window.skipped;
        self.d.first_skipped_line = self.window.first_skipped_line;
        self.d.timeline.trim();
        self.d.steps.sort_by_key(|s| (s.tag.order, s.tag.target));
        self.d.vus.sort_by_key(|v| v.0);
        Ok(self.d)
    }
}

/// Distinct labels kept in a count map (excluded tags, error codes); the rest add up under
/// [`OTHER`], so a file of ever-new labels cannot grow the map with its size.
const MAX_LABELS: usize = 256;
const OTHER: &str = "(other)";

fn count_distinct(m: &mut BTreeMap<String, u64>, label: Cow<'_, str>) {
    let key = if m.len() < MAX_LABELS || m.contains_key(label.as_ref()) {
        label.into_owned()
    } else {
        OTHER.to_string()
    };
    *m.entry(key).or_default() += 1;
}
