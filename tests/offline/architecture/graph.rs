//! The import graph: docs/architecture.md's floors, the paths a file names (`crate::`,
//! `super::`, `self::`, child modules, exported macros), the order rule and cycles.

use super::scan::{ident_char, ident_from, skip_ws};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The pipeline table of docs/architecture.md (floor, its modules left to right) and the side
/// modules listed under it ("Beside them: ...").
#[derive(Debug, Default)]
pub struct Floors {
    pub pipeline: Vec<(usize, Vec<String>)>,
    pub side: Vec<String>,
}

pub fn parse_floors(doc: &str) -> Result<Floors, String> {
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The pipeline"))
        .ok_or("docs/architecture.md has no `## The pipeline` section")?;
    let mut floors = Floors::default();
    for row in section.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        if let (Some(Ok(floor)), Some(mods)) = (cells.get(1).map(|s| s.parse()), cells.get(2)) {
            floors.pipeline.push((floor, backticked(mods)));
        }
    }
    let beside = section
        .split("\n\n")
        .find(|p| p.starts_with("Beside them"))
        .ok_or("docs/architecture.md's pipeline section has no `Beside them:` paragraph")?;
    floors.side = backticked(beside)
        .into_iter()
        .filter(|m| !m.contains("::"))
        .collect();
    if floors.pipeline.is_empty() {
        return Err(
            "docs/architecture.md's pipeline table has no `| floor | module |` rows".into(),
        );
    }
    Ok(floors)
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

impl Floors {
    /// (floor, position on the floor) of a pipeline module.
    pub fn rank(&self, module: &str) -> Option<(usize, usize)> {
        self.pipeline
            .iter()
            .find_map(|(f, mods)| mods.iter().position(|m| m == module).map(|p| (*f, p)))
    }
    pub fn is_side(&self, module: &str) -> bool {
        self.side.iter().any(|m| m == module)
    }
    pub fn knows(&self, module: &str) -> bool {
        self.is_side(module) || self.rank(module).is_some()
    }
}

/// One use of module `to` by module `from`, first seen at `file:line`.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub file: String,
    pub line: usize,
}

/// Order violations: a pipeline module may import side modules, modules on lower floors, and
/// modules listed before it on its own floor; a side module imports only side modules.
pub fn order_violations(floors: &Floors, edges: &[Edge]) -> Vec<String> {
    let side = floors.side.join(", ");
    let mut out = Vec::new();
    for e in edges {
        let at = format!("{}:{}", e.file, e.line);
        let verdict = match (floors.rank(&e.from), floors.rank(&e.to)) {
            (_, None) if floors.is_side(&e.to) => None,
            (None, Some((tf, _))) if floors.is_side(&e.from) => Some(format!(
                "{at}: side module `{}` imports `{}` (pipeline floor {tf}); side modules ({side}) are \
                 imported by anyone and import only each other. Fix: move what `{}` needs from `{}` \
                 into a side module, or pass it in from the caller",
                e.from, e.to, e.from, e.to
            )),
            (Some((ff, fp)), Some((tf, tp))) if tf > ff || (tf == ff && tp > fp) => Some(format!(
                "{at}: `{}` (floor {ff}) imports `{}` (floor {tf}{}): a module imports only the \
                 modules above it in docs/architecture.md's pipeline table. Fix: move what `{}` uses \
                 of `{}` below `{}` (into `{}` or a lower floor), or invert the dependency",
                e.from,
                e.to,
                if tf == ff { ", listed after it" } else { "" },
                e.from,
                e.to,
                e.from,
                e.from
            )),
            _ => None,
        };
        out.extend(verdict);
    }
    out
}

