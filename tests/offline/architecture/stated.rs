//! What docs/architecture.md states beside the floors, held to the code (tests left out): only
//! `docker` imports bollard; no lab is named outside `lab/` (a string equal to a lab's name,
//! the names read from the registry's rows in src/lab/mod.rs). The floors themselves are
//! `modules_follow_the_pipeline_table`.

use super::model::SrcFile;
use super::scan::ident_char;
use super::{fail_on, load};

/// Files outside src/docker/ whose code names the `bollard` crate, with the line.
pub fn bollard_outside_docker(files: &[SrcFile]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files.iter().filter(|f| !f.test_only) {
        if f.top.as_deref() == Some("docker") {
            continue;
        }
        let c: Vec<char> = f.prod.chars().collect();
        for i in (0..c.len()).filter(|&i| c[i] == 'b') {
            if super::scan::word_at(&c, i, "bollard") {
                out.push(format!(
                    "{}:{}: uses bollard; docs/architecture.md: `docker` is the only module that \
                     imports it. Fix: do the Docker work in src/docker/ and call it from here",
                    f.rel,
                    super::scan::line_of(&c, i)
                ));
            }
        }
    }
    out
}

/// The labs' names: the module of each row of the `labs!` table in src/lab/mod.rs (`Php: php,
/// PhpSettings, Php;`), `#[cfg(test)]` rows included.
pub fn lab_names(lab_mod: &str) -> Vec<String> {
    lab_mod
        .lines()
        .skip_while(|l| *l != "labs! {")
        .take_while(|l| *l != "}")
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with('#') && l.ends_with(';'))
        .filter_map(|l| l.split_once(':'))
        .filter_map(|(_, r)| r.split(',').next())
        .map(|m| m.trim().to_string())
        .collect()
}

/// Strings outside src/lab/ equal to a lab's name that are not the lab: (file, string, what it
/// is). An entry no longer found does not fail (another change may rename the thing).
const NOT_A_LAB: &[(&str, &str, &str)] = &[
    (
        "src/cli/catalog.rs",
        "demo",
        "the catalog's group `demo`, the order `list` shows",
    ),
    (
        "src/sample/mod.rs",
        "node",
        "samples/node.jsonl, the file of the app's metrics lines",
    ),
];

/// String literals equal to a lab's name in the code outside src/lab/, with file and line:
/// code that tells the labs apart by name instead of asking the lab's descriptor.
pub fn lab_names_outside_lab(files: &[SrcFile], names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files
        .iter()
        .filter(|f| !f.test_only && f.top.as_deref() != Some("lab"))
    {
        let names = names.iter().filter(|n| {
            !NOT_A_LAB
                .iter()
                .any(|(file, s, _)| *file == f.rel && s == n)
        });
        let (masked, text): (Vec<char>, Vec<char>) =
            (f.prod.chars().collect(), f.text.chars().collect());
        assert_eq!(
            masked.len(),
            text.len(),
            "{}: masking keeps every char",
            f.rel
        );
        for name in names {
            let quoted: Vec<char> = format!("\"{name}\"").chars().collect();
            let blank: Vec<char> = format!("\"{}\"", " ".repeat(name.chars().count()))
                .chars()
                .collect();
            for i in (0..masked.len().saturating_sub(quoted.len() - 1))
                .filter(|&i| {
                    masked[i..i + blank.len()] == blank[..]
                        && text[i..i + quoted.len()] == quoted[..]
                })
                .filter(|&i| i == 0 || !ident_char(text[i - 1]))
            {
                out.push(format!(
                    "{}:{}: the lab name \"{name}\" outside src/lab/. Fix: ask the lab's \
                     descriptor (`lab::descriptor(lab)`) or derive the list from `Lab::ALL`",
                    f.rel,
                    super::scan::line_of(&masked, i)
                ));
            }
        }
    }
    out
}

#[test]
fn only_docker_imports_bollard() {
    let (krate, _) = load();
    fail_on(
        "bollard outside src/docker/",
        bollard_outside_docker(&krate.files),
    );
}

#[test]
fn no_lab_name_outside_lab() {
    let (krate, _) = load();
    let lab_mod = krate
        .files
        .iter()
        .find(|f| f.rel == "src/lab/mod.rs")
        .expect("src/lab/mod.rs");
    let names = lab_names(&lab_mod.text);
    assert!(names.len() >= 3, "the registry's rows: {names:?}");
    fail_on(
        "lab names outside src/lab/",
        lab_names_outside_lab(&krate.files, &names),
    );
}

#[test]
fn the_stated_checks_fail_on_a_crate_that_breaks_them() {
    let krate = super::model::analyze(&[
        ("src/lib.rs".into(), "pub mod lab;\npub mod docker;\npub mod verify;\n".into()),
        (
            "src/lab/mod.rs".into(),
            "labs! {\n    /// The PHP lab.\n    Php: php, PhpSettings, Php;\n    #[cfg(test)]\n    Toy: toy, ToySettings, Toy;\n}\nfn n() -> &'static str { \"php\" }\n".into(),
        ),
        ("src/docker/mod.rs".into(), "use bollard::Docker;\n".into()),
        (
            "src/verify/mod.rs".into(),
            "//! Names \"php\" in a comment.\nuse bollard::models::X;\nfn f(l: &str) -> bool {\n    l == \"php\" || l == \"php-fpm\" || l == \"toy\"\n}\n#[cfg(test)]\nmod tests {\n    fn t() { let _ = \"php\"; let _ = bollard::X; }\n}\n".into(),
        ),
    ]);
    let bollard = bollard_outside_docker(&krate.files);
    assert_eq!(bollard.len(), 1, "{bollard:?}");
    assert!(
        bollard[0].starts_with("src/verify/mod.rs:2: uses bollard"),
        "{bollard:?}"
    );
    let lab = krate
        .files
        .iter()
        .find(|f| f.rel == "src/lab/mod.rs")
        .unwrap();
    let names = lab_names(&lab.text);
    assert_eq!(names, ["php", "toy"]);
    let found = lab_names_outside_lab(&krate.files, &names);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("src/verify/mod.rs:4: the lab name \"php\""),
        "{found:?}"
    );
    assert!(
        found[1].starts_with("src/verify/mod.rs:4: the lab name \"toy\""),
        "{found:?}"
    );
}
