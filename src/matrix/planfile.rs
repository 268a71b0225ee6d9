//! The plan file: a text job list, one cell a line as the plain `perflab run` command it is,
//! under a header of comments (`# perflab matrix plan 1`, `# id <UTC stamp>`, how it was made).
//! Read back as hostile input: bounded in bytes, lines and tokens, every line parsed against
//! the only grammar `matrix plan` writes (no shell: the runners build their commands from the
//! parsed cells, each word quoted), each error naming the file, the line, the field and the fix.
use super::{Cell, Flags, Plan};
use crate::rundir::cell::CellName;
use std::path::Path;

/// The first line of every plan file.
pub(crate) const MAGIC: &str = "# perflab matrix plan 1";
/// Largest plan file read (a cell line is about 120 bytes: 30,000 cells).
pub(crate) const MAX_BYTES: u64 = crate::rundir::read::FileKind::MatrixPlan.max_bytes();
/// Most cells a plan holds (3 suites x 26 experiments x 50 rounds is 3,900).
pub(crate) const MAX_CELLS: usize = 20_000;
/// Longest line.
pub(crate) const MAX_LINE: usize = 2048;
/// Most words on a cell line.
pub(crate) const MAX_WORDS: usize = 64;

/// The plan as text.
pub(crate) fn render(plan: &Plan) -> String {
    let mut s = format!("{MAGIC}\n# id {}\n", plan.id_str());
    s.push_str(&format!("# made by: {}\n", one_line(&plan.made_by)));
    s.push_str(&format!(
        "# {} cell(s) to run; {} complete under the out/ root were skipped\n",
        plan.cells.len(),
        plan.skipped
    ));
    for c in &plan.cells {
        s.push_str(&c.args_line());
        s.push('\n');
    }
    s
}

fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(400)
        .collect()
}

