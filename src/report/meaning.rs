//! "What this means": the report's first block. The knee here against the article's finding,
//! why they may differ (this host's CPUs, steal and other processes during the steps, `--fit`:
//! the numbers the report's host blocks already hold), and the next commands, chosen from the
//! run's own state. A pure function of the report and the run's manifest.
use super::table::Block;
use crate::analyze::model::Report;
use crate::rundir::Manifest;

/// The CPUs of the article's host (one 4-vCPU VM: k6, PostgreSQL and a 2-CPU app box pinned apart).
pub(crate) const ARTICLE_CPUS: usize = 4;
/// The longest article finding quoted, in characters.
const QUOTE_MAX: usize = 140;

/// One suggested command and why it is suggested.
#[derive(Debug, Clone, PartialEq)]
pub struct Next {
    /// A real `perflab` command line (the tests parse each with the CLI).
    pub command: String,
    pub why: String,
}

/// The block's content, rendered as text/Markdown ([`Meaning::block`]) or HTML.
#[derive(Debug, Clone, PartialEq)]
pub struct Meaning {
    /// The knee here against the article's.
    pub knee: String,
    /// Why they may differ on this run.
    pub differ: String,
    pub next: Vec<Next>,
}

pub(crate) const TITLE: &str = "What this means";

impl Meaning {
    /// The block: two lines, then one `next:` line per command (at most 7 lines).
    pub fn block(&self) -> Block {
        let mut b = Block::new(TITLE);
        b.lines.push(self.knee.clone());
        b.lines.push(self.differ.clone());
        for n in &self.next {
            b.lines.push(format!("next: {}  ({})", n.command, n.why));
        }
        b
    }
}

/// The article's finding, its first clause (up to the first ": ", "; " or ". "), at most
/// `QUOTE_MAX` characters.
fn article_quote(finding: &str) -> String {
    let cut = [": ", "; ", ". "]
        .iter()
        .filter_map(|s| finding.find(s))
        .min()
        .unwrap_or(finding.len());
    let s = finding[..cut].trim().trim_end_matches('.');
    if s.chars().count() > QUOTE_MAX {
        let short: String = s.chars().take(QUOTE_MAX - 3).collect();
        format!("{short}...")
    } else {
        s.to_string()
    }
}

fn knee_line(r: &Report, m: Option<&Manifest>) -> String {
    let u = r.unit();
    let here = match r.knee {
        // Below a knee that follows transient steps, the step right under it passed too: say
        // both, as the verdict does, so the two lines do not seem to disagree.
        Some(k) => match (r.last_passing, r.passing_below_knee) {
            (Some(t), Some(b)) if b > t => format!(
                "knee here: {k} {u} (every step passed up to {t} {u}; {b} {u} passed after a transient stall)"
            ),
            (lp, _) => format!(
                "knee here: {k} {u} (last passing {})",
                lp.map_or("none".to_string(), |t| format!("{t} {u}"))
            ),
        },
        None => format!(
            "no knee here: no step failed for good up to {} {u}",
            r.steps.last().map_or(0, |s| s.target)
        ),
    };
    match m {
        Some(m) => format!(
            "{here}; the article: {}",
            article_quote(&m.experiment.finding)
        ),
        None => format!("{here}; the article's finding: unknown (no run manifest)"),
    }
}

/// Why this run may differ from the article: the host's CPUs, steal and other processes
/// during the steps (the Host CPU block's numbers), whether the load was fitted.
fn differ_line(r: &Report, m: Option<&Manifest>) -> String {
    let mut v = Vec::new();
    if let Some(m) = m {
        let n = m.host.online_cpu_count;
        v.push(if n == ARTICLE_CPUS {
            format!("{n} CPUs as the article's")
        } else {
            format!("{n} CPUs against the article's {ARTICLE_CPUS}")
        });
    }
    v.extend(m.and_then(|m| cpu_per_request_note(r, m)));
    if let Some(h) = &r.checks.host_share {
        let steal = h
            .steal_cores
            .map_or(String::new(), |s| format!("steal {s:.2} cores, "));
        v.push(format!(
            "{steal}other processes {:.2} cores during the steps",
            h.other_cores
        ));
    }
    v.push(match (m, &r.fit) {
        (_, Some(_)) => "fitted to this host (--fit)".to_string(),
        (Some(_), None) => "the article's load as published (no --fit)".to_string(),
        (None, None) => "the host's CPUs and --fit unknown (no run manifest)".to_string(),
    });
    format!("why they may differ: {}", v.join("; "))
}

