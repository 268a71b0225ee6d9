//! Ranges a real run can use, checked before anything is computed from them: the size and
//! nesting of a catalog file (before YAML parsing), and every number of `load:` and `stack:`
//! (before the plan's u32 arithmetic; [`limits`], whether from a file or `--set`), so hostile
//! input gets exit 2 in bounded memory and time.
use super::diag::Diagnostic;
use super::schema::{Experiment, StackSettings};
use std::io::Read;
use std::path::Path;

/// Largest catalog file read (bytes); the catalog's files are a few KiB.
pub(crate) const MAX_SOURCE: usize = 1 << 20;
/// Deepest nesting accepted (flow brackets, or block indentation and `- ` indicators).
pub(crate) const MAX_DEPTH: usize = 32;
/// Longest step list (also the most distinct steps `perflab analyze` reads from a k6 CSV: each
/// costs two HDR histograms there, 320 KiB).
pub(crate) const MAX_STEPS: usize = 256;
/// Largest step target (rps or VUs), warm-up rate and VU count.
pub(crate) const MAX_RATE: u32 = 1_000_000;
/// Longest hold, ramp and warm-up (s): one day.
pub(crate) const MAX_PHASE_S: u32 = 86_400;
/// Longest client timeout (s).
pub(crate) const MAX_TIMEOUT_S: u32 = 3_600;
/// Longest whole run (s): one week.
pub(crate) const MAX_TOTAL_S: u64 = 7 * 86_400;
/// Largest latency threshold (ms) and think time (s, as ms / 1000).
pub(crate) const MAX_MS: f64 = 3_600_000.0;

