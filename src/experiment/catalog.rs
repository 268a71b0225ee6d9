//! Loading `experiments/*.yaml`: parse one file (experiment or group), check the whole catalog
//! (unique ids, id = file name, group members exist, groups within bounds), expand groups.
use super::diag::{Diagnostic, did_you_mean};
use super::groups::{self, Extent};
use super::schema::*;
use super::validate;
use crate::claim::quantities::Names;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One parsed catalog file.
#[derive(Debug, Clone)]
pub struct CatalogFile {
    pub path: PathBuf,
    pub src: String,
    pub entry: CatalogEntry,
    /// Warnings found while checking it.
    pub warnings: Vec<Diagnostic>,
}

/// The whole catalog, keyed by id.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    pub dir: PathBuf,
    pub files: BTreeMap<String, CatalogFile>,
    /// What each entry expands to (counted once, when the catalog is checked).
    extents: BTreeMap<String, Extent>,
}

/// Where the catalog lives: `$PERFLAB_CATALOG`, else `./experiments`, else the source tree's.
pub(crate) fn default_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("PERFLAB_CATALOG") {
        return PathBuf::from(d);
    }
    let local = PathBuf::from("experiments");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments")
}

/// Parse and check one file's text. Errors come back as diagnostics (with line/column).
pub fn parse_entry(
    path: &Path,
    src: &str,
    names: &dyn Names,
) -> Result<(CatalogEntry, Vec<Diagnostic>), Vec<Diagnostic>> {
    super::bounds::check_source(path, src)?;
    // the top-level `kind:` decides the type; a cheap line scan keeps `perflab list` fast
    let kind = top_level_kind(src).unwrap_or("experiment");
    let (entry, diags) = match kind {
        "experiment" => {
            let e: Experiment =
                serde_yaml::from_str(src).map_err(|e| vec![classify(path, src, &e)])?;
            let d = validate::check_file(path, &e, names);
            (CatalogEntry::Experiment(e), d)
        }
        "group" => {
            let g: Group = serde_yaml::from_str(src).map_err(|e| vec![classify(path, src, &e)])?;
            let d = validate::check_group(path, &g);
            (CatalogEntry::Group(g), d)
        }
        other => {
            let mut help = "allowed: experiment, group".to_string();
            if let Some(s) = did_you_mean(other, ["experiment", "group"]) {
                help = format!("did you mean `{s}`? {help}");
            }
            return Err(vec![
                Diagnostic::error(path, "kind", format!("unknown kind `{other}`"))
                    .help(help)
                    .located_in(src),
            ]);
        }
    };
    let diags: Vec<Diagnostic> = diags.into_iter().map(|d| d.located_in(src)).collect();
    if diags.iter().any(Diagnostic::is_error) {
        return Err(diags);
    }
    Ok((entry, diags))
}

/// Value of a top-level `kind:` line (unquoted), if any.
fn top_level_kind(src: &str) -> Option<&str> {
    src.lines().find_map(|l| {
        let v = l.strip_prefix("kind:")?;
        let v = v.split(" #").next().unwrap_or(v).trim();
        Some(v.trim_matches(|c| c == '"' || c == '\''))
    })
}

/// A typed-parse error: malformed YAML, not a mapping, or a schema error.
fn classify(path: &Path, src: &str, e: &serde_yaml::Error) -> Diagnostic {
    match serde_yaml::from_str::<serde_yaml::Value>(src) {
        Err(syntax) => super::diag::from_serde(path, src, &syntax, "malformed YAML"),
        Ok(v) if !v.is_mapping() => {
            Diagnostic::error(path, "", "a catalog file must be a YAML mapping")
                .help("start with `kind: experiment` (or `kind: group`), then `id:`, `lab:`, ...")
        }
        Ok(_) => super::diag::from_serde(path, src, e, ""),
    }
}

