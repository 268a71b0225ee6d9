//! Sampler sources as data: what a lab's containers offer the samplers ("GET this path every
//! 2 s as JSON into `samples/<name>.jsonl`", "run these SQL queries"). One generic sampler
//! (`sample::source`) runs each declaration (`lab::sources` lists them all); the analysis
//! reads the file back through its row of `analyze::samples::sources` (its columns, their
//! per-step figures and quantity names).
//! A container's own output lines are a source too (`Read::OutputLines`, the node app's
//! `node.jsonl`), cut from its log at collection instead of sampled.
//! Adding a source is its declaration here or in a lab's file and that row. Pure data.
use super::role::Role;

/// One source of a lab's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SourceDecl {
    /// Its file under the run's `samples/` (`<name>.jsonl`), its sampler's name in
    /// `sampler-errors.jsonl` and its count `<name>_samples` in the manifest's samplers.
    pub name: &'static str,
    /// The container that answers it.
    pub offered_by: Role,
    pub read: Read,
    /// How often it is read, in milliseconds.
    pub every_ms: u64,
}

/// How a source is read; each reading is one JSON line `{"t": <unix ms>, ...}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// `GET <entry point><path>` from the host, its body JSON: `{"t":..,"status":<body>}`.
    HttpJson { path: &'static str },
    /// `GET <entry point><path>` from the host, its body text: `{"t":..,"text":"<body>"}`.
    HttpText { path: &'static str },
    /// SQL through the harness's own connection to the lab's PostgreSQL, each query one field
    /// of the line: `{"t":.., "<field>": <rows or value>, ...}`.
    Sql { fields: &'static [SqlField] },
    /// A command run in the offering container through the Docker API's exec (`argv`, no
    /// shell), its output text: `{"t":..,"text":"<stdout and stderr>"}` (what only the
    /// container's own view shows: its network namespace's `/proc/net`).
    Exec { argv: &'static [&'static str] },
    /// The JSON lines of the container's own output (`lab::metrics`: the node and demo apps'
    /// 2-second metrics lines), cut from its log when the run collects it, each with the
    /// container's name added. No sampler reads it and the manifest counts no lines of it.
    OutputLines,
}

/// One query of an SQL source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SqlField {
    /// The line's field.
    pub field: &'static str,
    pub query: &'static str,
    pub shape: Shape,
}

/// What an SQL field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Every row, as an object keyed by column name.
    Rows,
    /// The first column of the first row.
    Value,
}

impl Read {
    /// The path below the entry point of an HTTP source.
    pub(crate) fn http_path(self) -> Option<&'static str> {
        match self {
            Read::HttpJson { path } | Read::HttpText { path } => Some(path),
            Read::Sql { .. } | Read::Exec { .. } | Read::OutputLines => None,
        }
    }

    /// A sampler reads it while the load runs (every kind but `OutputLines`).
    pub(crate) fn sampled(self) -> bool {
        self != Read::OutputLines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::{Lab, descriptor, sources};

    #[test]
    fn each_source_is_offered_by_a_container_of_its_lab_and_named_once_per_lab() {
        for lab in Lab::ALL {
            let info = descriptor(lab).info();
            for s in info.sources {
                assert!(info.roles.contains(&s.offered_by), "{lab} {}", s.name);
                assert!(s.every_ms >= 100, "{lab} {}", s.name);
                let same = info.sources.iter().filter(|x| x.name == s.name).count();
                assert_eq!(same, 1, "{lab} {}", s.name);
            }
        }
        // a name two labs share is one source (pg's, of the php and node labs)
        let names: Vec<_> = sources().iter().map(|s| s.name).collect();
        let set: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(names.len(), set.len());
        for n in ["fpm", "nginx", "pg", "node"] {
            assert!(sources().iter().any(|s| s.name == n), "{n}");
        }
        // the node and demo apps' metrics lines: cut from their output, sampled by no one
        for lab in [Lab::Node, Lab::Demo] {
            let s = descriptor(lab).info().output_source().unwrap();
            assert_eq!((s.name, s.read.sampled()), ("node", false), "{lab}");
            assert_eq!(s.read, Read::OutputLines);
        }
        assert!(descriptor(Lab::Php).info().output_source().is_none());
    }
}
