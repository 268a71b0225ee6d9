//! What each catalog entry expands to, counted without building the list: how many experiments
//! it runs, its labs and how deep its groups nest, for every entry in one pass over the member
//! lists (linear in the catalog's size), and the fault of a group past a bound (a cycle, nesting
//! past [`MAX_GROUP_DEPTH`], more than [`MAX_MEMBERS`] experiments), naming the chain of groups.
use super::schema::{CatalogEntry, Lab};
use std::collections::{BTreeMap, BTreeSet};

/// Most experiments one group may run (repeats counted); the catalog's `all` runs 26.
pub const MAX_MEMBERS: u64 = 10_000;
/// Deepest nesting of groups in groups; the catalog's is 2.
pub(crate) const MAX_GROUP_DEPTH: usize = 32;

/// What one entry expands to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extent {
    /// Experiments it runs, repeats counted; past [`MAX_MEMBERS`] only "more" is kept.
    pub members: u64,
    /// Group levels at and under it (0 for an experiment), past [`MAX_GROUP_DEPTH`] only "more".
    pub height: usize,
    /// The labs of its experiments.
    pub labs: BTreeSet<Lab>,
    /// Why it cannot run (a cycle, too deep, too many), naming the chain of groups.
    pub fault: Option<String>,
}

/// Per entry, the member that leads to each fault (the chain of a message follows them).
#[derive(Debug, Clone, Copy, Default)]
struct Via {
    cycle: Option<usize>,
    deepest: Option<usize>,
    big: Option<usize>,
    /// The sum of the members' counts (exact for a group whose members are within bounds).
    sum: u64,
}

/// The extents of every entry of `files`, by id. An unknown member counts as nothing (the
/// catalog reports it).
pub(crate) fn extents(files: &BTreeMap<String, &CatalogEntry>) -> BTreeMap<String, Extent> {
    let ids: Vec<&str> = files.keys().map(String::as_str).collect();
    let members: Vec<Vec<usize>> = files
        .values()
        .map(|e| match e {
            CatalogEntry::Group(g) => (g.members.iter())
                .filter_map(|m| ids.binary_search(&m.as_str()).ok())
                .collect(),
            CatalogEntry::Experiment(_) => Vec::new(),
        })
        .collect();
    let entries: Vec<&CatalogEntry> = files.values().copied().collect();
    let mut out = vec![Extent::default(); ids.len()];
    let mut via = vec![Via::default(); ids.len()];
    // iterative depth-first search: 0 unseen, 1 on the path, 2 done
    let mut state = vec![0u8; ids.len()];
    for root in 0..ids.len() {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some((v, next)) = path.last_mut() {
            let v = *v;
            if let Some(&c) = members[v].get(*next) {
                *next += 1;
                match state[c] {
                    0 => {
                        state[c] = 1;
                        path.push((c, 0));
                    }
                    1 => {
                        via[v].cycle.get_or_insert(c);
                    }
                    _ => {}
                }
                continue;
            }
            finish(v, entries[v], &members[v], &mut out, &mut via);
            state[v] = 2;
            path.pop();
        }
    }
    for v in 0..ids.len() {
        out[v].fault = fault(v, &ids, &out, &via);
    }
    ids.iter().map(|s| s.to_string()).zip(out).collect()
}

/// The extent of entry `v`, whose members are all done (or on the path: a cycle).
fn finish(v: usize, e: &CatalogEntry, members: &[usize], out: &mut [Extent], via: &mut [Via]) {
    if let CatalogEntry::Experiment(x) = e {
        out[v].members = 1;
        out[v].labs.insert(x.lab);
        return;
    }
    let mut x = Extent {
        height: 1,
        ..Extent::default()
    };
    let mut w = via[v];
    for &m in members {
        let e = &out[m];
        w.sum = w.sum.saturating_add(e.members);
        x.members = w.sum.min(MAX_MEMBERS + 1);
        if e.height + 1 > x.height {
            x.height = (e.height + 1).min(MAX_GROUP_DEPTH + 1);
            w.deepest = Some(m);
        }
        x.labs.extend(e.labs.iter().copied());
        if via[m].cycle.is_some() {
            w.cycle.get_or_insert(m);
        }
        if e.members > MAX_MEMBERS {
            w.big.get_or_insert(m);
        }
    }
    out[v] = x;
    via[v] = w;
}

