//! What `perflab list` prints of the catalog: its entries in the article's order (experiments
//! first, by lab), as JSON items, the markdown table of docs/catalog.md, or an aligned table
//! fitted to the terminal; and what `perflab show` prints of an entry's plan (`plan::show`),
//! with the `--fit` preview from the last fitted run.
use std::io::Write;
use std::path::Path;

use crate::experiment::{Catalog, CatalogEntry, CatalogFile, Lab};
use crate::plan::planning::Planning;
use crate::plan::{Resolved, show};
use crate::report::table::Table;

/// `perflab show ID` of its catalog `file`: a group's runs, or one experiment's plan (text or JSON) with the CPU
/// layout on this host and the alignment if started now; `fit_from`: the out/ root whose last
/// fitted run previews `--fit`.
pub(crate) fn show(
    out: &mut impl Write,
    file: &CatalogFile,
    resolved: &[Resolved],
    p: &Planning,
    json: bool,
    fit_from: Option<&Path>,
) -> anyhow::Result<()> {
    let layout = match (
        &p.cpus,
        crate::plan::layout::on_this_host(p.cpus.as_deref(), p.force_cpus),
    ) {
        (Some(_), Err(e)) => return Err(e),
        (_, l) => l.map_err(|e| e.to_string()),
    };
    if let CatalogEntry::Group(g) = &file.entry {
        return show::group(out, g, resolved, json);
    }
    let r = &resolved[0];
    let alignment = crate::plan::align(chrono::Utc::now(), &r.plan, !p.no_align);
    if json {
        let v = show::json(&file.path, r, &p.set, &layout, &alignment);
        serde_json::to_writer_pretty(&mut *out, &v)?;
        writeln!(out)?;
        return Ok(());
    }
    show::render_experiment(out, &file.path, r, &layout, &alignment)?;
    if let Some(root) = fit_from {
        writeln!(out)?;
        let last = crate::rundir::last_fit(root, &r.experiment.id);
        let last = last.as_ref().map(|(run, f)| (run.as_str(), &f.quantities));
        crate::plan::show_fit::render(out, &r.experiment, last)?;
    }
    Ok(())
}

#[derive(Debug, serde::Serialize)]
pub(crate) struct ListItem<'a> {
    id: &'a str,
    kind: &'static str,
    lab: String,
    description: &'a str,
    finding: Option<&'a str>,
    steps: Option<&'a [u32]>,
    members: Option<&'a [String]>,
    file: String,
}

/// `perflab list`: the entries of `cat` (of `only_lab`) as JSON, the markdown table, or the
/// aligned table fitted to the terminal.
pub(crate) fn write(
    out: &mut impl Write,
    cat: &Catalog,
    only_lab: Option<&str>,
    json: bool,
    markdown: bool,
) -> anyhow::Result<()> {
    let items = items(cat, only_lab);
    if json {
        serde_json::to_writer_pretty(&mut *out, &items)?;
        writeln!(out)?;
    } else if markdown {
        self::markdown(out, &items)?;
    } else {
        text(out, &items, crate::output::width())?;
    }
    Ok(())
}

/// The catalog's entries (of `only_lab`): experiments in the article's order, groups last.
fn items<'c>(cat: &'c Catalog, only_lab: Option<&str>) -> Vec<ListItem<'c>> {
    let mut items: Vec<ListItem> = Vec::new();
    for (id, f) in &cat.files {
        let lab = cat.lab_of(id);
        if only_lab.is_some_and(|l| l != lab) {
            continue;
        }
        let (description, finding, steps, members) = match &f.entry {
            CatalogEntry::Experiment(e) => (
                &e.description,
                Some(e.finding.as_str()),
                Some(&e.load.steps[..]),
                None,
            ),
            CatalogEntry::Group(g) => (&g.description, None, None, Some(&g.members[..])),
        };
        items.push(ListItem {
            id,
            kind: f.entry.kind(),
            lab,
            description,
            finding,
            steps,
            members,
            file: f.path.display().to_string(),
        });
    }
    // experiments in the article's order (as the `all` and `demo` groups run them), groups last
    let mut order: std::collections::HashMap<&str, usize> = Default::default();
    for e in ["all", "demo"]
        .iter()
        .filter_map(|g| cat.expand(g).ok())
        .flatten()
    {
        let next = order.len();
        order.entry(e.id.as_str()).or_insert(next);
    }
    let rank = |id: &str| order.get(id).copied().unwrap_or(usize::MAX);
    items.sort_by_key(|i| {
        (
            i.kind == "group",
            lab_rank(&i.lab),
            rank(i.id),
            i.id.to_string(),
        )
    });
    items
}

