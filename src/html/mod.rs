//! The pages people look at: `report.html` of a run (self-contained: inline CSS and SVG, no
//! script, with the run's claims from `verify`), `out/index.html` over every run, the compare
//! page of two runs or two sets of rounds, and the matrix page of two sides over experiments. Above
//! `verify` in the pipeline, so the report floor stays below the claims.
pub(crate) mod compare_page;
mod compare_plot;
pub mod history_page;
pub mod index;
pub(crate) mod index_compare;
pub(crate) mod index_page;
pub(crate) mod map_page;
pub(crate) mod matrix_page;
pub mod report;
pub(crate) mod report_meta;
pub mod report_page;
mod table;

use std::path::Path;

use crate::analyze::Report;
use crate::atomic::write_atomic;

/// A page the user names (`compare --html FILE`) may be written at `path`: the output-path
/// rule of every flag that writes a file ([`crate::rundir::output_path`]), for `--html`.
pub(crate) fn check_page_path(path: &Path) -> anyhow::Result<()> {
    crate::rundir::output_path::check_file("--html", path).map(|_| ())
}

/// `perflab report RUN_DIR`: every report of the run re-rendered from its files (said on
/// stderr), and report.txt's text to print.
pub(crate) fn rerender_all(dir: &Path) -> anyhow::Result<String> {
    let r = render_run_dir(dir)?;
    crate::say!(
        "wrote {}, {}, {}, {}, {}, {} in {}",
        crate::rundir::layout::REPORT_TXT,
        crate::rundir::layout::REPORT_MD,
        crate::rundir::layout::REPORT_FILE,
        REPORT_HTML,
        crate::report::STEPS_SVG,
        crate::report::TIMELINE_SVG,
        dir.display()
    );
    let m = run_manifest(dir);
    Ok(crate::report::text::render(&r, m.as_ref()))
}

/// `report::render_run_dir` and the run's report.html beside the other reports: every file is
/// rendered before the first is written, so a failure leaves the old set whole.
pub(crate) fn render_run_dir(dir: &Path) -> anyhow::Result<Report> {
    let r = crate::report::analyse_run_dir(dir)?;
    let m = run_manifest(dir);
    let mut files = crate::report::rendered(&r, m.as_ref())?;
    let timeline = crate::report::plots::timeline_svg(&r);
    let page = html_page(
        &r,
        m.as_ref(),
        crate::report::plots::steps_svg(&r),
        timeline,
    );
    files.push((REPORT_HTML, page.into_bytes()));
    crate::report::write_files(dir, &files)?;
    Ok(r)
}

pub(crate) use crate::rundir::layout::REPORT_HTML;

pub use report_page::href;

/// A run directory's folders as the pages link them: `(experiment, run)` when the parent is an
/// experiment id and the folder a run name (`rundir::valid_run_name`); other folders (copied
/// in by hand, named by anyone who can write to out/) are listed as text, not linked.
pub(crate) fn linkable_run(experiment: &str, run: &str) -> bool {
    crate::experiment::validate::valid_id(experiment) && crate::rundir::valid_run_name(run)
}

/// Write `dir/report.html` from the report, the run's manifest (when `dir` is a run directory
/// with one: experiment, claims, versions, config) and the two plots.
pub fn write_html(
    r: &Report,
    dir: &Path,
    steps: Result<String, String>,
    timeline: Result<String, String>,
) -> anyhow::Result<()> {
    let m = run_manifest(dir);
    Ok(write_atomic(
        &dir.join(REPORT_HTML),
        html_page(r, m.as_ref(), steps, timeline).as_bytes(),
    )?)
}

/// The manifest of the run directory `dir`, when it is one and the manifest reads.
pub(crate) fn run_manifest(dir: &Path) -> Option<crate::rundir::Manifest> {
    // `out/<exp>/latest` is a link: open the directory it names.
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    // The run's own manifest, whatever the folders around it are called (a run directory
    // travels); an unreadable one is a warning of the report (`rundir::inputs::manifest_warnings`).
    crate::rundir::read_manifest(&real).ok()
}

/// The text of `dir/report.html` (see [`write_html`]).
fn html_page(
    r: &Report,
    manifest: Option<&crate::rundir::Manifest>,
    steps: Result<String, String>,
    timeline: Result<String, String>,
) -> String {
    let claims = manifest
        .map(|m| {
            let cat = crate::experiment::catalog::Catalog::load(
                &crate::experiment::catalog::default_dir(),
                &crate::verify::quantities::Quantities,
            )
            .ok();
            report::claims_of(
                r,
                m,
                &format!("{}/{}", m.experiment_id, m.run_id),
                cat.as_ref(),
            )
        })
        .unwrap_or_default();
    let extras = report::Extras {
        manifest,
        claims,
        plots: vec![
            (crate::report::STEPS_SVG, steps),
            (crate::report::TIMELINE_SVG, timeline),
        ],
    };
    report::render(r, &extras)
}