/// The app box's CPU per successful response over the passing steps against the article's
/// under load on the same endpoint (the lab's `APP_BOX_FIGURE`: php-fpm + nginx, the Node app): the
/// ceiling, and with it the knee, scale with its inverse (article 5.1.2 (3): 2 cores / 8.9 ms
/// = 225 rps). `None` when the article gives no such figure or no passing step has one.
fn cpu_per_request_note(r: &Report, m: &Manifest) -> Option<String> {
    let lab = crate::lab::descriptor(m.experiment.lab);
    let endpoint = m.experiment.load.endpoint.as_str();
    let f = lab
        .article_cpu_figures()
        .iter()
        .find(|f| f.endpoint == endpoint && f.what == crate::lab::APP_BOX_FIGURE)?;
    let ours: Vec<f64> = r
        .steps
        .iter()
        .filter(|s| s.verdict == crate::analyze::model::Verdict::Pass)
        .filter_map(|s| s.ms_cpu_per_ok)
        .collect();
    let lo = ours.iter().copied().reduce(f64::min)?;
    let hi = ours.iter().copied().reduce(f64::max)?;
    let range = |a: f64, b: f64| {
        if (b - a).abs() < 0.05 {
            format!("{a:.1}")
        } else {
            format!("{a:.1}-{b:.1}")
        }
    };
    let mid = (f.low_ms + f.high_ms) / 2.0;
    Some(format!(
        "CPU per request {} ms on {endpoint} (app box, passing steps) against the article's {} ms: the CPU ceiling, and the knee with it, scale with its inverse (here about x{:.1} the article's)",
        range(lo, hi),
        range(f.low_ms, f.high_ms),
        mid / ((lo + hi) / 2.0)
    ))
}

/// The host was not the lab's alone during the steps: the report's own host warnings, or a
/// step whose CPUs the host took.
pub fn noisy(r: &Report) -> bool {
    let shared = r
        .checks
        .host_share
        .as_ref()
        .is_some_and(|h| !crate::analyze::run::host_share_warnings(h).is_empty());
    shared || r.steps.iter().any(|s| s.host_limited.is_some())
}

/// `a,b,c,d,e`: the steps as published, then two above the top (x1.25, x1.5, rounded to 5).
fn raised_steps(steps: &[u32]) -> String {
    let top = steps.iter().copied().max().unwrap_or(0);
    let mut v: Vec<u32> = steps.to_vec();
    for f in [1.25, 1.5] {
        let x = ((f64::from(top) * f / 5.0).ceil() * 5.0) as u32;
        if v.last().is_none_or(|l| x > *l) {
            v.push(x);
        }
    }
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The next commands, from the run's state: fewer steps than planned (rerun), no knee (higher
/// steps or `--fit`), a shared host (noise-check, rounds), one round (rounds, then verify),
/// and how to check a change (compare).
fn next_commands(r: &Report, m: &Manifest) -> Vec<Next> {
    let exp = &m.experiment_id;
    let mut v = Vec::new();
    let n = |command: String, why: &str| Next {
        command,
        why: why.to_string(),
    };
    let planned = m.experiment.load.steps.len();
    if r.knee.is_none() && r.steps.len() < planned {
        v.push(n(
            format!("perflab run {exp}"),
            &format!(
                "the run stopped after {} of its {planned} steps: run it again",
                r.steps.len()
            ),
        ));
    } else if r.knee.is_none() {
        if m.experiment.fit.is_some() && r.fit.is_none() {
            v.push(n(
                format!("perflab run {exp} --fit"),
                "no knee: fit the steps to this host's measured ceilings",
            ));
        }
        v.push(n(
            format!(
                "perflab run {exp} --set load.steps={}",
                raised_steps(&m.experiment.load.steps)
            ),
            "no knee: raise the steps above the top one",
        ));
    }
    if noisy(r) {
        v.push(n(
            "perflab noise-check".into(),
            "the host was shared or stolen from: how noisy is it on its own?",
        ));
    }
    if m.round <= 1 || noisy(r) {
        v.push(n(
            format!("perflab run {exp} --rounds 3"),
            "one round says little: three rounds show the spread",
        ));
        v.push(n(
            format!("perflab verify {exp}"),
            "then check the article's claims on the newest runs",
        ));
    }
    v.push(n(
        format!("perflab compare {exp} --a suite=trixie --b suite=forky"),
        "to check a change: give each side's difference, a suite or any --set key",
    ));
    v.dedup();
    v.truncate(5);
    v
}

/// The block's content for report `r` of the run whose manifest is `m` (`None`: a CSV
/// analysed outside a run directory: no article, no host, only what the report knows).
pub fn meaning(r: &Report, m: Option<&Manifest>) -> Meaning {
    let mut next = m.map(|m| next_commands(r, m)).unwrap_or_default();
    if m.is_none() && noisy(r) {
        next.push(Next {
            command: "perflab noise-check".into(),
            why: "the host was shared or stolen from: how noisy is it on its own?".into(),
        });
    }
    Meaning {
        knee: knee_line(r, m),
        differ: differ_line(r, m),
        next,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_article_is_quoted_to_its_first_clause() {
        assert_eq!(
            article_quote("Breaks between 150 and 175 (ceiling 165-180): app 1.00 core."),
            "Breaks between 150 and 175 (ceiling 165-180)"
        );
        assert_eq!(article_quote("Breaks at 200. More."), "Breaks at 200");
        assert_eq!(article_quote(&"x".repeat(300)).chars().count(), QUOTE_MAX);
    }

    #[test]
    fn raised_steps_go_above_the_top() {
        assert_eq!(raised_steps(&[50, 100, 250]), "50,100,250,315,375");
        assert_eq!(raised_steps(&[1]), "1,5");
    }
}
