//! `--set KEY=VALUE` overrides of an experiment's load/stack fields, validated like a file.
use super::diag::{Diagnostic, did_you_mean};
use super::schema::*;
use super::validate;
use serde_yaml::Value;
use std::path::Path;

/// Keys of `load:` (kept in sync with `LoadSettings` by a test).
pub(crate) const LOAD_KEYS: &[&str] = &[
    "script",
    "model",
    "endpoint",
    "steps",
    "hold_s",
    "ramp_s",
    "warmup_s",
    "warmup_rps",
    "slo_p95_ms",
    "slo_p99_ms",
    "error_budget",
    "abort",
    "abort_p95_ms",
    "pre_vus",
    "max_vus",
    "timeout_s",
    "think_time_s",
    "vu_cap_reason",
];
/// Keys of `stack.postgres:`.
pub(crate) const POSTGRES_KEYS: &[&str] = &["max_connections", "prewarm", "xact_delta"];

/// Every dotted key `--set` accepts for an experiment of `lab`.
pub(crate) fn settable_keys(lab: Lab) -> Vec<String> {
    // the keys of `stack.<lab>:` are the schema's (kept in sync with the settings structs by a test)
    let mut v: Vec<String> = LOAD_KEYS.iter().map(|k| format!("load.{k}")).collect();
    v.extend(
        lab.settings_keys()
            .iter()
            .map(|k| format!("stack.{lab}.{k}")),
    );
    if lab.uses_postgres() {
        v.extend(POSTGRES_KEYS.iter().map(|k| format!("stack.postgres.{k}")));
    }
    v
}

/// Resolve a key given as `load.hold_s`, `stack.php.max_children` or just `hold_s`.
pub(crate) fn resolve_key(lab: Lab, key: &str) -> Result<String, String> {
    let keys = settable_keys(lab);
    if keys.iter().any(|k| k == key) {
        return Ok(key.to_string());
    }
    // `php.max_children` (the stack section without `stack.`)
    let under_stack = format!("stack.{key}");
    if keys.contains(&under_stack) {
        return Ok(under_stack);
    }
    let short: Vec<&String> = keys
        .iter()
        .filter(|k| k.rsplit('.').next() == Some(key))
        .collect();
    if let [one] = short.as_slice() {
        return Ok((*one).clone());
    }
    let section = key.strip_prefix("stack.").unwrap_or(key).split('.').next();
    if let Some(sec) =
        section.filter(|s| *s == "postgres" || Lab::ALL.iter().any(|l| l.as_str() == *s))
        && !keys.iter().any(|k| k.starts_with(&format!("stack.{sec}.")))
    {
        return Err(format!(
            "the {lab} lab has no `{sec}` settings. Settable: {}",
            keys.join(", ")
        ));
    }
    let mut msg = format!("`{key}` is not a settable field of a {lab} experiment");
    let leafs = keys
        .iter()
        .map(|k| k.as_str())
        .chain(keys.iter().filter_map(|k| k.strip_prefix("stack.")))
        .chain(keys.iter().filter_map(|k| k.rsplit('.').next()));
    if let Some(s) = did_you_mean(key, leafs) {
        msg.push_str(&format!("; did you mean `{s}`?"));
    }
    Err(format!("{msg} Settable: {}", keys.join(", ")))
}

