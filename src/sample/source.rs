//! The one sampler of the labs' declared sources (`lab::source`): an HTTP page read as JSON or
//! text from the entry point, SQL queries through the harness's own connection, or a command
//! run in the offering container through the Docker API's exec (its output as text), every
//! declared period into `samples/<name>.jsonl`, one line per reading: `{"t":..,"status":..}`,
//! `{"t":..,"text":".."}` or `{"t":.., "<field>": ..}` per query.
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;
use tokio_postgres::types::Type;

use super::sampler::Sampler;
use crate::docker::Docker;
use crate::lab::Role;
use crate::lab::source::{Read, Shape, SourceDecl, SqlField};

/// The way to the containers for `Read::Exec` sources: the stack's engine and each role's
/// container id.
#[derive(Clone)]
pub(crate) struct ExecWay {
    pub docker: Docker,
    pub containers: Vec<(Role, String)>,
}

/// One declared source, with the way in this run gives it.
pub(crate) struct SourceSampler {
    how: How,
}

enum How {
    Http {
        client: reqwest::Client,
        url: String,
        json: bool,
    },
    Sql {
        client: Arc<tokio_postgres::Client>,
        fields: &'static [SqlField],
    },
    Exec {
        docker: Docker,
        id: String,
        argv: Vec<String>,
    },
}

impl SourceSampler {
    /// The sampler of `decl`, or `None` when this run has no way to it (no entry point from
    /// the host for an HTTP source, no harness connection for an SQL one, no engine or no
    /// container of its role for an exec one; a container's output is cut at collection, not
    /// sampled); `Err`: it could not be set up.
    pub(crate) fn new(
        decl: &'static SourceDecl,
        entry_url: Option<&str>,
        pg: Option<&Arc<tokio_postgres::Client>>,
        exec: Option<&ExecWay>,
    ) -> Option<Result<SourceSampler, String>> {
        let how = match decl.read {
            Read::HttpJson { path } | Read::HttpText { path } => {
                let url = format!("{}{path}", entry_url?);
                let json = matches!(decl.read, Read::HttpJson { .. });
                let timeout = Duration::from_millis((decl.every_ms * 3 / 4).max(100));
                match reqwest::Client::builder().timeout(timeout).build() {
                    Ok(client) => How::Http { client, url, json },
                    Err(e) => return Some(Err(e.to_string())),
                }
            }
            Read::Sql { fields } => How::Sql {
                client: pg?.clone(),
                fields,
            },
            Read::Exec { argv } => {
                let way = exec?;
                let (_, id) = way.containers.iter().find(|(r, _)| *r == decl.offered_by)?;
                How::Exec {
                    docker: way.docker.clone(),
                    id: id.clone(),
                    argv: argv.iter().map(|a| a.to_string()).collect(),
                }
            }
            Read::OutputLines => return None,
        };
        Some(Ok(SourceSampler { how }))
    }
}

