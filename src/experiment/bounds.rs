//! Ranges a real run can use, checked before anything is computed from them: the size and
//! nesting of a catalog file (before YAML parsing), and the numbers of `load:` (before the
//! plan's u32 arithmetic), so hostile input gets exit 2 in bounded memory and time.
use super::diag::Diagnostic;
use super::schema::LoadSettings;
use std::io::Read;
use std::path::Path;

/// Largest catalog file read (bytes); the catalog's files are a few KiB.
pub const MAX_SOURCE: usize = 1 << 20;
/// Deepest nesting accepted (flow brackets, or block indentation and `- ` indicators).
pub const MAX_DEPTH: usize = 32;
/// Longest step list (also the most distinct steps `perflab analyze` reads from a k6 CSV: each
/// costs two HDR histograms there, 320 KiB).
pub const MAX_STEPS: usize = 256;
/// Largest step target (rps or VUs), warm-up rate and VU count.
pub const MAX_RATE: u32 = 1_000_000;
/// Longest hold, ramp and warm-up (s): one day.
pub const MAX_PHASE_S: u32 = 86_400;
/// Longest client timeout (s).
pub const MAX_TIMEOUT_S: u32 = 3_600;
/// Longest whole run (s): one week.
pub const MAX_TOTAL_S: u64 = 7 * 86_400;
/// Largest latency threshold (ms) and think time (s, as ms / 1000).
pub const MAX_MS: f64 = 3_600_000.0;

/// Read a catalog file, refusing one over [`MAX_SOURCE`] bytes without reading it all.
pub fn read_source(path: &Path) -> Result<String, Vec<Diagnostic>> {
    let f = std::fs::File::open(path)
        .map_err(|e| vec![Diagnostic::error(path, "", format!("cannot read: {e}"))])?;
    let mut buf = Vec::new();
    f.take(MAX_SOURCE as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| vec![Diagnostic::error(path, "", format!("cannot read: {e}"))])?;
    if buf.len() > MAX_SOURCE {
        return Err(too_big(path));
    }
    String::from_utf8(buf)
        .map_err(|e| vec![Diagnostic::error(path, "", format!("not UTF-8 text: {e}"))])
}

fn too_big(path: &Path) -> Vec<Diagnostic> {
    vec![
        Diagnostic::error(path, "", format!("larger than {MAX_SOURCE} bytes"))
            .help("a catalog file is a few KiB of YAML: is this the right file?"),
    ]
}

/// Size and nesting of a source text, checked before the YAML parser sees it (deep nesting made
/// it quadratic). The error carries the line where the limit is passed.
pub fn check_source(path: &Path, src: &str) -> Result<(), Vec<Diagnostic>> {
    if src.len() > MAX_SOURCE {
        return Err(too_big(path));
    }
    let mut flow = 0usize;
    for (n, line) in src.lines().enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let mut rest = line.trim_start();
        let mut dashes = 0;
        while let Some(r) = rest.strip_prefix("- ").or_else(|| rest.strip_prefix("? ")) {
            dashes += 1;
            rest = r.trim_start();
        }
        let mut quote = None;
        for c in rest.chars() {
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '#') => break,
                (None, '[' | '{') => flow += 1,
                (None, ']' | '}') => flow = flow.saturating_sub(1),
                _ => {}
            }
            if flow > MAX_DEPTH {
                break;
            }
        }
        if flow > MAX_DEPTH || dashes > MAX_DEPTH || indent > 8 * MAX_DEPTH {
            return Err(vec![Diagnostic::error(
                path,
                "",
                format!("nested deeper than {MAX_DEPTH} levels"),
            )
            .help("an experiment nests a few levels (load:, expect:); is this the right file?")
            .at(Some((n + 1, 1)))]);
        }
    }
    Ok(())
}

