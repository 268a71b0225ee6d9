//! `perflab validate [FILE...]`: the given files checked together with the rest of the catalog
//! (a group names its members), and which diagnostics are theirs; no files: the whole catalog.
use std::path::{Path, PathBuf};

use super::catalog::Catalog;
use super::diag::Diagnostic;
use super::schema::CatalogEntry;
use crate::claim::quantities::Names;
use crate::error::InvalidInput;

/// What `validate` found when the files asked about have no error: how many it checked, how
/// many are groups, and their warnings; or that other files of the catalog have errors (they
/// are logged as a warning).
pub(crate) struct Checked {
    /// None: the files are valid, but others of the catalog are not.
    counts: Option<(usize, usize)>,
    pub warnings: Vec<Diagnostic>,
}

impl Checked {
    /// `validate`'s line on stdout (`given`: the number of files named).
    pub(crate) fn summary(&self, given: usize) -> String {
        match self.counts {
            None => format!("ok: {given} file(s)"),
            Some((files, groups)) => format!(
                "ok: {files} file(s) valid ({} experiments, {groups} groups), {} warning(s)",
                files - groups,
                self.warnings.len()
            ),
        }
    }
}

/// Check `files` (none: every file of `dir`) with the catalog of `dir`; an error in them is
/// bad input (exit 2), each naming its file, line and field.
pub(crate) fn check(dir: &Path, files: &[PathBuf], names: &dyn Names) -> anyhow::Result<Checked> {
    let given = (!files.is_empty()).then_some(files);
    let cat = match given {
        None => Catalog::load(dir, names),
        Some(files) => {
            if let Some(f) = files.iter().find(|f| !f.is_file()) {
                return Err(InvalidInput(format!("{}: no such file", f.display())).into());
            }
            Catalog::from_files(dir, &with_the_rest(dir, files), names)
        }
    };
    let mine = |d: &&Diagnostic| given.is_none_or(|g| g.iter().any(|f| Path::new(f) == d.file));
    match cat {
        Err(diags) => {
            let errs: Vec<Diagnostic> = diags.iter().filter(mine).cloned().collect();
            if errs.iter().any(Diagnostic::is_error) {
                return Err(super::invalid(&errs).into());
            }
            // errors only in files not asked about
            let other: Vec<Diagnostic> = diags.into_iter().filter(Diagnostic::is_error).collect();
            tracing::warn!(
                "other catalog files have errors:\n{}",
                crate::output::plain(&super::diag::render(&other))
            );
            Ok(Checked {
                counts: None,
                warnings: Vec::new(),
            })
        }
        Ok(cat) => {
            let warnings = cat.warnings().into_iter().filter(mine).cloned().collect();
            let checked: Vec<&super::CatalogFile> = cat
                .files
                .values()
                .filter(|f| given.is_none_or(|g| g.contains(&f.path)))
                .collect();
            let groups = checked
                .iter()
                .filter(|f| matches!(f.entry, CatalogEntry::Group(_)))
                .count();
            Ok(Checked {
                counts: Some((checked.len(), groups)),
                warnings,
            })
        }
    }
}

/// The given files, and the catalog's other `*.yaml` files (those of another stem).
fn with_the_rest(dir: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    let stems: Vec<_> = files
        .iter()
        .filter_map(|f| f.file_stem().map(|s| s.to_owned()))
        .collect();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
                .filter(|p| p.file_stem().is_none_or(|s| !stems.iter().any(|g| g == s)))
                .collect()
        })
        .unwrap_or_default();
    paths.extend(files.iter().cloned());
    paths
}