/// Paths a masked, test-free file names, as segments from the crate root, with their lines.
/// `module` is the file's own module path (`src/analyze/k6csv.rs` -> `[analyze, k6csv]`),
/// `children` the modules it declares (`mod x;`), `macros` the exported macros and their module.
pub fn paths(
    prod: &str,
    module: &[String],
    children: &[String],
    macros: &HashMap<String, String>,
) -> Vec<(Vec<String>, usize)> {
    let c: Vec<char> = prod.chars().collect();
    let mut found = Vec::new();
    let mut line = 1;
    for i in 0..c.len() {
        if c[i] == '\n' {
            line += 1;
        }
        let start = i == 0 || (!ident_char(c[i - 1]) && c[i - 1] != ':' && c[i - 1] != '$');
        if !start || !ident_char(c[i]) {
            continue;
        }
        let word = ident_from(&c, i);
        if let Some(home) = macros
            .get(&word)
            .filter(|_| c.get(i + word.len()) == Some(&'!'))
        {
            found.push((vec![home.clone()], line));
        }
        let after = i + word.len();
        if c.get(after..after + 2) != Some(&[':', ':']) {
            continue;
        }
        let base: Vec<String> = match word.as_str() {
            "crate" => vec![],
            "self" => module.to_vec(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            w if children.iter().any(|ch| ch == w) => {
                let mut p = module.to_vec();
                p.push(w.to_string());
                p
            }
            _ => continue,
        };
        for tail in tree(&c, after + 2).0 {
            let mut p = base.clone();
            p.extend(tail.into_iter().filter(|s| s != "self"));
            let p = resolve_supers(p);
            if let Some(first) = p.first() {
                let p = match macros.get(first) {
                    Some(home) if p.len() == 1 => vec![home.clone()],
                    _ => p,
                };
                found.push((p, line));
            }
        }
    }
    found
}

fn resolve_supers(p: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in p {
        if s == "super" {
            out.pop();
        } else {
            out.push(s);
        }
    }
    out
}

/// A use tree at `i`: `a::b`, `a::{b, c::d}`, `{a, b}`; the paths and the index after it.
fn tree(c: &[char], i: usize) -> (Vec<Vec<String>>, usize) {
    let i = skip_ws(c, i);
    if c.get(i) == Some(&'{') {
        let (mut all, mut j) = (Vec::new(), i + 1);
        loop {
            j = skip_ws(c, j);
            match c.get(j) {
                None => return (all, j),
                Some('}') => return (all, j + 1),
                Some(',') => j += 1,
                Some(_) => {
                    let (sub, next) = tree(c, j);
                    all.extend(sub);
                    j = if next == j { j + 1 } else { next };
                }
            }
        }
    }
    if c.get(i) == Some(&'*') {
        return (vec![vec![]], i + 1);
    }
    let word = ident_from(c, i);
    if word.is_empty() {
        return (vec![], i);
    }
    let after = i + word.len();
    if c.get(after..after + 2) == Some(&[':', ':']) {
        let (subs, end) = tree(c, after + 2);
        if !subs.is_empty() {
            let joined = subs.into_iter().map(|mut s| {
                s.insert(0, word.clone());
                s
            });
            return (joined.collect(), end);
        }
    }
    (vec![vec![word]], after)
}

pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every cycle of the graph, one per strongly connected set of more than one node, as a path
/// `a -> b -> ... -> a`.
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for set in strongly_connected(graph)
        .into_iter()
        .filter(|s| s.len() > 1)
    {
        let first = set.iter().next().cloned().unwrap_or_default();
        out.push(path_back(graph, &set, &first));
    }
    out
}

/// Tarjan-free: a node's set is what it reaches that also reaches it (small graphs only).
pub fn strongly_connected(graph: &Graph) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![from.clone()]);
        while let Some(n) = todo.pop() {
            for m in graph.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    todo.push(m.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|k| (k, reach(k))).collect();
    let mut sets: Vec<BTreeSet<String>> = Vec::new();
    for (k, r) in &reaches {
        if sets.iter().any(|s| s.contains(*k)) || !r.contains(*k) {
            continue;
        }
        let set = r
            .iter()
            .filter(|m| reaches.get(m).is_some_and(|rm| rm.contains(*k)))
            .cloned()
            .collect();
        sets.push(set);
    }
    sets
}

/// The shortest path from `start` back to itself inside `set` (breadth first).
fn path_back(graph: &Graph, set: &BTreeSet<String>, start: &String) -> Vec<String> {
    let mut parent: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(n) = queue.pop_front() {
        for m in graph
            .get(&n)
            .into_iter()
            .flatten()
            .filter(|m| set.contains(*m))
        {
            if m == start {
                let mut chain = vec![n.clone()];
                while let Some(p) = chain
                    .last()
                    .filter(|l| *l != start)
                    .and_then(|l| parent.get(l))
                {
                    chain.push(p.clone());
                }
                chain.reverse();
                chain.push(start.clone());
                return chain;
            }
            if !parent.contains_key(m) {
                parent.insert(m.clone(), n.clone());
                queue.push_back(m.clone());
            }
        }
    }
    vec![start.clone()]
}