/// The numbers of `load:` within what a run can do.
pub fn check_load_bounds(file: &Path, l: &LoadSettings, d: &mut Vec<Diagnostic>) {
    let mut err = |field: &str, msg: String| {
        d.push(
            Diagnostic::error(file, field, msg).help("a value no real run uses: check the units"),
        )
    };
    if l.steps.len() > MAX_STEPS {
        err(
            "load.steps",
            format!("{} steps: at most {MAX_STEPS}", l.steps.len()),
        );
    }
    if let Some((i, s)) = l.steps.iter().enumerate().find(|(_, s)| **s > MAX_RATE) {
        err(
            &format!("load.steps[{i}]"),
            format!("{s} is above {MAX_RATE}"),
        );
    }
    for (field, v, max) in [
        ("load.hold_s", l.hold_s, MAX_PHASE_S),
        ("load.ramp_s", l.ramp_s, MAX_PHASE_S),
        ("load.warmup_s", l.warmup_s, MAX_PHASE_S),
        ("load.timeout_s", l.timeout_s, MAX_TIMEOUT_S),
        ("load.warmup_rps", l.warmup_rps, MAX_RATE),
        ("load.max_vus", l.max_vus, MAX_RATE),
        ("load.pre_vus", l.pre_vus, MAX_RATE),
    ] {
        if v > max {
            err(field, format!("{v} is above {max}"));
        }
    }
    let total = l.steps.len() as u64 * (l.hold_s as u64 + l.ramp_s as u64) + l.warmup_s as u64;
    if total > MAX_TOTAL_S && l.hold_s <= MAX_PHASE_S && l.ramp_s <= MAX_PHASE_S {
        err(
            "load.hold_s",
            format!("the run would last {total} s: at most {MAX_TOTAL_S} s (a week)"),
        );
    }
    for (field, v, max) in [
        ("load.slo_p95_ms", Some(l.slo_p95_ms), MAX_MS),
        ("load.slo_p99_ms", l.slo_p99_ms, MAX_MS),
        ("load.abort_p95_ms", l.abort_p95_ms, MAX_MS),
        ("load.think_time_s", l.think_time_s, MAX_MS / 1000.0),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v <= max)) {
            err(field, format!("{v} is not a finite number up to {max}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deep_flow_nesting_is_refused_with_its_line() {
        let p = Path::new("x.yaml");
        let deep = format!(
            "kind: experiment\nload: {}{}\n",
            "[".repeat(50_000),
            "]".repeat(50_000)
        );
        let e = check_source(p, &deep).unwrap_err();
        assert_eq!(e[0].line, Some(2));
        let dashes = format!("load:\n{}x\n", "- ".repeat(100));
        assert_eq!(check_source(p, &dashes).unwrap_err()[0].line, Some(2));
        let ok = "load: {steps: [1, 2], hold_s: 5}\nd: \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n";
        assert!(check_source(p, ok).is_ok());
    }

    #[test]
    fn load_numbers_past_a_real_run_are_errors_naming_the_field() {
        let src =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/1a.yaml"))
                .unwrap();
        let e: crate::experiment::Experiment = serde_yaml::from_str(&src).unwrap();
        let fields = |l: &LoadSettings| {
            let mut d = Vec::new();
            check_load_bounds(Path::new("1a.yaml"), l, &mut d);
            d.into_iter().map(|d| d.field).collect::<Vec<_>>()
        };
        assert!(fields(&e.load).is_empty());
        let mut l = e.load.clone();
        l.hold_s = 1_000_000_000;
        l.slo_p95_ms = f64::INFINITY;
        l.think_time_s = Some(f64::NAN);
        l.steps.push(u32::MAX);
        assert_eq!(
            fields(&l),
            [
                "load.steps[7]",
                "load.hold_s",
                "load.slo_p95_ms",
                "load.think_time_s"
            ]
        );
        let mut l = e.load.clone();
        l.hold_s = 80_000;
        l.steps = (1..=10).collect();
        assert_eq!(fields(&l), ["load.hold_s"]);
    }
}