/// One line of a source's file: `t`, then its fields in their declared order.
pub(crate) struct SourceLine {
    t: i64,
    fields: Vec<(&'static str, Value)>,
}

impl Serialize for SourceLine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1 + self.fields.len()))?;
        m.serialize_entry("t", &self.t)?;
        for (k, v) in &self.fields {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl Sampler for SourceSampler {
    type Line = SourceLine;

    async fn read(&mut self, t: i64) -> Result<SourceLine, String> {
        let fields = match &self.how {
            How::Http { client, url, json } => vec![http(client, url, *json).await?],
            How::Sql { client, fields } => {
                let mut v = Vec::with_capacity(fields.len());
                for f in *fields {
                    v.push((f.field, sql(client, f).await?));
                }
                v
            }
            // Its output whatever its exit code (`cat` of a file the kernel lacks still
            // prints the others); the analysis refuses a line without what it reads.
            How::Exec { docker, id, argv } => {
                let out = docker.exec(id, argv).await.map_err(|e| format!("{e:#}"))?;
                vec![("text", Value::String(out.output))]
            }
        };
        Ok(SourceLine { t, fields })
    }
}

/// The page's body: `("status", JSON)` or `("text", string)`.
async fn http(
    client: &reqwest::Client,
    url: &str,
    json: bool,
) -> Result<(&'static str, Value), String> {
    let resp = async { client.get(url).send().await?.error_for_status() }
        .await
        .map_err(|e| e.to_string())?;
    if json {
        let v = resp.json::<Value>().await.map_err(|e| e.to_string())?;
        Ok(("status", v))
    } else {
        let text = resp.text().await.map_err(|e| e.to_string())?;
        Ok(("text", Value::String(text)))
    }
}

/// One query's answer in its shape.
async fn sql(client: &tokio_postgres::Client, f: &SqlField) -> Result<Value, String> {
    let rows = client
        .query(f.query, &[])
        .await
        .map_err(|e| e.to_string())?;
    match f.shape {
        Shape::Rows => rows
            .iter()
            .map(row_json)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Shape::Value => match rows.first() {
            Some(r) if !r.is_empty() => cell(r, 0),
            _ => Err(format!("`{}`: the query returned no value", f.field)),
        },
    }
}

/// A row as an object keyed by column name.
fn row_json(r: &tokio_postgres::Row) -> Result<Value, String> {
    let mut m = serde_json::Map::new();
    for (i, c) in r.columns().iter().enumerate() {
        m.insert(c.name().to_string(), cell(r, i)?);
    }
    Ok(Value::Object(m))
}

/// One cell as JSON (NULL as null); a type the sampler does not read is an error naming it.
fn cell(r: &tokio_postgres::Row, i: usize) -> Result<Value, String> {
    fn get<'a, T: tokio_postgres::types::FromSql<'a> + Into<Value>>(
        r: &'a tokio_postgres::Row,
        i: usize,
    ) -> Result<Value, String> {
        r.try_get::<_, Option<T>>(i)
            .map(|v| v.map_or(Value::Null, Into::into))
            .map_err(|e| e.to_string())
    }
    let ty = r.columns()[i].type_();
    match *ty {
        Type::BOOL => get::<bool>(r, i),
        Type::INT2 => get::<i16>(r, i),
        Type::INT4 => get::<i32>(r, i),
        Type::INT8 => get::<i64>(r, i),
        Type::FLOAT4 => get::<f32>(r, i),
        Type::FLOAT8 => get::<f64>(r, i),
        Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => get::<String>(r, i),
        _ => Err(format!(
            "column `{}` is of type {ty}, which the sampler does not read (cast it in the query)",
            r.columns()[i].name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_t_then_the_fields_in_their_order() {
        let l = SourceLine {
            t: 5,
            fields: vec![
                ("text", Value::from("Active connections: 1 \n")),
                ("b", Value::from(2)),
            ],
        };
        assert_eq!(
            serde_json::to_string(&l).unwrap(),
            r#"{"t":5,"text":"Active connections: 1 \n","b":2}"#
        );
    }

    #[test]
    fn a_source_without_its_way_in_is_not_sampled() {
        let named = |n: &str| {
            crate::lab::sources()
                .into_iter()
                .find(|s| s.name == n)
                .unwrap()
        };
        let (fpm, pg) = (named("fpm"), named("pg"));
        assert!(SourceSampler::new(fpm, None, None, None).is_none());
        assert!(SourceSampler::new(named("node"), Some("http://x"), None, None).is_none());
        assert!(SourceSampler::new(pg, Some("http://x"), None, None).is_none());
        assert!(SourceSampler::new(named("fpm_net"), Some("http://x"), None, None).is_none());
        let Some(Ok(s)) = SourceSampler::new(fpm, Some("http://10.0.0.2:80"), None, None) else {
            panic!("an HTTP source with an entry point is sampled");
        };
        let How::Http { url, json, .. } = s.how else {
            panic!("fpm is read over HTTP")
        };
        assert_eq!(
            (url.as_str(), json),
            ("http://10.0.0.2:80/fpm-status?json", true)
        );
    }
}
