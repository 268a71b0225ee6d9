//! The documentation: a README under 8 KB that starts a newcomer, docs/ whose relative links and
//! `#anchors` all resolve, and the generated parts kept current: the CLI reference (from clap's
//! command tree), the catalog table (`perflab list --markdown`), the `--set` bounds table
//! (`experiment::bounds::markdown()`) and the docs' contents. `PERFLAB_BLESS=1 cargo test --test
//! docs` (scripts/refresh-docs.sh) rewrites the generated parts instead of failing.
use assert_cmd::Command;
use clap::CommandFactory;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const README_MAX_BYTES: usize = 8 * 1024;
const SCREENSHOT_MAX_BYTES: u64 = 300 * 1024;
const REFRESH: &str = "PERFLAB_BLESS=1 cargo test --test offline docs:: (scripts/refresh-docs.sh)";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The README names the article, gives the two set-up commands each on its own indented line
/// (CI and newcomers copy them), shows the report and sends the reader into docs/.
#[test]
fn readme_is_short_and_starts_a_newcomer() {
    let readme = read("README.md");
    assert!(
        readme.len() <= README_MAX_BYTES,
        "README.md is {} bytes, over {README_MAX_BYTES}: move the detail into docs/",
        readme.len()
    );
    for line in ["    scripts/perflab run exp1\n", "    scripts/test.sh\n"] {
        assert!(
            readme.contains(line),
            "README.md shows `{}` on its own indented line",
            line.trim()
        );
    }
    for needle in [
        "Đo điểm gãy (breaking point)",
        "(docs/example/report.html)",
        "(docs/img/report.png)",
        "(docs/README.md)",
        "(docs/tutorial.md)",
        "(docs/workshop.md)",
        "(docs/regression.md)",
        "(docs/reference/cli.md)",
    ] {
        assert!(readme.contains(needle), "README.md has {needle}");
    }
    for file in markdown_files() {
        let text = read(&file);
        assert!(
            !text.contains("../shared/") && !text.contains("lab-spec.md"),
            "{file} points outside the repository: link docs/spec.md, its summary, instead"
        );
    }
    let png = std::fs::read(root().join("docs/img/report.png")).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n"),
        "docs/img/report.png is a PNG"
    );
    assert!(
        (png.len() as u64) < SCREENSHOT_MAX_BYTES,
        "docs/img/report.png is {} bytes, over {SCREENSHOT_MAX_BYTES} (scripts/make-report-screenshot.sh)",
        png.len()
    );
}

/// Every Markdown file of the README and docs/.
fn markdown_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    let mut files = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut files);
    let mut rel: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(root())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    rel.sort();
    rel
}

/// The lines of `md` outside code blocks, with inline code spans blanked: (line number, text).
fn prose_lines(md: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in md.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") && !line.trim_start().starts_with(['-', '*']) {
            continue;
        }
        out.push((i + 1, without_code_spans(line)));
    }
    out
}

/// `line` with every `code span` replaced by spaces (a link shown as code is not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else {
            out.push(if in_code { ' ' } else { c });
        }
    }
    out
}

/// The targets of the inline links and images of a line: what follows `](` up to `)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        out.push(target.to_string());
        rest = &rest[end..];
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation dropped (letters, digits, spaces, `-`
/// and `_` kept), spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The ATX headings of `md` outside code blocks: (level, text).
fn headings(md: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        if fenced || level == 0 || level > 6 || !line[level..].starts_with(' ') {
            continue;
        }
        out.push((level, line[level..].trim().to_string()));
    }
    out
}

/// The headings of `md` with their anchors, as GitHub numbers repeated ones (`x`, `x-1`, `x-2`):
/// (level, text, anchor).
fn anchored_headings(md: &str) -> Vec<(usize, String, String)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    headings(md)
        .into_iter()
        .map(|(level, text)| {
            let a = anchor(&text);
            let n = seen.entry(a.clone()).or_insert(0);
            let a = if *n == 0 { a } else { format!("{a}-{n}") };
            *n += 1;
            (level, text, a)
        })
        .collect()
}

/// Every anchor a page offers.
fn anchors(md: &str) -> Vec<String> {
    anchored_headings(md)
        .into_iter()
        .map(|(_, _, a)| a)
        .collect()
}

/// Why the link `target` of the file `from` (relative to the repository) does not resolve, if
/// it does not.
fn broken(from: &str, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, frag) = target.split_once('#').unwrap_or((target, ""));
    let dir = Path::new(from).parent().unwrap();
    let rel = if path.is_empty() {
        PathBuf::from(from)
    } else {
        dir.join(path)
    };
    if path.starts_with('/') {
        return Some("an absolute path: link relative to the file".into());
    }
    let full = root().join(&rel);
    let Ok(canon) = full.canonicalize() else {
        return Some(format!("{} does not exist", rel.display()));
    };
    if !canon.starts_with(root().canonicalize().unwrap()) {
        return Some(format!("{} lies outside the repository", rel.display()));
    }
    if frag.is_empty() || canon.extension().is_none_or(|x| x != "md") {
        return None;
    }
    let page = std::fs::read_to_string(&canon).unwrap();
    (!anchors(&page).iter().any(|a| a == frag))
        .then(|| format!("{} has no heading with the anchor #{frag}", rel.display()))
}

