//! The crate as text: each file of src/ scanned once (masked, test code cut out), the
//! top-level modules' import edges and the file-level edges inside each module.

use super::graph::{Edge, Graph, paths};
use super::scan::{Function, Visibility, functions, mask, strip_cfg_test, visibility};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub struct SrcFile {
    /// `src/cli/run.rs`
    pub rel: String,
    pub lines: usize,
    /// Its top-level module (`cli`); None for src/lib.rs and src/main.rs.
    pub top: Option<String>,
    /// Only compiled for tests (`#[cfg(test)] mod tests;`).
    pub test_only: bool,
    /// Masked text with test code blanked, char for char aligned with `text`.
    pub prod: String,
    /// The file as written.
    pub text: String,
    /// Every function, test ones included, with whether it is test code.
    pub functions: Vec<(Function, bool)>,
    pub visibility: Visibility,
    children: Vec<String>,
    module_path: Vec<String>,
}

pub struct Crate {
    pub files: Vec<SrcFile>,
    /// Top-level modules, as src/lib.rs declares them.
    pub modules: Vec<String>,
    /// One edge per (importer, imported) pair, at its first use.
    pub edges: Vec<Edge>,
    /// Per top-level module, file -> the sibling files it uses.
    pub file_graphs: BTreeMap<String, Graph>,
}

/// Every `.rs` file under `dir`, as (`src/...` path, text), sorted.
pub fn read_tree(root: &Path, dir: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_string()];
    while let Some(d) = todo.pop() {
        let entries = std::fs::read_dir(root.join(&d)).unwrap_or_else(|e| panic!("{d}: {e}"));
        for entry in entries.flatten() {
            let rel = format!("{d}/{}", entry.file_name().to_string_lossy());
            if entry.path().is_dir() {
                todo.push(rel);
            } else if rel.ends_with(".rs") {
                let text =
                    std::fs::read_to_string(entry.path()).unwrap_or_else(|e| panic!("{rel}: {e}"));
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

fn module_path(rel: &str) -> Vec<String> {
    let inner = rel.trim_start_matches("src/").trim_end_matches(".rs");
    let mut segs: Vec<String> = inner.split('/').map(str::to_string).collect();
    if matches!(
        segs.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        segs.pop();
    }
    segs
}

/// The file a `mod name;` in `rel` loads (`#[path]` relative to `rel`'s folder).
fn child_file(
    rel: &str,
    name: &str,
    path_attr: Option<&str>,
    exists: &dyn Fn(&str) -> bool,
) -> String {
    let (dir, file) = rel.rsplit_once('/').unwrap_or(("", rel));
    if let Some(p) = path_attr {
        return format!("{dir}/{p}");
    }
    let base = match file {
        "mod.rs" | "lib.rs" | "main.rs" => dir.to_string(),
        f => format!("{dir}/{}", f.trim_end_matches(".rs")),
    };
    let flat = format!("{base}/{name}.rs");
    if exists(&flat) {
        flat
    } else {
        format!("{base}/{name}/mod.rs")
    }
}

/// The deepest file that a crate path names (`[analyze, k6csv, parse]`).
fn resolve(path: &[String], exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let (mut dir, mut best) = ("src".to_string(), None);
    for seg in path {
        let (flat, nested) = (format!("{dir}/{seg}.rs"), format!("{dir}/{seg}/mod.rs"));
        if exists(&flat) {
            best = Some(flat);
        } else if exists(&nested) {
            best = Some(nested);
        } else {
            break;
        }
        dir = format!("{dir}/{seg}");
    }
    best
}

pub fn analyze(sources: &[(String, String)]) -> Crate {
    let names: std::collections::HashSet<&str> = sources.iter().map(|(r, _)| r.as_str()).collect();
    let exists = |p: &str| names.contains(p);
    let mut macros: HashMap<String, String> = HashMap::new();
    let mut test_files = Vec::new();
    let mut files = Vec::new();
    for (rel, text) in sources {
        let masked = mask(text);
        let production = strip_cfg_test(&masked, text);
        let top = module_path(rel).first().cloned();
        for m in &production.test_mods {
            test_files.push(child_file(rel, &m.name, m.path_attr.as_deref(), &exists));
        }
        for (i, _) in masked.match_indices("#[macro_export]") {
            let rest = &masked[i..];
            if let Some(name) = rest
                .split("macro_rules!")
                .nth(1)
                .and_then(|r| r.split_whitespace().next())
            {
                macros.insert(name.to_string(), top.clone().unwrap_or_default());
            }
        }
        let in_test = |line: usize| {
            production
                .test_lines
                .iter()
                .any(|&(a, b)| line >= a && line <= b)
        };
        let functions = functions(&masked).into_iter().map(|f| {
            let t = in_test(f.line);
            (f, t)
        });
        let children = production
            .text
            .lines()
            .filter_map(|l| {
                let words: Vec<&str> = l
                    .split_whitespace()
                    .filter(|w| !w.starts_with("pub"))
                    .collect();
                (words.len() == 2 && words[0] == "mod" && words[1].ends_with(';'))
                    .then(|| words[1].trim_end_matches(';').to_string())
            })
            .collect();
        files.push(SrcFile {
            rel: rel.clone(),
            lines: text.lines().count(),
            top,
            test_only: false,
            visibility: visibility(&production.text),
            prod: production.text,
            text: text.clone(),
            functions: functions.collect(),
            children,
            module_path: module_path(rel),
        });
    }
    for f in &mut files {
        f.test_only = test_files.contains(&f.rel);
        if f.test_only {
            f.functions.iter_mut().for_each(|(_, t)| *t = true);
        }
    }
    let modules = files
        .iter()
        .find(|f| f.rel == "src/lib.rs")
        .map(|lib| declared_modules(&lib.prod))
        .unwrap_or_default();
    let (edges, file_graphs) = edges(&files, &modules, &macros, &exists);
    Crate {
        files,
        modules,
        edges,
        file_graphs,
    }
}

fn declared_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or_else(|| l.trim().strip_prefix("pub(crate) mod "))
                .or_else(|| l.trim().strip_prefix("mod "))
        })
        .map(|m| m.trim_end_matches(';').to_string())
        .collect()
}

fn edges(
    files: &[SrcFile],
    modules: &[String],
    macros: &HashMap<String, String>,
    exists: &dyn Fn(&str) -> bool,
) -> (Vec<Edge>, BTreeMap<String, Graph>) {
    let mut edges: Vec<Edge> = Vec::new();
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    for f in files.iter().filter(|f| !f.test_only) {
        let Some(top) = &f.top else { continue };
        let graph = graphs.entry(top.clone()).or_default();
        graph.entry(f.rel.clone()).or_default();
        for (path, line) in paths(&f.prod, &f.module_path, &f.children, macros) {
            let to = &path[0];
            if to != top
                && modules.contains(to)
                && !edges.iter().any(|e| &e.from == top && &e.to == to)
            {
                edges.push(Edge {
                    from: top.clone(),
                    to: to.clone(),
                    file: f.rel.clone(),
                    line,
                });
            }
            if let Some(target) = resolve(&path, exists).filter(|t| to == top && *t != f.rel) {
                graph.entry(f.rel.clone()).or_default().insert(target);
            }
        }
    }
    (edges, graphs)
}