/// `perflab report RUN --html-only`: report.html from the run's report.json (and manifest.json),
/// the plots redrawn from it. Returns the page's path.
pub fn rerender_html(dir: &Path) -> anyhow::Result<std::path::PathBuf> {
    use crate::rundir::read::{self, FileKind, RunFile};
    let p = dir.join(crate::rundir::REPORT_FILE);
    let doc = read::doc(&RunFile::at(
        dir,
        crate::rundir::REPORT_FILE,
        FileKind::Report,
    ));
    let text = match doc {
        Ok(d) => d.text,
        Err(e) if e.is_missing() => {
            return Err(crate::error::invalid(format!(
                "{}: no such file (no report yet: run `perflab report {}` to analyze the run)",
                p.display(),
                dir.display()
            )));
        }
        Err(e) => return Err(e.into_anyhow()),
    };
    let r = crate::rundir::report::parse(&text).map_err(|e| {
        crate::error::invalid(format!(
            "{}: {e:#} (re-analyze with `perflab report {}`)",
            p.display(),
            dir.display()
        ))
    })?;
    let timeline = if r.timeline.is_empty() {
        Err(format!(
            "{} has no per-second timeline",
            crate::rundir::REPORT_FILE
        ))
    } else {
        crate::report::plots::timeline_svg(&r)
    };
    write_html(&r, dir, crate::report::plots::steps_svg(&r), timeline)?;
    Ok(dir.join(REPORT_HTML))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hrefs_are_relative_encoded_segments() {
        assert_eq!(
            href(["exp1", "20261130T035648Z-r1", REPORT_HTML]),
            "./exp1/20261130T035648Z-r1/report.html"
        );
        assert_eq!(
            href(["..", "..", "2a", "x~y_z.html"]),
            "./../../2a/x~y_z.html"
        );
        let evil = "javascript:document.body.setAttribute('data-pwned','yes')%2F%2F";
        let h = href([evil, "report.html"]);
        assert_eq!(
            h,
            "./javascript%3Adocument.body.setAttribute%28%27data-pwned%27%2C%27yes%27%29%252F%252F/report.html"
        );
        // nothing a browser or an HTML parser reads as syntax survives a segment
        for odd in [
            "a\"b", "<i>", "50%", "#top", "?q=1", "a b", "x/y", "日本", "a\\b", "&amp;",
        ] {
            let h = href([odd]);
            assert!(h.starts_with("./"), "{h}");
            assert!(
                h[2..]
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)),
                "{odd} -> {h}"
            );
        }
        assert_eq!(href(["日本"]), "./%E6%97%A5%E6%9C%AC");
    }

    #[test]
    fn only_run_folders_are_linked() {
        assert!(linkable_run("exp2-mc80", "20261130T035648Z-r1"));
        assert!(linkable_run("1a", "20261130T035648Z-r12-3"));
        for (e, r) in [
            ("javascript:x", "20261130T035648Z-r1"),
            ("Exp1", "20261130T035648Z-r1"),
            ("exp1", "20261130T035648Z-r1-\"><script>"),
            ("exp1", "20261130T035648Z-r"),
            ("exp1", "2026113XT035648Z-r1"),
            ("exp1", "20261130T035648Z-r1-2-3"),
            ("exp1", "latest"),
            ("exp1", "20261130T03564é-r1"),
        ] {
            assert!(!linkable_run(e, r), "{e}/{r}");
        }
    }

    #[test]
    fn a_page_never_lands_in_a_run_directory_or_through_a_link() {
        let d = tempfile::tempdir().unwrap();
        let run = d.path().join("exp1/20261130T035648Z-r1");
        let l = crate::rundir::Layout::new(&run);
        std::fs::create_dir_all(l.k6().path).unwrap();
        std::fs::write(l.manifest(), "{}").unwrap();
        for p in [
            l.manifest(),
            run.join("new.html"),
            l.k6().path.join("x.html"),
            l.k6().path.join("missing/x.html"),
        ] {
            let e = check_page_path(&p).unwrap_err();
            assert_eq!(crate::error::exit_code_for(&e), crate::error::EXIT_INVALID);
            assert!(format!("{e}").contains("holds manifest.json"), "{e}");
        }
        assert!(check_page_path(&d.path().join("compare.html")).is_ok());
        assert!(check_page_path(&d.path().join("new/dir/compare.html")).is_ok());
        let link = d.path().join("link.html");
        std::os::unix::fs::symlink(d.path().join("elsewhere.html"), &link).unwrap();
        assert!(format!("{}", check_page_path(&link).unwrap_err()).contains("symbolic link"));
    }
}