/// A relative link to a missing file or `#anchor` in the README or docs/ fails, naming the file,
/// the line and the link.
#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut bad = Vec::new();
    let mut links = 0;
    for file in markdown_files() {
        for (n, line) in prose_lines(&read(&file)) {
            for target in link_targets(&line) {
                links += 1;
                if let Some(why) = broken(&file, &target) {
                    bad.push(format!("{file}:{n}: ({target}): {why}"));
                }
            }
        }
    }
    assert!(
        links > 100,
        "only {links} links found: is the scanner broken?"
    );
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// Every claim the catalog marks `refuted:` sends its reader to a docs section that exists.
#[test]
fn every_refuted_claims_evidence_resolves() {
    let c = perflab::experiment::Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap();
    let (mut marked, mut bad) = (0, Vec::new());
    for f in c.files.values() {
        let perflab::experiment::CatalogEntry::Experiment(e) = &f.entry else {
            continue;
        };
        for claim in &e.expect {
            let Some(r) = &claim.refuted else { continue };
            marked += 1;
            if let Some(why) = broken("README.md", &r.evidence) {
                bad.push(format!("{} {}: {why}", e.id, claim.name));
            }
        }
    }
    assert!(marked > 0, "no refuted claim found: is the scan broken?");
    assert!(
        bad.is_empty(),
        "refuted without evidence:\n{}",
        bad.join("\n")
    );
    assert!(broken("README.md", "docs/remedies.md#no-such-section").is_some());
}

/// The checker itself: it sees links, skips code, and tells a missing file or anchor.
#[test]
fn the_link_checker_tells_good_from_broken() {
    assert_eq!(
        link_targets("[a](x.md) and ![b](img/y.png) and [![c](p.png)](q.html \"t\")"),
        ["x.md", "img/y.png", "p.png", "q.html"]
    );
    assert!(link_targets(&without_code_spans("`[x](nope.md)` is code")).is_empty());
    assert!(broken("README.md", "docs/tutorial.md#glossary").is_none());
    assert!(broken("docs/tutorial.md", "../README.md#quick-start").is_none());
    assert!(broken("README.md", "https://example.org/x.md").is_none());
    assert!(
        broken("README.md", "docs/nope.md")
            .unwrap()
            .contains("does not exist")
    );
    assert!(
        broken("README.md", "docs/tutorial.md#nope")
            .unwrap()
            .contains("#nope")
    );
    assert!(broken("README.md", "../outside.md").is_some());
    assert_eq!(
        anchors("# A\n## Options\n```\n## not a heading\n```\n## Options\n"),
        ["a", "options", "options-1"]
    );
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
    assert_eq!(anchor("`perflab run`"), "perflab-run");
}

/// The contents of docs/README.md: every page's title and `##` headings, as nested links.
fn docs_toc() -> String {
    let mut pages: Vec<String> = markdown_files()
        .into_iter()
        .filter_map(|f| f.strip_prefix("docs/").map(str::to_string))
        .filter(|f| f != "README.md")
        .collect();
    // The guides first, then the reference.
    pages.sort_by_key(|p| (p.contains('/'), p.clone()));
    let mut out = String::new();
    for page in pages {
        let hs = anchored_headings(&read(&format!("docs/{page}")));
        let title = hs.iter().find(|h| h.0 == 1).map_or(page.as_str(), |h| &h.1);
        out.push_str(&format!("- [{title}]({page})\n"));
        for (_, text, a) in hs.iter().filter(|h| h.0 == 2) {
            out.push_str(&format!("  - [{text}]({page}#{a})\n"));
        }
    }
    out
}

/// docs/reference/cli.md: clap-markdown over perflab's command tree (hidden commands left out),
/// with the help texts' indented blocks as code and their `<` shown, not taken for HTML.
fn cli_markdown() -> String {
    let opts = clap_markdown::MarkdownOptions::new()
        .title("Command-line reference".into())
        .show_footer(false);
    let md = clap_markdown::help_markdown_command_custom(&perflab::cli::Cli::command(), &opts);
    let note = "Generated from perflab's own command tree by `tests/offline/docs.rs`: do not edit; after a \
                change to a command, a flag or a help text run `scripts/refresh-docs.sh`. \
                Two commands are left out of `perflab --help`: `perflab completions \
                <bash|zsh|fish|elvish|powershell>` prints a shell completion script and \
                `perflab man [--dir DIR]` prints the man page perflab(1) or writes every page \
                into DIR.";
    let mut out = String::new();
    let mut block = false;
    let mut prev = String::new();
    for line in md.lines() {
        let indented = line.starts_with("  ") && !line.trim().is_empty();
        if !block && indented && prev.ends_with(':') && !prev.starts_with([' ', '*', '#']) {
            out.push_str("\n```text\n");
            block = true;
        } else if block && !indented {
            out.push_str("```\n");
            block = false;
        }
        if block {
            out.push_str(line);
        } else if line.starts_with("This document contains the help content") {
            out.push_str(&escape_html(note));
        } else {
            out.push_str(&escape_html(line));
        }
        out.push('\n');
        prev = line.to_string();
    }
    if block {
        out.push_str("```\n");
    }
    out.trim_end().to_string() + "\n"
}

