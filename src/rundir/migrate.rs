//! Migrations of older run-directory files to the current schema, one version step at a time:
//! the only place that handles a file's JSON before it is typed.
use anyhow::{bail, ensure};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// Version of `manifest.json`. 2: typed measurements, the sampler agents' line counts in one
/// map (`sampler_agent_cgroup_lines`).
pub const MANIFEST_SCHEMA_VERSION: u32 = 2;

/// The `schema_version` every file carries.
#[derive(Deserialize)]
struct Versioned {
    schema_version: u32,
}

/// A manifest's text as `T` of the current schema: parsed straight into `T` when it already is
/// current (no JSON tree built: `index` and `compare --no-run` read a manifest per run
/// directory, and the tree and its copy were most of their time), else through the JSON value
/// and [`manifest_to_current`].
pub(crate) fn manifest_from_text<T: DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    let Versioned { schema_version } = serde_json::from_str(text)?;
    if schema_version == MANIFEST_SCHEMA_VERSION {
        return Ok(serde_json::from_str(text)?);
    }
    let v: Value = serde_json::from_str(text)?;
    Ok(serde_json::from_value(manifest_to_current(v)?)?)
}

/// A manifest of schema 1 or 2 as a schema-2 JSON value.
pub(crate) fn manifest_to_current(mut v: Value) -> anyhow::Result<Value> {
    let Versioned { schema_version } = Versioned::deserialize(&v)?;
    ensure!(
        schema_version <= MANIFEST_SCHEMA_VERSION,
        "manifest schema {schema_version} is newer than this perflab reads ({MANIFEST_SCHEMA_VERSION}): upgrade perflab"
    );
    let mut version = schema_version;
    while version < MANIFEST_SCHEMA_VERSION {
        match version {
            1 => manifest_v1_to_v2(&mut v)?,
            other => bail!("no migration from manifest schema {other}"),
        }
        version += 1;
    }
    Ok(v)
}

/// Schema 1 -> 2: the `sampler_agent_<role>_cgroup_lines` keys become the map
/// `sampler_agent_cgroup_lines` (role -> lines).
fn manifest_v1_to_v2(v: &mut Value) -> anyhow::Result<()> {
    let Some(m) = v.as_object_mut() else {
        bail!("a manifest is a JSON object");
    };
    if let Some(Value::Object(meas)) = m.get_mut("measurements") {
        let agents: Vec<String> = meas
            .keys()
            .filter(|k| agent_role(k).is_some())
            .cloned()
            .collect();
        let mut lines = Map::new();
        for k in agents {
            if let (Some(role), Some(n)) = (agent_role(&k), meas.remove(&k)) {
                lines.insert(role.to_string(), n);
            }
        }
        if !lines.is_empty() {
            meas.insert("sampler_agent_cgroup_lines".into(), Value::Object(lines));
        }
    }
    m.insert("schema_version".into(), Value::from(2));
    Ok(())
}

/// `loadgen` of `sampler_agent_loadgen_cgroup_lines`.
fn agent_role(key: &str) -> Option<&str> {
    key.strip_prefix("sampler_agent_")?
        .strip_suffix("_cgroup_lines")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_agent_keys_become_one_map_and_the_version_moves_on() {
        let v1 = serde_json::json!({
            "schema_version": 1,
            "measurements": {"suite": "trixie", "sampler_agent_loadgen_cgroup_lines": 42,
                             "sampler_agent_stack_cgroup_lines": 7}
        });
        let v2 = manifest_to_current(v1).unwrap();
        assert_eq!(v2["schema_version"], 2);
        assert_eq!(
            v2["measurements"],
            serde_json::json!({"suite": "trixie",
                "sampler_agent_cgroup_lines": {"loadgen": 42, "stack": 7}})
        );
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let e = manifest_to_current(serde_json::json!({"schema_version": 9})).unwrap_err();
        assert!(e.to_string().contains("upgrade perflab"), "{e}");
    }
}