/// Why entry `v` cannot run, naming the chain of groups that makes it so; `None` when it is
/// within bounds.
fn fault(v: usize, ids: &[&str], out: &[Extent], via: &[Via]) -> Option<String> {
    // from `v`, the member `next` names, and so on: one past the depth bound at most, or until
    // a group repeats
    let chain = |next: fn(&Via) -> Option<usize>| {
        let mut chain = vec![v];
        while chain.len() <= MAX_GROUP_DEPTH {
            let Some(n) = next(&via[*chain.last().expect("starts with v")]) else {
                break;
            };
            let repeat = chain.contains(&n);
            chain.push(n);
            if repeat {
                break;
            }
        }
        chain
    };
    let names = |c: &[usize]| c.iter().map(|i| ids[*i]).collect::<Vec<_>>().join(" -> ");
    if via[v].cycle.is_some() {
        let c = chain(|w| w.cycle);
        let closed = c[..c.len() - 1].contains(&c[c.len() - 1]);
        let tail = if closed { "" } else { " -> ..." };
        return Some(format!("group cycle: {}{tail}", names(&c)));
    }
    if out[v].height > MAX_GROUP_DEPTH {
        let c = chain(|w| w.deepest);
        return Some(format!(
            "groups nested deeper than {MAX_GROUP_DEPTH} levels: {} -> ...",
            names(&c)
        ));
    }
    if out[v].members > MAX_MEMBERS {
        let c = chain(|w| w.big);
        let last = *c.last().expect("starts with v");
        return Some(format!(
            "expands to more than {MAX_MEMBERS} experiments: {} (`{}` runs {})",
            names(&c),
            ids[last],
            via[last].sum
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{Group, GroupKind};

    fn group(id: &str, members: &[&str]) -> (String, CatalogEntry) {
        let g = Group {
            kind: GroupKind::Group,
            id: id.into(),
            description: "x".into(),
            members: members.iter().map(|m| m.to_string()).collect(),
            map: None,
        };
        (id.into(), CatalogEntry::Group(g))
    }

    /// `1a` (node) and `exp1` (php) from the catalog, and `groups`.
    fn with(groups: Vec<(String, CatalogEntry)>) -> BTreeMap<String, Extent> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/");
        let mut all: BTreeMap<String, CatalogEntry> = groups.into_iter().collect();
        for id in ["1a", "exp1"] {
            let src = std::fs::read_to_string(format!("{dir}{id}.yaml")).unwrap();
            all.insert(
                id.into(),
                CatalogEntry::Experiment(serde_yaml::from_str(&src).unwrap()),
            );
        }
        extents(&all.iter().map(|(k, v)| (k.clone(), v)).collect())
    }

    #[test]
    fn a_group_bomb_is_counted_not_built() {
        let mut gs = vec![group("g1", &["1a"; 10])];
        let names: Vec<String> = (1..=9).map(|i| format!("g{i}")).collect();
        for i in 2..=9 {
            gs.push(group(&names[i - 1], &[names[i - 2].as_str(); 10]));
        }
        let x = with(gs);
        assert_eq!(
            (x["g4"].members, x["g4"].height, &x["g4"].fault),
            (10_000, 4, &None)
        );
        assert_eq!(x["g4"].labs, BTreeSet::from([Lab::Node]));
        assert_eq!(
            x["g9"].fault.as_deref(),
            Some(
                "expands to more than 10000 experiments: g9 -> g8 -> g7 -> g6 -> g5 (`g5` runs 100000)"
            )
        );
        assert_eq!(x["g9"].members, MAX_MEMBERS + 1);
        assert!(
            x["g5"]
                .fault
                .as_deref()
                .unwrap()
                .contains(": g5 (`g5` runs 100000)")
        );
    }

    #[test]
    fn cycles_name_the_loop_from_each_group() {
        let x = with(vec![
            group("a", &["1a", "b"]),
            group("b", &["a"]),
            group("c", &["exp1", "b"]),
            group("d", &["1a", "exp1"]),
        ]);
        let f = |id: &str| x[id].fault.clone().unwrap_or_default();
        assert_eq!(f("a"), "group cycle: a -> b -> a");
        assert_eq!(f("b"), "group cycle: b -> a -> b");
        assert_eq!(f("c"), "group cycle: c -> b -> a -> b");
        assert_eq!(x["d"].fault, None);
        assert_eq!(x["d"].labs, BTreeSet::from([Lab::Php, Lab::Node]));
        assert_eq!(x["1a"].fault, None);
    }

    #[test]
    fn nesting_past_the_bound_names_the_chain() {
        let ids: Vec<String> = (0..40).map(|i| format!("d{i}")).collect();
        let gs = (0..40)
            .map(|i| group(&ids[i], &[ids.get(i + 1).map_or("1a", |s| s.as_str())]))
            .collect();
        let x = with(gs);
        // d39 is one level, d0 forty
        assert_eq!(x["d8"].fault, None);
        assert_eq!(x["d8"].height, 32);
        let f = x["d7"].fault.clone().unwrap();
        let chain: Vec<&str> = ids[7..40].iter().map(String::as_str).collect();
        assert_eq!(
            f,
            format!(
                "groups nested deeper than 32 levels: {} -> ...",
                chain.join(" -> ")
            )
        );
        assert!(
            x["d0"]
                .fault
                .as_deref()
                .unwrap()
                .starts_with("groups nested deeper than 32 levels: d0 -> d1 -> ")
        );
    }

    /// A cycle of 30,000 groups: no recursion, linear time.
    #[test]
    fn long_chains_and_cycles_take_linear_time_and_no_stack() {
        let n = 30_000;
        let ids: Vec<String> = (0..n).map(|i| format!("c{i:06}")).collect();
        let gs = (0..n)
            .map(|i| group(&ids[i], &[ids[(i + 1) % n].as_str()]))
            .collect();
        let t = std::time::Instant::now();
        let x = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || with(gs))
            .unwrap()
            .join()
            .unwrap();
        assert!(x.values().filter(|e| e.fault.is_some()).count() == n);
        let f = x["c000000"].fault.clone().unwrap();
        assert!(
            f.starts_with("group cycle: c000000 -> c000001 -> ") && f.ends_with(" -> ..."),
            "{f}"
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            t.elapsed()
        );
    }
}