impl Cell {
    /// The cell's line in the plan: `perflab run ...`, words separated by one space.
    pub(crate) fn args_line(&self) -> String {
        std::iter::once("perflab".to_string())
            .chain(self.args())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Read and parse a plan file (bad input: exit 2, naming the file and the line): a regular
/// file only (a FIFO or a device is refused without blocking), at most [`MAX_BYTES`].
pub(crate) fn read(path: &Path) -> anyhow::Result<Plan> {
    use crate::rundir::read::{FileKind, ReadError, RunFile, whole};
    let bad = |m: String| crate::error::invalid(format!("{}: {m}", path.display()));
    let buf = whole(&RunFile::loose(path, FileKind::MatrixPlan)).map_err(|e| match e {
        ReadError::TooLarge { .. } => bad(format!(
            "larger than {} MiB; a plan holds at most {MAX_CELLS} cells: split the matrix",
            MAX_BYTES >> 20
        )),
        ReadError::NotRegular { what, .. } => bad(format!(
            "not a regular file ({what}); give the plan file `matrix plan --plan` wrote"
        )),
        e => bad(format!(
            "cannot read the plan ({}); write one with `perflab matrix plan TARGETS --plan FILE`",
            e.why()
        )),
    })?;
    let text = String::from_utf8(buf).map_err(|e| {
        bad(format!(
            "not UTF-8 text (byte {}); give the plan file `matrix plan --plan` wrote",
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse(&text).map_err(|(line, m)| bad(format!("line {line}: {m}")))
}

/// The fuzz target's path through a plan's text (`fuzz/entries.rs`, `plan_file`): parsed; a
/// plan that parses renders to text that parses back to the same cells, and its runners'
/// commands and Slurm script are built from it, every word of a cell quoted to one shell word.
#[doc(hidden)]
pub fn fuzz_text(text: &str) {
    let Ok(plan) = parse(text) else { return };
    let again = parse(&render(&plan)).expect("a rendered plan parses");
    assert_eq!(
        (again.id, again.skipped, &again.cells),
        (plan.id, plan.skipped, &plan.cells),
        "a plan read back differs"
    );
    for c in &plan.cells {
        let cmd = c.shell_command("/opt/perflab");
        assert!(!cmd.contains('\n') && cmd.len() <= 16 * MAX_LINE, "{cmd}");
    }
    let (script, n) = super::slurm::script(&plan, Path::new("/nonexistent/out"), "perflab");
    assert_eq!(n, plan.cells.len());
    assert_eq!(
        script.matches(" ;;\n").count(),
        n + 1,
        "one case line per cell"
    );
}

/// Parse a plan's text; an error is `(line number, what and the fix)`.
pub(crate) fn parse(text: &str) -> Result<Plan, (usize, String)> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, l)) if l.trim_end() == MAGIC => {}
        _ => {
            return Err((
                1,
                format!(
                    "the first line is not `{MAGIC}`: this is not a plan `perflab matrix plan` wrote"
                ),
            ));
        }
    }
    let mut id = None;
    let (mut made_by, mut skipped) = (String::new(), 0usize);
    let mut cells: Vec<Cell> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (n, line) in lines {
        if line.len() > MAX_LINE {
            return Err((
                n,
                format!("{} bytes; a line holds at most {MAX_LINE}", line.len()),
            ));
        }
        let line = line.trim();
        if let Some(c) = line.strip_prefix('#') {
            if !cells.is_empty() && c.trim().starts_with("id ") {
                // the cells above it were never held to it
                return Err((
                    n,
                    "an `# id` line after the cells; the id is in the header, above every cell: plan again".into(),
                ));
            }
            header(c.trim(), n, &mut id, &mut made_by, &mut skipped)?;
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if cells.len() == MAX_CELLS {
            return Err((
                n,
                format!("more than {MAX_CELLS} cells; split the matrix into plans"),
            ));
        }
        let cell = parse_cell(line).map_err(|m| (n, m))?;
        if let Some(id) = id
            && cell.name.stamp != id
        {
            return Err((
                n,
                format!(
                    "field --run-name: {} does not start with the plan's id {}; cells of another plan do not belong here (plan again)",
                    cell.name,
                    id.format("%Y%m%dT%H%M%SZ")
                ),
            ));
        }
        if !seen.insert(cell.id()) {
            return Err((
                n,
                format!("cell {} is listed twice; each cell runs once", cell.id()),
            ));
        }
        cells.push(cell);
    }
    let id = id.ok_or((1, "no `# id <UTC stamp>` line: plan again".to_string()))?;
    Ok(Plan {
        id,
        made_by,
        skipped,
        cells,
    })
}

fn header(
    c: &str,
    n: usize,
    id: &mut Option<chrono::DateTime<chrono::Utc>>,
    made_by: &mut String,
    skipped: &mut usize,
) -> Result<(), (usize, String)> {
    if let Some(v) = c.strip_prefix("id ") {
        let t =
            chrono::NaiveDateTime::parse_from_str(v.trim(), "%Y%m%dT%H%M%SZ").map_err(|_| {
                (
                    n,
                    format!(
                        "field id: `{}` is not a UTC stamp like 20261201T101500Z",
                        v.escape_debug()
                    ),
                )
            })?;
        if id.replace(t.and_utc()).is_some() {
            return Err((n, "a second `# id` line; a plan has one id".into()));
        }
    } else if let Some(v) = c.strip_prefix("made by: ") {
        *made_by = v.to_string();
    } else if let Some(v) = c.strip_suffix(" complete under the out/ root were skipped") {
        *skipped = v
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
    }
    Ok(())
}

/// A word a plan line may hold: printable ASCII without spaces, quotes or shell characters.
pub(crate) fn plain_word(w: &str) -> Result<(), String> {
    match w
        .chars()
        .find(|c| !c.is_ascii_graphic() || "'\"\\`$;|&<>".contains(*c))
    {
        Some(c) => Err(format!(
            "`{}` holds {c:?}; a plan's words are plain (no spaces, quotes, shell characters or non-ASCII): plan again",
            w.escape_debug()
        )),
        None => Ok(()),
    }
}

/// One cell line: `perflab run EXP --suite S --run-name NAME [flags]`.
pub(crate) fn parse_cell(line: &str) -> Result<Cell, String> {
    let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
    if words.len() > MAX_WORDS {
        return Err(format!(
            "{} words; a cell line holds at most {MAX_WORDS}",
            words.len()
        ));
    }
    for w in &words {
        plain_word(w)?;
    }
    let [perflab, run, experiment, rest @ ..] = words.as_slice() else {
        return Err("not a cell: give `perflab run EXP --suite S --run-name NAME [flags]`".into());
    };
    if (*perflab, *run) != ("perflab", "run") {
        return Err(format!(
            "`{perflab} {run}`: a cell line starts with `perflab run` (the runners put the real program in)"
        ));
    }
    if !crate::experiment::validate::valid_id(experiment) {
        return Err(format!(
            "field experiment: `{experiment}` is not an experiment id (`perflab list`)"
        ));
    }
    let (mut suite, mut name, mut flags) = (None, None, Flags::default());
    let mut given = std::collections::BTreeSet::new();
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        // `matrix plan` writes each flag once (`--set` once per override): a second one is
        // not a cell it wrote, and which of the two would count is no one's guess
        if *flag != "--set" && !given.insert(*flag) {
            return Err(format!(
                "field {flag}: given twice; a cell line gives each flag once (plan again)"
            ));
        }
        let mut value = || {
            it.next()
                .copied()
                .ok_or_else(|| format!("field {flag}: no value after it"))
        };
        match *flag {
            "--suite" => {
                suite = Some(
                    value()?
                        .parse()
                        .map_err(|e| format!("field --suite: {e}"))?,
                )
            }
            "--run-name" => {
                name =
                    Some(CellName::parse(value()?).map_err(|e| format!("field --run-name: {e}"))?)
            }
            "--cpus" => flags.cpus = Some(value()?.to_string()),
            "--set" => flags.sets.push(value()?.to_string()),
            "--quick" => flags.quick = true,
            "--fit" => flags.fit = true,
            "--no-align" => flags.no_align = true,
            "--force-cpus" => flags.force_cpus = true,
            other => {
                return Err(format!(
                    "field `{other}`: not a flag a cell takes (--suite, --run-name, --quick, --fit, --no-align, --cpus, --force-cpus, --set)"
                ));
            }
        }
    }
    let suite: crate::images::Suite =
        suite.ok_or("field --suite: missing; every cell names its suite")?;
    let name: CellName =
        name.ok_or("field --run-name: missing; every cell names its run directory")?;
    if name.label != suite.as_str() {
        return Err(format!(
            "field --run-name: {name} ends in `{}` but the cell's suite is {suite}; the label is the suite",
            name.label
        ));
    }
    Ok(Cell {
        experiment: experiment.to_string(),
        suite,
        name,
        flags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "# perflab matrix plan 1\n# id 20261201T101500Z\n# made by: perflab matrix plan demo-open\n# 2 cell(s) to run; 1 complete under the out/ root were skipped\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie --quick --no-align\nperflab run demo-open --suite forky --run-name 20261201T101500Z-r1-forky --quick --no-align --set load.steps=[100,200]\n";

    #[test]
    fn a_plan_reads_back_as_written() {
        let p = parse(GOOD).unwrap();
        assert_eq!(p.cells.len(), 2);
        assert_eq!(p.skipped, 1);
        assert_eq!(p.cells[1].flags.sets, ["load.steps=[100,200]"]);
        assert_eq!(render(&p), GOOD);
        assert_eq!(
            p.cells[1].shell_command("/opt/perflab"),
            "/opt/perflab run demo-open --suite forky --run-name 20261201T101500Z-r1-forky --quick --no-align --set 'load.steps=[100,200]'"
        );
    }

    #[test]
    fn hostile_lines_name_the_line_and_field() {
        let cases = [
            ("x\n", 1, "not a plan"),
            (
                "# perflab matrix plan 1\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie\n",
                1,
                "no `# id",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie; rm -rf /\n",
                3,
                "shell characters",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nsh -c x y\n",
                3,
                "starts with `perflab run`",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite sid --run-name 20261201T101500Z-r1-sid\n",
                3,
                "field --suite",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie --run-name 20261201T101501Z-r1-trixie\n",
                3,
                "plan's id",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-forky\n",
                3,
                "the label is the suite",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie --out /etc\n",
                3,
                "field `--out`",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie\n",
                3,
                "--run-name: missing",
            ),
            ("# perflab matrix plan 1\n# id 2026\n", 2, "field id"),
            // the id after the cells: the cells above it were never held to it (issue 38)
            (
                "# perflab matrix plan 1\nperflab run demo-open --suite trixie --run-name 20261201T101501Z-r1-trixie\n# id 20261201T101500Z\n",
                3,
                "`# id` line after the cells",
            ),
            // a flag twice: which one counts would be a guess (issue 38)
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite forky --run-name 20261201T101500Z-r1-trixie --suite trixie\n",
                3,
                "field --suite: given twice",
            ),
            (
                "# perflab matrix plan 1\n# id 20261201T101500Z\nperflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie --quick --quick\n",
                3,
                "field --quick: given twice",
            ),
        ];
        for (text, line, want) in cases {
            let (n, m) = parse(text).unwrap_err();
            assert_eq!(n, line, "{text}: {m}");
            assert!(m.contains(want), "{text}: {m}");
        }
        let twice = format!(
            "{GOOD}perflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie\n"
        );
        assert!(parse(&twice).unwrap_err().1.contains("listed twice"));
        let long = format!("{GOOD}perflab run {}\n", "x".repeat(MAX_LINE));
        assert!(parse(&long).unwrap_err().1.contains("at most 2048"));
    }
}
