//! The CLI as a whole, walked through clap's Command tree: every subcommand's help ends with an
//! example that parses as that subcommand, `--suite` lists the suites (help and completions),
//! one concept has one flag name (old spellings hidden aliases), `--html` takes a FILE wherever
//! it is shown, and `perflab list` fits the terminal.
use clap::{CommandFactory, Parser};
use perflab::cli::Cli;

/// Every visible subcommand, with its path of names (`["compare"]`).
fn subcommands() -> Vec<(String, clap::Command)> {
    fn walk(prefix: &str, c: &clap::Command, out: &mut Vec<(String, clap::Command)>) {
        for s in c.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("{prefix}{}", s.get_name());
            out.push((name.clone(), s.clone()));
            walk(&format!("{name} "), s, out);
        }
    }
    let mut out = Vec::new();
    walk("", &Cli::command(), &mut out);
    out
}

#[test]
fn every_subcommand_help_ends_with_an_example_that_parses() {
    let all = subcommands();
    assert!(all.len() >= 20, "{} subcommands", all.len());
    for (name, c) in all {
        let after = c
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let example = after
            .rsplit_once("Example:\n")
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("`perflab {name} --help` ends without an example"));
        let lines: Vec<&str> = example.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!lines.is_empty(), "{name}: empty example");
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(words.first(), Some(&"perflab"), "{name}: {line}");
            assert!(
                line.trim().starts_with(&format!("perflab {name} ")),
                "{name}'s example runs another command: {line}"
            );
            if let Err(e) = Cli::try_parse_from(&words) {
                panic!("{name}'s example `{line}` does not parse: {e}");
            }
        }
    }
}

#[test]
fn suite_lists_the_suites_wherever_it_is_a_flag() {
    let suites: Vec<&str> = perflab::images::Suite::ALL
        .iter()
        .map(|s| s.as_str())
        .collect();
    let mut seen = 0;
    for (name, c) in subcommands() {
        for a in c.get_arguments().filter(|a| a.get_id() == "suite") {
            let values: Vec<String> = a
                .get_possible_values()
                .iter()
                .map(|v| v.get_name().to_string())
                .collect();
            let mut want: Vec<&str> = suites.clone();
            if name == "build" {
                want.push("all");
            }
            assert_eq!(values, want, "perflab {name} --suite");
            assert!(
                a.get_possible_values()
                    .iter()
                    .all(|v| v.get_help().is_some()),
                "{name}: every suite says what it ships"
            );
            seen += 1;
        }
    }
    // run, build, up, smoke, verify, capacity, cpu-per-request
    assert!(seen >= 7, "--suite on {seen} subcommands");
}

#[test]
fn one_concept_has_one_flag_name() {
    // how many times a measurement is repeated: --repeats everywhere
    let mut longs: Vec<(String, String)> = Vec::new();
    for (name, c) in subcommands() {
        for a in c.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(l) = a.get_long() {
                longs.push((name.clone(), l.to_string()));
            }
        }
    }
    for old in ["repeat", "n"] {
        let shown: Vec<_> = longs.iter().filter(|(_, l)| l == old).collect();
        assert!(shown.is_empty(), "--{old} is still shown: {shown:?}");
    }
    let repeats: Vec<&str> = longs
        .iter()
        .filter(|(_, l)| l == "repeats")
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(repeats, ["calib", "cpu-per-request", "host-speed"]);
    // the old spellings still parse, to the same value
    let parse = |args: &[&str]| format!("{:?}", Cli::try_parse_from(args).unwrap().command);
    assert_eq!(
        parse(&["perflab", "host-speed", "--repeat", "2"]),
        parse(&["perflab", "host-speed", "--repeats", "2"])
    );
    assert_eq!(
        parse(&["perflab", "cpu-per-request", "php", "--n", "30"]),
        parse(&["perflab", "cpu-per-request", "php", "--repeats", "30"])
    );
}

#[test]
fn html_takes_a_file_wherever_it_is_shown() {
    let mut seen = Vec::new();
    for (name, c) in subcommands() {
        for a in c.get_arguments().filter(|a| a.get_id() == "html") {
            if a.is_hide_set() {
                continue;
            }
            let names: Vec<String> = a
                .get_value_names()
                .unwrap_or_default()
                .iter()
                .map(|v| v.to_string())
                .collect();
            assert_eq!(names, ["FILE"], "perflab {name} --html");
            seen.push(name.clone());
        }
    }
    assert_eq!(seen, ["compare"]);
}

fn list_with(columns: Option<&str>) -> String {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"));
    c.arg("list").env_remove("PERFLAB_CATALOG");
    match columns {
        Some(w) => c.env("COLUMNS", w),
        None => c.env_remove("COLUMNS"),
    };
    let out = c.output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn list_fits_the_terminal() {
    for (columns, width) in [(Some("80"), 80), (Some("120"), 120), (None, 100)] {
        let text = list_with(columns);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width, "COLUMNS={columns:?}: a line of {widest}");
        // every experiment is still there, its finding wrapped, not cut
        assert!(text.contains("exp1 "), "{text}");
        assert!(text.contains("ClientRead"), "{text}");
    }
}