/// Apply `KEY=VALUE` overrides and re-validate. Errors name the override.
pub fn apply(
    e: &Experiment,
    sets: &[String],
) -> Result<(Experiment, Vec<Diagnostic>), Vec<Diagnostic>> {
    if sets.is_empty() {
        return Ok((e.clone(), Vec::new()));
    }
    let mut tree = serde_yaml::to_value(e).expect("an experiment always serializes");
    let mut errors = Vec::new();
    for s in sets {
        let origin = Path::new("--set");
        let Some((k, v)) = s.split_once('=') else {
            errors.push(
                Diagnostic::error(origin, s.as_str(), "expected KEY=VALUE")
                    .help("e.g. --set hold_s=10 or --set stack.php.max_children=40"),
            );
            continue;
        };
        let key = match resolve_key(e.lab, k.trim()) {
            Ok(k) => k,
            Err(m) => {
                errors.push(Diagnostic::error(origin, k.trim(), m));
                continue;
            }
        };
        let value = match parse_value(origin, &key, v.trim()) {
            Ok(x) => x,
            Err(d) => {
                errors.extend(d);
                continue;
            }
        };
        set_path(&mut tree, &key, value);
        // type-check each override on its own so the error names it
        if let Err(err) = serde_yaml::from_value::<Experiment>(tree.clone()) {
            let msg = super::catalog::from_serde(origin, "", &err, "").message;
            errors.push(
                Diagnostic::error(Path::new(&format!("--set {s}")), key, msg)
                    .help("check the value's type (numbers without quotes, lists as 60,90,120, true/false)"),
            );
            return Err(errors);
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let label = format!("--set {}", sets.join(" --set "));
    let origin = Path::new(&label);
    let new: Experiment = serde_yaml::from_value(tree).map_err(|err| {
        let mut d = super::catalog::from_serde(origin, "", &err, "");
        d.line = None;
        d.column = None;
        vec![d]
    })?;
    let diags = validate::check_experiment(origin, &new);
    if diags.iter().any(Diagnostic::is_error) {
        return Err(diags);
    }
    Ok((new, diags))
}

/// The YAML value of one override (`60,90,120` as a list for `steps`, and `100` as a list of
/// one step), its nesting bounded before the YAML parser sees it (50k brackets took 7 s).
fn parse_value(origin: &Path, key: &str, v: &str) -> Result<Value, Vec<Diagnostic>> {
    let list = key.ends_with(".steps");
    let text = if list && !v.trim_start().starts_with('[') {
        format!("[{v}]")
    } else {
        v.to_string()
    };
    if let Err(mut d) = super::bounds::check_source(origin, &text) {
        d.iter_mut().for_each(|d| {
            d.field = key.to_string();
            d.line = None;
            d.column = None;
        });
        return Err(d);
    }
    serde_yaml::from_str(&text).map_err(|err| {
        vec![Diagnostic::error(
            origin,
            key,
            format!("cannot parse `{v}`: {err}"),
        )]
    })
}

fn set_path(tree: &mut Value, key: &str, value: Value) {
    let mut cur = tree;
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        let map = match cur {
            Value::Mapping(m) => m,
            other => {
                *other = Value::Mapping(Default::default());
                let Value::Mapping(m) = other else {
                    unreachable!()
                };
                m
            }
        };
        let k = Value::String(p.to_string());
        if i + 1 == parts.len() {
            map.insert(k, value);
            return;
        }
        if !map.contains_key(&k) {
            map.insert(k.clone(), Value::Mapping(Default::default()));
        }
        cur = map.get_mut(&k).expect("just inserted");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_take_a_list_or_one_step() {
        let e = crate::stack::defaults::lab_experiment(Lab::Demo);
        for (set, want) in [
            ("load.steps=10", vec![10]),
            ("load.steps=10,20", vec![10, 20]),
            ("steps=[5, 8]", vec![5, 8]),
        ] {
            let (e, _) = apply(&e, &[set.to_string()]).unwrap_or_else(|d| panic!("{set}: {d:?}"));
            assert_eq!(e.load.steps, want, "{set}");
        }
        let d = apply(&e, &["load.steps=fast".into()]).unwrap_err();
        assert!(format!("{d:?}").contains("load.steps"), "{d:?}");
    }

    /// The key lists above equal the schema's fields (read from serde's "expected one of" list).
    #[test]
    fn key_lists_match_schema() {
        fn expected<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
            let err = serde_yaml::from_str::<T>("zz_not_a_key: 1")
                .unwrap_err()
                .to_string();
            err.split('`')
                .skip(3)
                .step_by(2)
                .map(String::from)
                .collect()
        }
        let sorted = |v: &[&str]| {
            let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
            v.sort();
            v
        };
        let mut l = expected::<LoadSettings>();
        // `load.pause` is a structure (at_s, for_s, ...) written in the YAML, not one `--set` value
        l.retain(|k| k != "pause");
        l.sort();
        assert_eq!(l, sorted(LOAD_KEYS));
        let mut p = expected::<PhpSettings>();
        p.sort();
        assert_eq!(p, sorted(Lab::Php.settings_keys()));
        let mut n = expected::<NodeSettings>();
        n.sort();
        assert_eq!(n, sorted(Lab::Node.settings_keys()));
        let mut g = expected::<PostgresSettings>();
        g.sort();
        assert_eq!(g, sorted(POSTGRES_KEYS));
        let mut m = expected::<DemoSettings>();
        m.sort();
        assert_eq!(m, sorted(Lab::Demo.settings_keys()));
    }

    #[test]
    fn short_keys_resolve_uniquely() {
        assert_eq!(resolve_key(Lab::Php, "hold_s").unwrap(), "load.hold_s");
        assert_eq!(
            resolve_key(Lab::Php, "max_children").unwrap(),
            "stack.php.max_children"
        );
        assert!(resolve_key(Lab::Node, "max_children").is_err());
        assert!(
            resolve_key(Lab::Php, "hold")
                .unwrap_err()
                .contains("did you mean")
        );
    }
}
