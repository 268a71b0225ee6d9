//! `perflab history`'s arguments and what it prints. clap's struct lives here, not in `cli`,
//! because `cli` is at its line limit (docs/architecture.md); `cli` holds the variant and the
//! dispatch. The work is `gather`, `render` and `ack`.
use super::model::{History, Request};
use super::{ack, render};
use crate::experiment::Catalog;
use chrono::{DateTime, NaiveDate, Utc};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// An experiment or group [default: every experiment of out/]; `ack EXP POINT` records that the change at POINT (a run of EXP's history) was seen
    #[arg(value_name = "EXP|GROUP|ack")]
    pub target: Vec<String>,
    /// Only runs made with this Debian suite's images
    #[arg(long, value_parser = crate::images::suite_values(false))]
    pub suite: Option<String>,
    /// Only runs made on or after this day (YYYY-MM-DD, UTC)
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Root of the run directories
    #[arg(long, env = "PERFLAB_OUT", default_value = "out")]
    pub out: PathBuf,
    /// Print the series and change points as JSON
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print the CSV Apache Otava reads as it is (one `branch` per series: `otava analyze --branch`)
    #[arg(long)]
    pub csv: bool,
    /// Exit 1 when a change point after the last acknowledged one is a regression (or a claim failed after passing), else 0
    #[arg(long)]
    pub check: bool,
    /// Points the change-point detection looks at together; a series with fewer judged points is too short to judge (docs/history.md: the power and false alarms at 30)
    #[arg(long, value_name = "N", default_value_t = crate::analyze::changepoint::Options::default().window as u16, value_parser = clap::value_parser!(u16).range(4..=1000))]
    pub window: u16,
    /// Keep the points of slowed or host-limited runs in the detection (they are always listed, marked)
    #[arg(long)]
    pub all_points: bool,
    /// Write a page per experiment (out/history/<exp>.html) and link them from out/index.html
    #[arg(long)]
    pub pages: bool,
    /// Catalog directory (the claims judged at each point) [default: $PERFLAB_CATALOG, else ./experiments]
    #[arg(long, value_name = "DIR", env = "PERFLAB_CATALOG")]
    pub catalog: Option<PathBuf>,
}

fn since(s: &str) -> anyhow::Result<DateTime<Utc>> {
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|e| {
        crate::error::invalid(format!("--since {s}: {e} (give a day as YYYY-MM-DD)"))
    })?;
    Ok(d.and_hms_opt(0, 0, 0).expect("midnight").and_utc())
}

/// The catalog, when there is one (history reads out/ without it: claims then come from each
/// run's recorded experiment).
fn catalog(a: &HistoryArgs) -> Option<Catalog> {
    let dir = a
        .catalog
        .clone()
        .unwrap_or_else(crate::experiment::catalog::default_dir);
    Catalog::load(&dir, &crate::verify::quantities::Quantities).ok()
}

/// What writes the history pages (`html::history_page::write`, a floor above).
pub type Pages<'a> = &'a dyn Fn(&Path, &History) -> anyhow::Result<Vec<PathBuf>>;

/// Run `perflab history` (or `history ack EXP POINT`): print, and the exit code.
pub fn run(a: HistoryArgs, pages: Pages<'_>) -> anyhow::Result<ExitCode> {
    let cat = catalog(&a);
    let (acking, target) = match a.target.as_slice() {
        [first, exp, point] if first == "ack" => {
            (Some((exp.clone(), point.clone())), Some(exp.as_str()))
        }
        [first, ..] if first == "ack" => {
            return Err(crate::error::invalid(
                "history ack takes an experiment and a point: `perflab history ack EXP POINT` (a run of EXP's history, e.g. 20261209T031500Z-r1)".to_string(),
            ));
        }
        [one] => (None, Some(one.as_str())),
        [] => (None, None),
        _ => {
            return Err(crate::error::invalid(
                "history takes one experiment or group (or `ack EXP POINT`)".to_string(),
            ));
        }
    };
    let req = Request {
        experiments: super::experiments(target, cat.as_ref(), &a.out)?,
        suite: a.suite.clone(),
        since: a.since.as_deref().map(since).transpose()?,
        all_points: a.all_points,
        options: crate::analyze::changepoint::Options {
            window: usize::from(a.window),
            ..Default::default()
        },
    };
    let h = super::gather(&a.out, &req, cat.as_ref());
    if let Some((exp, point)) = acking {
        let run = ack::ack(&a.out, &h, &exp, &point, Utc::now())?;
        crate::output::emit(&format!(
            "acknowledged {run} in {}\n",
            a.out.join(ack::ACK_FILE).display()
        ));
        return Ok(ExitCode::SUCCESS);
    }
    print(&a, &h)?;
    if a.pages {
        for p in pages(&a.out, &h)? {
            crate::say!("wrote {}", p.display());
        }
    }
    if a.check {
        let alerts = ack::check(&h);
        for l in &alerts {
            crate::say!("regression: {l}");
        }
        return Ok(if alerts.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    Ok(ExitCode::SUCCESS)
}

fn print(a: &HistoryArgs, h: &History) -> anyhow::Result<()> {
    if a.json {
        crate::output::emit(&(serde_json::to_string_pretty(h)? + "\n"));
    } else if a.csv {
        crate::output::emit(&render::csv(h)?);
    } else {
        crate::output::emit(&render::text(h));
    }
    Ok(())
}