/// `<` outside code spans as `&lt;`, so `<FILE>` in a help text is shown by a Markdown renderer.
fn escape_html(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        in_code ^= c == '`';
        match c {
            '<' if !in_code => out.push_str("&lt;"),
            c => out.push(c),
        }
    }
    out
}

fn catalog_table() -> String {
    let out = Command::cargo_bin("perflab")
        .unwrap()
        .env_remove("PERFLAB_CATALOG")
        .args(["list", "--markdown"])
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` of `doc` is `want`; `Err`
/// names what is stale. With PERFLAB_BLESS=1 the file is rewritten instead.
fn section_is(file: &str, name: &str, want: &str) -> Result<(), String> {
    let doc = read(file);
    let (begin, end) = (
        format!("<!-- {name}:begin -->\n"),
        format!("<!-- {name}:end -->"),
    );
    let start = doc
        .find(&begin)
        .unwrap_or_else(|| panic!("{file} has {begin}"))
        + begin.len();
    let stop = doc.find(&end).unwrap_or_else(|| panic!("{file} has {end}"));
    whole_is(file, &doc, (start, stop), want, name)
}

/// `doc[at]` (the text of `file`) is `want`, or is made so under PERFLAB_BLESS=1.
fn whole_is(
    file: &str,
    doc: &str,
    (start, stop): (usize, usize),
    want: &str,
    what: &str,
) -> Result<(), String> {
    if &doc[start..stop] == want {
        return Ok(());
    }
    if std::env::var("PERFLAB_BLESS").as_deref() == Ok("1") {
        let new = format!("{}{want}{}", &doc[..start], &doc[stop..]);
        std::fs::write(root().join(file), new).unwrap();
        return Ok(());
    }
    Err(format!("{file}: the {what} is stale"))
}

/// The generated parts, in the order one feeds the next (the contents read the CLI reference's
/// headings), each compared with what the code generates now.
#[test]
fn generated_docs_are_current() {
    let cli = "docs/reference/cli.md";
    let current = std::fs::read_to_string(root().join(cli)).unwrap_or_default();
    let want = cli_markdown();
    let stale = [
        whole_is(cli, &current, (0, current.len()), &want, "CLI reference"),
        section_is("docs/catalog.md", "catalog", &catalog_table()),
        section_is(
            "docs/reference/experiment-yaml.md",
            "set-bounds",
            &perflab::experiment::bounds::markdown(),
        ),
        section_is("docs/README.md", "toc", &docs_toc()),
    ];
    let stale: Vec<String> = stale.into_iter().filter_map(Result::err).collect();
    assert!(
        stale.is_empty(),
        "{}; refresh with {REFRESH}",
        stale.join("; ")
    );
}

/// The reference has a section per visible command and none for the hidden ones.
#[test]
fn the_cli_reference_covers_every_visible_command() {
    let md = cli_markdown();
    let cmd = perflab::cli::Cli::command();
    for sub in cmd.get_subcommands() {
        let heading = format!("## `perflab {}`\n", sub.get_name());
        assert_eq!(md.contains(&heading), !sub.is_hide_set(), "{heading}");
    }
    assert!(
        md.contains("Exit codes:\n\n```text\n  0  no regression"),
        "indented help blocks become code"
    );
}

/// `perflab man` and `perflab completions` print what clap_mangen and clap_complete make of
/// the same command tree; hidden commands stay out of both.
#[test]
fn man_pages_and_completions_come_from_the_command_tree() {
    let run = |args: &[&str]| {
        let out = Command::cargo_bin("perflab")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    let (code, page) = run(&["man"]);
    assert_eq!(code, Some(0));
    assert!(
        page.contains(".TH perflab 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains("perflab\\-run(1)") && !page.contains("sample\\-agent"));
    let dir = tempfile::tempdir().unwrap();
    let (code, _) = run(&["man", "--dir", dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(0));
    for name in ["perflab.1", "perflab-run.1", "perflab-compare.1"] {
        let p = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(p.starts_with(".ie") && p.contains(".SH SYNOPSIS"), "{name}");
    }
    assert!(!dir.path().join("perflab-lock-hold.1").exists());
    let (code, bash) = run(&["completions", "bash"]);
    assert_eq!(code, Some(0));
    assert!(bash.contains("noise-check") && bash.contains("--refine"));
    assert!(!bash.contains("sample-agent") && !bash.contains("lock-hold"));
    for (shell, head) in [("zsh", "#compdef perflab"), ("fish", "complete -c perflab")] {
        let (code, script) = run(&["completions", shell]);
        assert_eq!(code, Some(0));
        assert!(script.contains(head), "{shell}");
    }
    assert_eq!(run(&["completions", "tcsh"]).0, Some(2));
}