/// The catalog table of docs/catalog.md.
fn markdown(out: &mut impl Write, items: &[ListItem<'_>]) -> std::io::Result<()> {
    writeln!(
        out,
        "| id | kind | lab | steps / members | article finding |"
    )?;
    writeln!(out, "|---|---|---|---|---|")?;
    for i in items {
        let steps = match (i.steps, i.members) {
            (Some(s), _) => s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
            (_, Some(m)) => m.join(", "),
            _ => String::new(),
        };
        let what = i.finding.unwrap_or(i.description).replace('|', "\\|");
        let line = format!(
            "| `{}` | {} | {} | {} | {} |",
            i.id, i.kind, i.lab, steps, what
        );
        writeln!(out, "{}", crate::report::table::md_text(&line))?;
    }
    Ok(())
}

/// The aligned table of `perflab list`, fitted to `width` columns: the steps or members and
/// the finding wrap onto continuation lines.
fn text(out: &mut impl Write, items: &[ListItem<'_>], width: usize) -> std::io::Result<()> {
    let mut headers = ["ID", "KIND", "LAB", "STEPS / MEMBERS", "FINDING (article)"];
    let cells: Vec<[String; 5]> = items
        .iter()
        .map(|i| {
            let steps = match (i.steps, i.members) {
                (Some(s), _) => s.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
                (_, Some(m)) => m.join(" "),
                _ => String::new(),
            };
            [
                i.id.to_string(),
                i.kind.to_string(),
                i.lab.clone(),
                steps,
                i.finding.unwrap_or(i.description).to_string(),
            ]
        })
        .collect();
    let natural = |c: usize| {
        cells
            .iter()
            .map(|r| r[c].chars().count())
            .max()
            .unwrap_or(0)
    };
    // id, kind and lab whole; the steps a third of the rest (10 to 24 wide); the finding the
    // other two thirds
    let mut w: Vec<usize> = (0..3).map(|c| natural(c).max(headers[c].len())).collect();
    let avail = width.saturating_sub(w.iter().sum::<usize>() + 2 * 4);
    if avail < headers[3].len() + headers[4].len() {
        // too narrow for the long headers: their first words
        headers[3] = "STEPS";
        headers[4] = "FINDING";
    }
    let natural = |c: usize| natural(c).max(headers[c].len());
    let steps = natural(3).min(24).min((avail / 3).max(10));
    w.push(steps);
    w.push(avail.saturating_sub(steps).max(16));
    let mut t = Table::new(headers);
    t.left = (0..5).collect();
    t.widths = Some(w.clone());
    for r in &cells {
        let steps = crate::output::wrap(&r[3], w[3]);
        let finding = crate::output::wrap(&r[4], w[4]);
        for k in 0..steps.len().max(finding.len()) {
            let first = |c: usize| if k == 0 { r[c].clone() } else { String::new() };
            let line = |v: &[String]| v.get(k).cloned().unwrap_or_default();
            t.push(vec![
                first(0),
                first(1),
                first(2),
                line(&steps),
                line(&finding),
            ]);
        }
    }
    out.write_all(t.to_text().as_bytes())
}

/// `Lab::ALL`'s order; anything else after.
fn lab_rank(lab: &str) -> usize {
    Lab::ALL
        .iter()
        .position(|l| l.as_str() == lab)
        .unwrap_or(Lab::ALL.len())
}