impl Catalog {
    /// Load every `*.yaml` file of `dir` and check the catalog as a whole.
    /// `names`: the quantities claims may name (`verify::quantities::Quantities`).
    pub fn load(dir: &Path, names: &dyn Names) -> Result<Catalog, Vec<Diagnostic>> {
        let mut paths: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect(),
            Err(e) => {
                return Err(vec![
                    Diagnostic::error(dir, "", format!("cannot read the catalog directory: {e}"))
                        .help("run from the repository root or set PERFLAB_CATALOG=<dir>"),
                ]);
            }
        };
        paths.sort();
        Catalog::from_files(dir, &paths, names)
    }

    /// Parse the given files as one catalog (used by `validate FILE...` too).
    pub(crate) fn from_files(
        dir: &Path,
        paths: &[PathBuf],
        names: &dyn Names,
    ) -> Result<Catalog, Vec<Diagnostic>> {
        let sources = paths
            .iter()
            .map(|p| (p.clone(), super::bounds::read_source(p)));
        Catalog::from_sources(dir, sources, names)
    }

    /// Parse the given files' texts (or why each could not be read) as one catalog: what
    /// [`Catalog::from_files`] does once it read them (the fuzz targets give texts).
    pub fn from_sources(
        dir: &Path,
        sources: impl IntoIterator<Item = (PathBuf, Result<String, Vec<Diagnostic>>)>,
        names: &dyn Names,
    ) -> Result<Catalog, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        let mut cat = Catalog {
            dir: dir.to_path_buf(),
            ..Catalog::default()
        };
        for (path, src) in sources {
            let p = &path;
            let src = match src {
                Ok(s) => s,
                Err(d) => {
                    errors.extend(d);
                    continue;
                }
            };
            match parse_entry(p, &src, names) {
                Ok((entry, warnings)) => {
                    let id = entry.id().to_string();
                    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
                    if stem != id {
                        errors.push(
                            Diagnostic::error(
                                p,
                                "id",
                                format!("id `{id}` differs from the file name `{stem}`"),
                            )
                            .help(format!("rename the file to {id}.yaml or set `id: {stem}`"))
                            .located_in(&src),
                        );
                    }
                    if let Some(prev) = cat.files.get(&id) {
                        errors.push(Diagnostic::error(
                            p,
                            "id",
                            format!("duplicate id `{id}` (also in {})", prev.path.display()),
                        ));
                        continue;
                    }
                    cat.files.insert(
                        id,
                        CatalogFile {
                            path: p.clone(),
                            src,
                            entry,
                            warnings,
                        },
                    );
                }
                Err(d) => errors.extend(d),
            }
        }
        let entries = cat
            .files
            .iter()
            .map(|(id, f)| (id.clone(), &f.entry))
            .collect();
        cat.extents = groups::extents(&entries);
        errors.extend(cat.check_groups());
        if errors.iter().any(Diagnostic::is_error) {
            Err(errors)
        } else {
            Ok(cat)
        }
    }

    /// `fit.twin` names another fitted experiment of the same lab that calibrates itself.
    fn check_twin(&self, f: &CatalogFile, e: &Experiment) -> Option<Diagnostic> {
        let t = e.fit.as_ref()?.twin.as_ref()?;
        let twin = match self.files.get(t).map(|x| &x.entry) {
            Some(CatalogEntry::Experiment(x)) => Some(x),
            _ => None,
        };
        let problem = match twin {
            None => format!("unknown experiment `{t}`"),
            Some(x) if x.id == e.id => "names this experiment itself".into(),
            Some(x) if x.lab != e.lab => {
                format!("`{t}` is a {} experiment, this is {}", x.lab, e.lab)
            }
            Some(x) => match &x.fit {
                None => format!("`{t}` has no `fit:`, so no calibration to lend"),
                Some(tf) if tf.twin.is_some() => {
                    format!("`{t}` takes its own calibration from a twin")
                }
                Some(tf)
                    if tf.calibrate.peak.is_none()
                        && e.fit.as_ref().is_some_and(super::fit::reads_peak) =>
                {
                    format!("`{t}` runs no peak probe, and this experiment's rules read one")
                }
                Some(_) => return None,
            },
        };
        Some(
            Diagnostic::error(&f.path, "fit.twin", problem)
                .help("name a fitted experiment of the same lab that calibrates itself, or remove `twin:`")
                .located_in(&f.src),
        )
    }

    fn check_groups(&self) -> Vec<Diagnostic> {
        let mut d = Vec::new();
        for f in self.files.values() {
            // claims `against:` another experiment: it must exist and be an experiment
            if let CatalogEntry::Experiment(e) = &f.entry {
                d.extend(self.check_twin(f, e));
                for (i, c) in e.expect.iter().enumerate() {
                    let Some(a) = &c.against else { continue };
                    if !matches!(
                        self.files.get(a).map(|x| &x.entry),
                        Some(CatalogEntry::Experiment(_))
                    ) {
                        let mut help =
                            "name an experiment (not a group) of the catalog".to_string();
                        if let Some(s) = did_you_mean(a, self.files.keys().map(String::as_str)) {
                            help = format!("did you mean `{s}`? {help}");
                        }
                        d.push(
                            Diagnostic::error(
                                &f.path,
                                format!("expect[{i}].against"),
                                format!("unknown experiment `{a}`"),
                            )
                            .help(help)
                            .located_in(&f.src),
                        );
                    }
                }
            }
            let CatalogEntry::Group(g) = &f.entry else {
                continue;
            };
            for (i, m) in g.members.iter().enumerate() {
                if !self.files.contains_key(m) {
                    let mut help = "run `perflab list` for the ids".to_string();
                    if let Some(s) = did_you_mean(m, self.files.keys().map(String::as_str)) {
                        help = format!("did you mean `{s}`? {help}");
                    }
                    d.push(
                        Diagnostic::error(
                            &f.path,
                            format!("members[{i}]"),
                            format!("unknown id `{m}`"),
                        )
                        .help(help)
                        .located_in(&f.src),
                    );
                }
            }
            if let Some(m) = &g.map {
                let base = match self.files.get(&m.experiment).map(|x| &x.entry) {
                    Some(CatalogEntry::Experiment(e)) => Some(e),
                    _ => None,
                };
                d.extend(super::map_check::check(&f.path, &f.src, m, base));
            }
            if let Some(fault) = self.fault(&g.id) {
                d.push(
                    Diagnostic::error(&f.path, "members", fault)
                        .help(format!(
                            "a group runs its members back to back, each a whole run: at most \
                             {} experiments, groups nested at most {} deep, no cycle",
                            groups::MAX_MEMBERS,
                            groups::MAX_GROUP_DEPTH
                        ))
                        .located_in(&f.src),
                );
            }
        }
        d
    }

    /// Why the entry `id` cannot be expanded (a cycle, too deep, too many experiments).
    fn fault(&self, id: &str) -> Option<String> {
        self.extents.get(id).and_then(|x| x.fault.clone())
    }

    /// The experiments `id` expands to, appended to `out` (bounded: its extent has no fault).
    fn expand_into<'c>(&'c self, id: &str, out: &mut Vec<&'c Experiment>) {
        match self.files.get(id).map(|f| &f.entry) {
            Some(CatalogEntry::Group(g)) => {
                for m in &g.members {
                    self.expand_into(m, out);
                }
            }
            Some(CatalogEntry::Experiment(e)) => out.push(e),
            None => {}
        }
    }

    pub fn get(&self, id: &str) -> Option<&CatalogFile> {
        self.files.get(id)
    }

    /// The file for `id`, or an invalid-input error with a did-you-mean.
    pub(crate) fn lookup(&self, id: &str) -> Result<&CatalogFile, crate::error::InvalidInput> {
        self.files.get(id).ok_or_else(|| {
            let mut msg = format!("no experiment or group `{id}` in {}", self.dir.display());
            if let Some(s) = did_you_mean(id, self.files.keys().map(String::as_str)) {
                msg.push_str(&format!("; did you mean `{s}`?"));
            }
            msg.push_str(" (`perflab list` shows the catalog)");
            crate::error::InvalidInput(msg)
        })
    }

    /// The experiments `id` runs, in order (a group is flattened; repeats kept): at most
    /// [`groups::MAX_MEMBERS`], else an error naming the chain of groups.
    pub fn expand(&self, id: &str) -> Result<Vec<&Experiment>, crate::error::InvalidInput> {
        let file = self.lookup(id)?;
        if let Some(fault) = self.fault(id) {
            return Err(crate::error::InvalidInput(format!(
                "{}: members: {fault}",
                file.path.display()
            )));
        }
        let mut out = Vec::new();
        self.expand_into(id, &mut out);
        Ok(out)
    }

    /// What the entry `id` expands to, counted: experiments, labs, nesting.
    pub fn extent(&self, id: &str) -> Option<&Extent> {
        self.extents.get(id)
    }

    /// The lab of an entry: its own, or for a group the members' (`mixed` when several).
    pub fn lab_of(&self, id: &str) -> String {
        let Some(x) = self.extent(id).filter(|x| x.fault.is_none()) else {
            return "?".into();
        };
        let labs: Vec<&Lab> = x.labs.iter().collect();
        match labs.as_slice() {
            [one] => one.to_string(),
            [] => "-".into(),
            _ => "mixed".into(),
        }
    }

    pub fn warnings(&self) -> Vec<&Diagnostic> {
        self.files
            .values()
            .flat_map(|f| f.warnings.iter())
            .collect()
    }
}
