//! The README's catalog table is the output of `perflab list --markdown`.
use assert_cmd::Command;

#[test]
fn readme_catalog_table_is_in_sync() {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .args(["list", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let readme = std::fs::read_to_string("README.md").unwrap();
    let begin = "<!-- catalog:begin -->\n";
    let start = readme
        .find(begin)
        .expect("README has the catalog:begin marker")
        + begin.len();
    let end = readme
        .find("<!-- catalog:end -->")
        .expect("README has the catalog:end marker");
    assert_eq!(
        &readme[start..end],
        table,
        "README catalog table is stale: regenerate it with `perflab list --markdown` between the markers"
    );
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, spaces,
/// `-` and `_` kept), spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The table of contents of the manual: every `##` and `###` heading after the markers, as
/// nested links.
fn toc(readme: &str, after: usize) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in readme[after..].lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        }
        let (indent, title) = match (fenced, line.strip_prefix("### "), line.strip_prefix("## ")) {
            (false, Some(t), _) => ("  ", t),
            (false, None, Some(t)) => ("", t),
            _ => continue,
        };
        out.push_str(&format!("{indent}- [{title}](#{})\n", anchor(title)));
    }
    out
}

/// The README opens with a quick start, then the manual's table of contents, in sync with its
/// headings. `PERFLAB_README_TOC=write cargo test --test cli_readme` (scripts/readme-toc.sh)
/// rewrites it.
#[test]
fn readme_opens_with_a_quick_start_and_an_up_to_date_toc() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let (start, stop) = section(&readme, "toc");
    let quick = &readme[..start];
    for line in ["    scripts/perflab run exp1\n", "    scripts/test.sh\n"] {
        assert!(
            quick.contains(line),
            "the quick start shows `{}`",
            line.trim()
        );
    }
    let example = "(docs/example/report.html)";
    assert!(quick.contains(example), "the quick start links {example}");
    assert!(std::path::Path::new("docs/example/report.html").is_file());
    let want = toc(&readme, stop);
    in_step_or_written(&readme, (start, stop), &want, "PERFLAB_README_TOC");
}

#[test]
fn anchors_follow_github() {
    assert_eq!(
        anchor("Two machines (`--host loadgen=...`, `--publish-on`)"),
        "two-machines---host-loadgen---publish-on"
    );
    assert_eq!(
        anchor("Running an experiment (`perflab run`)"),
        "running-an-experiment-perflab-run"
    );
}

/// The README's table of `--set` bounds is `experiment::bounds::markdown()`, the table the
/// checks use. `PERFLAB_README_BOUNDS=write cargo test --test cli_readme` rewrites it.
#[test]
fn readme_set_bounds_table_is_in_sync() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let (start, stop) = section(&readme, "set-bounds");
    let want = perflab::experiment::bounds::markdown();
    in_step_or_written(&readme, (start, stop), &want, "PERFLAB_README_BOUNDS");
}

/// Where the text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` starts and stops.
fn section(readme: &str, name: &str) -> (usize, usize) {
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let start = readme
        .find(&begin)
        .unwrap_or_else(|| panic!("README has {begin}"))
        + begin.len();
    let stop = readme
        .find(&end)
        .unwrap_or_else(|| panic!("README has {end}"));
    (start, stop)
}

/// The README's text at `at` is `want`; with `ENV=write` the README is rewritten instead.
fn in_step_or_written(readme: &str, (start, stop): (usize, usize), want: &str, env: &str) {
    if std::env::var(env).as_deref() == Ok("write") {
        let new = format!("{}{want}{}", &readme[..start], &readme[stop..]);
        std::fs::write("README.md", new).unwrap();
        return;
    }
    assert_eq!(
        &readme[start..stop],
        want,
        "the README is stale there: {env}=write cargo test --test cli_readme"
    );
}
