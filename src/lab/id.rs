//! What a lab's name (`Lab`, declared by the registry in `lab/mod.rs`) answers: its lookup by
//! name, and what its descriptor says about its YAML (endpoints, settings keys, PostgreSQL).
use super::Lab;

impl Lab {
    /// The lab named `name` (`php`, `node`, `demo`), if any.
    pub(crate) fn from_name(name: &str) -> Option<Lab> {
        Lab::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The HTTP endpoints the lab's app serves (an experiment's `load.endpoint` must be one).
    pub(crate) fn endpoints(self) -> &'static [&'static str] {
        super::descriptor(self).info().endpoints
    }

    /// The keys of this lab's `stack.<lab>:` section (the fields of its settings struct; a
    /// test keeps them in sync).
    pub(crate) fn settings_keys(self) -> &'static [&'static str] {
        super::descriptor(self).info().settings_keys
    }

    /// The names of `labs` as a sentence lists them, in the order given: `php, node or demo`
    /// (for messages: derived from the registry, never written by hand).
    pub(crate) fn list_or(labs: impl IntoIterator<Item = Lab>) -> String {
        let names: Vec<&str> = labs.into_iter().map(Lab::as_str).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        }
    }

    /// The labs `cpu-per-request` measures (those that declare its endpoints).
    pub(crate) fn with_cpu_per_request() -> impl Iterator<Item = Lab> {
        Lab::ALL.into_iter().filter(|l| {
            !super::descriptor(*l)
                .info()
                .cpu_per_request_endpoints
                .is_empty()
        })
    }

    /// The lab's stack has a PostgreSQL (`stack.postgres:` applies).
    pub(crate) fn uses_postgres(self) -> bool {
        super::descriptor(self).info().uses_pg()
    }
}

impl std::fmt::Display for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
