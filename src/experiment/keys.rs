//! The keys `--set` and a `fit:` rule's `set:` name (`load.hold_s`, `stack.php.max_children`)
//! and how a short key (`hold_s`, `php.max_children`) resolves to one.
use super::diag::did_you_mean;
use super::schema::Lab;

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
    "recover_rps",
    "recover_s",
];
/// Keys inside `load:`'s structures that `--set` takes as one value each (a trigger-size ×
/// retry-policy map varies them: issue 44); the rest of `load.trigger` and `load.drop` is
/// written in the YAML. Setting one on an experiment without the structure is refused by the
/// schema (its other required fields are missing).
pub(crate) const NESTED_LOAD_KEYS: &[&str] = &[
    "trigger.for_s",
    "trigger.cut",
    "drop.retry",
    "drop.retry_budget",
    "drop.seed",
];
/// Keys of `stack.postgres:`.
pub(crate) const POSTGRES_KEYS: &[&str] = &["max_connections", "prewarm", "xact_delta", "auth"];

/// Every dotted key `--set` accepts for an experiment of `lab`.
pub(crate) fn settable_keys(lab: Lab) -> Vec<String> {
    // the keys of `stack.<lab>:` are the schema's (kept in sync with the settings structs by a test)
    let mut v: Vec<String> = LOAD_KEYS
        .iter()
        .chain(NESTED_LOAD_KEYS)
        .map(|k| format!("load.{k}"))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::schema::*;

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
        // `load.pause` and `load.actions` are structures written in the YAML, not one `--set`
        // value, and so are `load.drop` (journeys, retries) and `load.trigger`
        l.retain(|k| !["pause", "actions", "drop", "trigger"].contains(&k.as_str()));
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
