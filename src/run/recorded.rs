//! `perflab compare RUN_A RUN_B`: recorded runs compared, each side one run or several
//! comma-separated rounds (bad input, exit 2: a run that cannot be read, more rounds than the
//! plan of `--max-rounds`, sides that differ in more than the suite and `--set`), the verdict
//! of `verify::compare` and, with `--html`, its page.
use std::path::Path;
use std::process::ExitCode;

use crate::error::invalid;
use crate::verify::compare;
use crate::verify::load::{self, LoadedRun};

/// What `compare RUN_A RUN_B` is asked.
pub(crate) struct Recorded<'a> {
    pub run_a: &'a str,
    pub run_b: &'a str,
    pub out: &'a Path,
    pub settings: compare::Settings,
    /// `--html FILE`: the page's path.
    pub html: Option<&'a Path>,
    /// `--json`: the page's path is not said on stderr.
    pub json: bool,
}

/// One side of `compare`: its comma-separated runs, each resolved like a RUN argument.
fn compare_side(arg: &str, out: &Path) -> anyhow::Result<Vec<LoadedRun>> {
    let parts: Vec<&str> = arg.split(',').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(invalid(format!(
            "`{arg}`: an empty run in the list; give run directories separated by commas"
        )));
    }
    parts
        .into_iter()
        .map(|p| load::resolve_run(p, out, None))
        .collect()
}

/// The comparison of `a`'s two sides printed (text, or `--json`), its page written with
/// `--html`; the exit code of its verdict.
pub(crate) fn compare(a: &Recorded) -> anyhow::Result<ExitCode> {
    // the runs first (the first real problem), then the settings, then where the page goes
    let ra = compare_side(a.run_a, a.out)?;
    let rb = compare_side(a.run_b, a.out)?;
    let settings = a.settings;
    settings.check().map_err(invalid)?;
    for (side, runs) in [("A", &ra), ("B", &rb)] {
        if runs.len() > settings.max_rounds {
            return Err(invalid(format!(
                "side {side} has {} rounds, more than the plan of --max-rounds {}: the boundary must be planned before the rounds are seen; give --max-rounds {} to judge them as one plan, or fewer rounds",
                runs.len(),
                settings.max_rounds,
                runs.len()
            )));
        }
    }
    if let Some(path) = a.html {
        crate::html::check_page_path(path)?;
    }
    let la: Vec<String> = ra.iter().map(LoadedRun::label).collect();
    let lb: Vec<String> = rb.iter().map(LoadedRun::label).collect();
    let sa: Vec<compare::Run> = ra
        .iter()
        .zip(&la)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    let sb: Vec<compare::Run> = rb
        .iter()
        .zip(&lb)
        .map(|(r, l)| (l.as_str(), &r.report, &r.manifest))
        .collect();
    compare::sides::check(&sa, &sb).map_err(|e| invalid(format!("compare: {e}")))?;
    let c = compare::compare_rounds_with(&sa, &sb, &settings);
    if let Some(path) = a.html {
        let dirs = |runs: &[LoadedRun]| runs.iter().map(|r| r.dir.clone()).collect::<Vec<_>>();
        let page = crate::html::compare_page::render(&c, &dirs(&ra), &dirs(&rb), path);
        crate::rundir::output_path::write_file("--html", path, page.as_bytes())?;
        if !a.json {
            crate::say!("wrote {}", path.display());
        }
    }
    if a.json {
        crate::out!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        crate::output::emit(&compare::render::text(&c));
    }
    Ok(ExitCode::from(compare::exit_code([c.verdict])))
}