/// Read a catalog file, refusing one over [`MAX_SOURCE`] bytes without reading it all.
pub(crate) fn read_source(path: &Path) -> Result<String, Vec<Diagnostic>> {
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
pub(crate) fn check_source(path: &Path, src: &str) -> Result<(), Vec<Diagnostic>> {
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

/// Every number of `e` within what a run can do: [`limits`], the step count, the run's length.
pub(crate) fn check_bounds(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let l = &e.load;
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
    let total = l.steps.len() as u64 * (l.hold_s as u64 + l.ramp_s as u64) + l.warmup_s as u64;
    if total > MAX_TOTAL_S && l.hold_s <= MAX_PHASE_S && l.ramp_s <= MAX_PHASE_S {
        err(
            "load.hold_s",
            format!("the run would last {total} s: at most {MAX_TOTAL_S} s (a week)"),
        );
    }
    check_limits(file, e, d);
}

pub(crate) use crate::lab::Limit;

/// A [`Limit`] of `load:`, with the field's values in an experiment.
struct LoadLimit {
    key: &'static str,
    max: f64,
    unit: &'static str,
    what: &'static str,
    get: fn(&Experiment) -> Vec<f64>,
}

const fn limit(
    key: &'static str,
    max: f64,
    unit: &'static str,
    what: &'static str,
    get: fn(&Experiment) -> Vec<f64>,
) -> LoadLimit {
    LoadLimit {
        key,
        max,
        unit,
        what,
        get,
    }
}

/// Every numeric field of `load:` with its largest value; those of `stack:` are declared by
/// their sections' types (`lab::StackSettings::bounded`).
#[rustfmt::skip]
static LOAD: &[LoadLimit] = &[
    limit("load.steps", MAX_RATE as f64, "rps or VUs", "each step's offered load",
        |e| e.load.steps.iter().map(|s| f64::from(*s)).collect()),
    limit("load.hold_s", MAX_PHASE_S as f64, "s", "a step's measured hold (one day)",
        |e| vec![f64::from(e.load.hold_s)]),
    limit("load.ramp_s", MAX_PHASE_S as f64, "s", "the ramp before each hold",
        |e| vec![f64::from(e.load.ramp_s)]),
    limit("load.warmup_s", MAX_PHASE_S as f64, "s", "the warm-up scenario",
        |e| vec![f64::from(e.load.warmup_s)]),
    limit("load.warmup_rps", MAX_RATE as f64, "rps", "the warm-up's arrival rate",
        |e| vec![f64::from(e.load.warmup_rps)]),
    limit("load.slo_p95_ms", MAX_MS, "ms", "the p95 SLO (an hour)",
        |e| vec![e.load.slo_p95_ms]),
    limit("load.slo_p99_ms", MAX_MS, "ms", "the p99 SLO", |e| e.load.slo_p99_ms.into_iter().collect()),
    limit("load.error_budget", 1.0, "fraction", "the error budget (and above 0, below 1)",
        |e| vec![e.load.error_budget]),
    limit("load.abort_p95_ms", MAX_MS, "ms", "stepped.js's abort guard", |e| e.load.abort_p95_ms.into_iter().collect()),
    limit("load.pre_vus", MAX_RATE as f64, "VUs", "VUs allocated before the test",
        |e| vec![f64::from(e.load.pre_vus)]),
    limit("load.max_vus", MAX_RATE as f64, "VUs", "k6's VU ceiling",
        |e| vec![f64::from(e.load.max_vus)]),
    limit("load.timeout_s", MAX_TIMEOUT_S as f64, "s", "the client timeout (an hour)",
        |e| vec![f64::from(e.load.timeout_s)]),
    limit("load.think_time_s", MAX_MS / 1000.0, "s", "the closed model's think time", |e| e.load.think_time_s.into_iter().collect()),
    limit("load.recover_rps", MAX_RATE as f64, "rps", "the recovery phase's rate (below the peak)",
        |e| e.load.recover_rps.map(f64::from).into_iter().collect()),
    limit("load.recover_s", MAX_PHASE_S as f64, "s", "the recovery phase's hold",
        |e| e.load.recover_s.map(f64::from).into_iter().collect()),
    limit("load.trigger.for_s", MAX_PHASE_S as f64, "s", "how long a CPU cut lasts (and shorter than its step's hold)",
        |e| e.load.trigger.iter().map(|t| t.for_s).collect()),
    limit("load.trigger.cut", 1.0, "fraction", "the share of the CPU a cut takes away",
        |e| e.load.trigger.iter().filter_map(|t| t.cut).collect()),
    limit("load.drop.retry_budget", 1.0, "fraction", "retries as a share of the requests",
        |e| e.load.drop.iter().filter_map(|d| d.retry_budget).collect()),
    limit("load.drop.seed", MAX_RATE as f64, "", "the clients' random seed",
        |e| e.load.drop.iter().filter_map(|d| d.seed.map(f64::from)).collect()),
];

/// Every numeric field of `load:` and `stack:` (the keys `--set` takes) with its bound and,
/// given an experiment, its values there (none when its section or option is absent). A test
/// keeps it complete.
fn rows(e: Option<&Experiment>) -> Vec<(Limit, Vec<f64>)> {
    let load = LOAD.iter().map(|l| {
        let limit = Limit {
            key: l.key.to_string(),
            max: l.max,
            unit: l.unit,
            what: l.what,
        };
        (limit, e.map_or(Vec::new(), l.get))
    });
    let bounded = e.map_or_else(|| StackSettings::default().bounded(), |e| e.stack.bounded());
    let stack = bounded
        .into_iter()
        .map(|(limit, value)| (limit, value.into_iter().collect()));
    load.chain(stack).collect()
}

/// Every numeric field's bound, `load:`'s then `stack:`'s (each lab's in the registry's order).
pub(crate) fn limits() -> Vec<Limit> {
    rows(None).into_iter().map(|(l, _)| l).collect()
}

/// Every number of `e` within its [`Limit`]: the error names the field (the element of a
/// list), the value, the bound and the fix.
fn check_limits(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    for (l, values) in rows(Some(e)) {
        let Some((i, v)) = values
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v <= l.max))
        else {
            continue;
        };
        let field = match l.key.as_str() {
            "load.steps" => format!("{}[{i}]", l.key),
            k => k.to_string(),
        };
        let msg = match v.is_finite() {
            true => format!("{v} is above {}", l.max),
            false => format!("{v} is not a finite number up to {}", l.max),
        };
        d.push(Diagnostic::error(file, field, msg).help(format!(
            "{}: at most {} {}; a value no real run uses, check the units",
            l.what, l.max, l.unit
        )));
    }
}

