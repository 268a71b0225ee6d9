//! `--set KEY=VALUE` overrides of an experiment's load/stack fields, validated like a file.
use super::diag::Diagnostic;
use super::keys::resolve_key;
use super::schema::*;
use super::validate;
use serde_yaml::Value;
use std::path::Path;

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
            let msg = super::diag::from_serde(origin, "", &err, "").message;
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
        let mut d = super::diag::from_serde(origin, "", &err, "");
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
}