/// The bounds table of [`limits`] (docs/reference/experiment-yaml.md; tests/offline/docs.rs keeps it current).
pub fn markdown() -> String {
    let mut out = String::from("| key | at most | unit | what |\n|---|---:|---|---|\n");
    for l in limits() {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            l.key, l.max, l.unit, l.what
        ));
    }
    out
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

    fn catalog_experiment(id: &str) -> Experiment {
        let path = format!("{}/experiments/{id}.yaml", env!("CARGO_MANIFEST_DIR"));
        serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn load_numbers_past_a_real_run_are_errors_naming_the_field() {
        let e = catalog_experiment("1a");
        let fields = |e: &Experiment| {
            let mut d = Vec::new();
            check_bounds(Path::new("1a.yaml"), e, &mut d);
            d.into_iter().map(|d| d.field).collect::<Vec<_>>()
        };
        assert!(fields(&e).is_empty());
        let mut x = e.clone();
        x.load.hold_s = 1_000_000_000;
        x.load.slo_p95_ms = f64::INFINITY;
        x.load.think_time_s = Some(f64::NAN);
        x.load.steps.push(u32::MAX);
        assert_eq!(
            fields(&x),
            [
                "load.steps[7]",
                "load.hold_s",
                "load.slo_p95_ms",
                "load.think_time_s"
            ]
        );
        let mut x = e.clone();
        x.load.hold_s = 80_000;
        x.load.steps = (1..=10).collect();
        assert_eq!(fields(&x), ["load.hold_s"]);
    }

    /// [`one_per_lab`] and the catalog's drop-stuck, whose `load.trigger` and `load.drop` the
    /// nested keys set.
    fn with_a_trigger() -> Vec<Experiment> {
        let mut v = one_per_lab();
        v.push(catalog_experiment("drop-stuck"));
        v
    }

    /// One experiment of each lab of the registry (the unit tests' toy lab too): its defaults.
    fn one_per_lab() -> Vec<Experiment> {
        crate::lab::Lab::ALL
            .into_iter()
            .map(crate::stack::defaults::lab_experiment)
            .collect()
    }

    /// Every key `--set` takes that holds a number has a bound, and every bound is a key
    /// `--set` takes: a key is numeric when `7` (or `[7]`) is not a type error there. Over
    /// every lab of the registry, so a lab's numeric setting without a `Section::BOUNDS` row
    /// fails here.
    #[test]
    fn every_numeric_settable_key_has_a_limit() {
        use crate::experiment::{keys::settable_keys, overrides::apply};
        let mut numeric = std::collections::BTreeSet::new();
        for e in with_a_trigger() {
            for key in settable_keys(e.lab) {
                // a structure the experiment lacks ("missing field") says nothing of the type
                let typed = ["7", "[7]"]
                    .iter()
                    .any(|v| match apply(&e, &[format!("{key}={v}")]) {
                        Ok(_) => true,
                        Err(d) => !d.iter().any(|d| {
                            d.message.contains("invalid type")
                                || d.message.contains("missing field")
                        }),
                    });
                if typed {
                    numeric.insert(key);
                }
            }
        }
        let rows: std::collections::BTreeSet<String> =
            limits().into_iter().map(|l| l.key).collect();
        let unbounded: Vec<&String> = numeric.difference(&rows).collect();
        assert!(
            unbounded.is_empty(),
            "numeric settings without a bound: {unbounded:?}"
        );
        assert_eq!(numeric, rows);
    }

    /// Past each row's bound `--set` is refused naming the key, the value and the bound; at
    /// the bound it is not refused for its size.
    #[test]
    fn set_past_each_limit_is_refused_naming_key_value_and_bound() {
        use crate::experiment::{keys::settable_keys, overrides::apply};
        for l in limits() {
            let l = &l;
            let e = with_a_trigger()
                .into_iter()
                .find(|e| {
                    let nested = ["load.trigger.", "load.drop."]
                        .iter()
                        .any(|p| l.key.starts_with(p));
                    settable_keys(e.lab).contains(&l.key) && (!nested || e.load.trigger.is_some())
                })
                .unwrap();
            let list = |v: f64| match l.key.as_str() {
                "load.steps" => format!("[{v}]"),
                _ => v.to_string(),
            };
            let over = format!("{}={}", l.key, list(l.max + 1.0));
            let d = apply(&e, std::slice::from_ref(&over)).unwrap_err();
            let field = if l.key == "load.steps" {
                "load.steps[0]"
            } else {
                l.key.as_str()
            };
            let hit = d
                .iter()
                .find(|d| d.field == field && d.is_error())
                .unwrap_or_else(|| panic!("{over}: {d:?}"));
            let text = hit.to_string();
            for says in [
                format!("--set {over}"),
                format!("{} is above {}", l.max + 1.0, l.max),
                l.unit.to_string(),
            ] {
                assert!(text.contains(&says), "{over}: {text}");
            }
            let at = format!("{}={}", l.key, list(l.max));
            if let Err(d) = apply(&e, std::slice::from_ref(&at)) {
                assert!(
                    d.iter().all(|d| !d.message.contains("is above")),
                    "{at}: {d:?}"
                );
            }
        }
        let e = catalog_experiment("exp1");
        let d = apply(&e, &["stack.php.burn_us=4294967295".into()]).unwrap_err();
        assert_eq!(d[0].message, "4294967295 is above 1000000");
    }

    #[test]
    fn the_limits_table_lists_every_row() {
        let t = markdown();
        assert_eq!(t.lines().count(), limits().len() + 2);
        assert!(t.contains("| `stack.php.burn_us` | 1000000 | µs | CPU burnt per request (1 s) |"));
    }

    /// `stack.node.wait_us`: Node's timers count whole milliseconds, so a value that is not a
    /// multiple of 1000 is refused naming the field and the two nearest values; past 10 s the
    /// bound refuses it; a whole number of ms is accepted and reaches the app's environment.
    #[test]
    fn the_node_wait_is_whole_milliseconds_within_its_bound() {
        use crate::experiment::overrides::apply;
        let e = catalog_experiment("2a");
        let d = apply(&e, &["stack.node.wait_us=2500".into()]).unwrap_err();
        let text = d
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(d.iter().any(|d| d.field == "stack.node.wait_us"), "{text}");
        assert!(
            text.contains("2500 is not a whole number of milliseconds"),
            "{text}"
        );
        assert!(text.contains("e.g. 2000 or 3000"), "{text}");
        let d = apply(&e, &["stack.node.wait_us=20000000".into()]).unwrap_err();
        assert!(
            d.iter().any(|d| d.message == "20000000 is above 10000000"),
            "{d:?}"
        );
        let (ok, _) = apply(&e, &["stack.node.wait_us=3000".into()]).unwrap();
        assert_eq!(ok.stack.node.as_ref().unwrap().wait_us, 3000);
        assert_eq!(
            ok.stack.injected(),
            ["stack.node.wait_us=3000 (3000 µs of waiting per answer in the app, no CPU)"]
        );
    }

    /// `stack.node.cpu_mode` and its two pools (issue 41, item 6): a mode that is not one of
    /// the three is refused naming the field, a pool of 0 is an error, a pool the mode does not
    /// use is a warning naming it with the fix, and the mode and pool reach the app's
    /// environment and the stack's summary.
    #[test]
    fn the_node_cpu_mode_and_its_pools_are_checked() {
        use crate::experiment::overrides::apply;
        use crate::lab::{Lab, StartContext, descriptor};
        let e = catalog_experiment("2a");
        let text = |d: &[crate::experiment::Diagnostic]| {
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let d = apply(&e, &["stack.node.cpu_mode=threads".into()]).unwrap_err();
        assert!(
            d.iter().any(|d| d.field == "stack.node.cpu_mode"),
            "{}",
            text(&d)
        );
        for v in ["sync", "async", "workers"] {
            assert!(text(&d).contains(v), "{}", text(&d));
        }
        let d = apply(&e, &["stack.node.uv_threadpool_size=0".into()]).unwrap_err();
        let hit = d
            .iter()
            .find(|d| d.field == "stack.node.uv_threadpool_size");
        assert_eq!(
            hit.map(|d| d.message.as_str()),
            Some("must be > 0"),
            "{}",
            text(&d)
        );
        let (_, warn) = apply(&e, &["stack.node.worker_threads=8".into()]).unwrap();
        assert_eq!(warn.len(), 1, "{}", text(&warn));
        assert_eq!(warn[0].field, "stack.node.worker_threads");
        let w = text(&warn);
        assert!(
            w.contains("worker_threads 8 has no effect on /cpu under cpu_mode sync"),
            "{w}"
        );
        assert!(w.contains("set stack.node.cpu_mode to workers"), "{w}");
        let sets = [
            "stack.node.cpu_mode=workers".into(),
            "stack.node.worker_threads=8".into(),
        ];
        let (ok, warn) = apply(&e, &sets).unwrap();
        assert!(warn.is_empty(), "{}", text(&warn));
        let ctx = StartContext {
            password: "pw".into(),
            monitor_password: "mpw".into(),
            app_cpus: 1,
            nofile: 4096,
            sampler_addr: "172.30.0.1".into(),
        };
        let node = descriptor(Lab::Node);
        let env = node.containers(&ok.stack, &ctx).unwrap()[1].env.clone();
        for (k, v) in [
            ("CPU_MODE", "workers"),
            ("WORKER_THREADS", "8"),
            ("UV_THREADPOOL_SIZE", "4"),
        ] {
            assert!(env.contains(&(k.into(), v.into())), "{k}: {env:?}");
        }
        let summary = node.summary(&ok.stack).unwrap();
        assert!(summary.contains(", /cpu on 8 worker_threads"), "{summary}");
        let (a, _) = apply(&e, &["stack.node.cpu_mode=async".into()]).unwrap();
        let env = node.containers(&a.stack, &ctx).unwrap()[1].env.clone();
        assert!(
            env.contains(&("CPU_MODE".into(), "async".into())),
            "{env:?}"
        );
        // the published 2a is unchanged: sync, written as before (no new keys when serialized)
        let yaml = serde_yaml::to_string(&e.stack).unwrap();
        assert!(
            !yaml.contains("cpu_mode") && !yaml.contains("threadpool"),
            "{yaml}"
        );
    }
}
