//! The architecture checker on small in-memory crates: each check can fail.

use super::graph::{Graph, cycles, order_violations, parse_floors, paths};
use super::model::analyze;
use super::scan::{Function, Visibility, functions, mask, visibility};
use super::{cli_violations, module_graph, size_violations, unknown_modules};
use std::collections::HashMap;

const DOC: &str = "# A\n\n## The pipeline\n\n| floor | module | owns |\n|---|---|---|\n\
                   | 1 | `low` | x |\n| 2 | `mid`, `mid2` | y |\n| 3 | `high` | z |\n\n\
                   Beside them: `side` (s), `err` (e). An `err::Invalid` exits 2.\n\n## Next\n";

fn krate(files: &[(&str, &str)]) -> super::model::Crate {
    let owned: Vec<(String, String)> = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    analyze(&owned)
}

const LIB: &str =
    "pub mod low;\npub mod mid;\npub mod mid2;\npub mod high;\npub mod side;\npub mod err;\n";

#[test]
fn the_doc_table_gives_floors_and_side_modules() {
    let floors = parse_floors(DOC).unwrap();
    assert_eq!(floors.rank("low"), Some((1, 0)));
    assert_eq!(floors.rank("mid2"), Some((2, 1)));
    assert_eq!(floors.side, ["side", "err"]);
    assert!(floors.rank("side").is_none() && floors.is_side("side"));
    let err = parse_floors("# A\n\n## Other\n").unwrap_err();
    assert!(err.contains("The pipeline"), "{err}");
}

#[test]
fn back_edges_are_named_with_file_line_and_fix() {
    let k = krate(&[
        ("src/lib.rs", LIB),
        ("src/low/mod.rs", "//! Low.\nuse crate::high::Thing;\n"),
        (
            "src/mid.rs",
            "use crate::{side, low::X};\nuse crate::mid2::Y;\n",
        ),
        ("src/mid2.rs", "use crate::mid::Z;\n"),
        (
            "src/high.rs",
            "fn f() { crate::low::g(); crate::err::h(); }\n",
        ),
        (
            "src/side.rs",
            "use crate::err::E;\n\nfn f() { crate::mid::g() }\n",
        ),
        ("src/err.rs", ""),
    ]);
    let floors = parse_floors(DOC).unwrap();
    let v = order_violations(&floors, &k.edges);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(
        v[0].starts_with("src/low/mod.rs:2: `low` (floor 1) imports `high` (floor 3)"),
        "{}",
        v[0]
    );
    assert!(
        v[0].contains("Fix: move what `low` uses of `high` below `low`"),
        "{}",
        v[0]
    );
    assert!(
        v[1].starts_with("src/mid.rs:2: `mid` (floor 2) imports `mid2` (floor 2, listed after it)"),
        "{}",
        v[1]
    );
    assert!(
        v[2].starts_with("src/side.rs:3: side module `side` imports `mid` (pipeline floor 2)"),
        "{}",
        v[2]
    );
    assert!(unknown_modules(&floors, &k.modules).is_empty());
}

#[test]
fn test_code_may_borrow_from_later_modules() {
    let k = krate(&[
        ("src/lib.rs", LIB),
        (
            "src/low/mod.rs",
            "pub fn a() {}\n#[cfg(test)]\nmod tests {\n    use crate::high::Fixture;\n}\n\
             #[cfg(test)]\n#[path = \"low_tests.rs\"]\nmod more;\n#[cfg(test)]\nuse crate::mid::M;\n",
        ),
        ("src/low/low_tests.rs", "use crate::high::Other;\n"),
        ("src/high.rs", ""),
        ("src/mid.rs", ""),
    ]);
    assert!(k.edges.is_empty(), "{:?}", k.edges);
    let tests_file = k
        .files
        .iter()
        .find(|f| f.rel == "src/low/low_tests.rs")
        .unwrap();
    assert!(tests_file.test_only);
}

#[test]
fn docs_and_lib_must_name_the_same_modules() {
    let floors = parse_floors(DOC).unwrap();
    let modules: Vec<String> = ["low", "mid", "high", "side", "err", "extra"]
        .map(String::from)
        .into();
    let v = unknown_modules(&floors, &modules);
    assert_eq!(v.len(), 2, "{v:#?}");
    assert!(
        v[0].contains("module `extra` is not in docs/architecture.md"),
        "{}",
        v[0]
    );
    assert!(
        v[1].contains("`mid2` is listed but src/lib.rs declares no such module"),
        "{}",
        v[1]
    );
}

#[test]
fn a_cycle_is_reported_with_its_path() {
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("c", "e")] {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c", "a"]]);
    g.get_mut("c").unwrap().remove("a");
    assert!(cycles(&g).is_empty());

    let k = krate(&[
        ("src/lib.rs", "mod x;\nmod y;\n"),
        ("src/x.rs", "use crate::y::A;\n"),
        ("src/y.rs", "fn f() { crate::x::b() }\n"),
    ]);
    assert_eq!(
        cycles(&module_graph(&k.modules, &k.edges)),
        vec![vec!["x", "y", "x"]]
    );
}

#[test]
fn file_circles_inside_a_module_are_found() {
    let k = krate(&[
        ("src/lib.rs", "mod m;\n"),
        ("src/m/mod.rs", "mod a;\nmod b;\nmod c;\n"),
        ("src/m/a.rs", "use super::b::X;\n"),
        ("src/m/b.rs", "fn f() { crate::m::a::g() }\n"),
        ("src/m/c.rs", "use self::super::a::Y;\n"),
    ]);
    let circles = cycles(&k.file_graphs["m"]);
    assert_eq!(
        circles,
        vec![vec!["src/m/a.rs", "src/m/b.rs", "src/m/a.rs"]]
    );
}

#[test]
fn grouped_paths_and_exported_macros_are_uses() {
    let macros = HashMap::from([("say".to_string(), "output".to_string())]);
    let text = "use crate::{a::{b, c::d}, e};\nfn f() {\n    say!(\"x\");\n    crate::say!(\"y\");\n    \
                super::g::h();\n    kid::k();\n    $crate::z::q;\n}\nuse super::*;\n";
    let module = vec!["m".to_string(), "n".to_string()];
    let found = paths(&mask(text), &module, &["kid".to_string()], &macros);
    let want: Vec<(Vec<&str>, usize)> = vec![
        (vec!["a", "b"], 1),
        (vec!["a", "c", "d"], 1),
        (vec!["e"], 1),
        (vec!["output"], 3),
        (vec!["output"], 4),
        (vec!["m", "g", "h"], 5),
        (vec!["m", "n", "kid", "k"], 6),
        (vec!["m"], 9),
    ];
    let want: Vec<(Vec<String>, usize)> = want
        .into_iter()
        .map(|(p, l)| (p.into_iter().map(String::from).collect(), l))
        .collect();
    assert_eq!(found, want);
}

#[test]
fn braces_in_strings_chars_and_comments_are_not_code() {
    let text = "fn a() {\n    let s = \"}}{\\\"}\";\n    let c = '}';\n    // }\n    /* { /* } */ */\n    \
                let r = r#\"}\"#;\n    let l: &'static str = s;\n}\nfn b<'a>(x: &'a str) -> fn(u8) {\n    g\n}\n";
    let found = functions(&mask(text));
    let f = |name: &str, line, lines| Function {
        name: name.into(),
        line,
        lines,
    };
    assert_eq!(found, vec![f("a", 1, 8), f("b", 9, 3)]);
    assert!(!mask("let x = \"crate::high\";").contains("crate::"));
}

fn long_fn(body_lines: usize) -> String {
    format!(
        "//! M.\npub fn long() {{\n{}}}\n",
        "    step();\n".repeat(body_lines)
    )
}

#[test]
fn a_101_line_function_and_a_601_line_file_fail() {
    let ok = krate(&[("src/lib.rs", "mod m;\n"), ("src/m.rs", &long_fn(98))]);
    assert!(size_violations(&ok.files).is_empty());
    let long = krate(&[("src/lib.rs", "mod m;\n"), ("src/m.rs", &long_fn(99))]);
    let v = size_violations(&long.files);
    assert_eq!(
        v,
        [
            "src/m.rs:2: fn `long` is 101 lines, from `fn` to its closing brace (limit 100). \
                    Fix: split it into named steps"
        ]
    );
    let big = "fn a() {}\n".repeat(601);
    let v = size_violations(&krate(&[("src/lib.rs", "mod m;\n"), ("src/m.rs", &big)]).files);
    assert_eq!(
        v,
        ["src/m.rs: 601 lines (limit 600). Fix: split it by concept into files of its module"]
    );
}

#[test]
fn a_cli_over_1500_lines_fails_and_other_modules_do_not_count() {
    let lines = |n: usize| "fn a() {}\n".repeat(n);
    let (half, other) = (lines(750), lines(400));
    let files = |extra: &str| {
        krate(&[
            ("src/lib.rs", "mod cli;\nmod low;\n"),
            ("src/cli/mod.rs", "mod a;\nmod b;\n"),
            ("src/cli/a.rs", &half),
            ("src/cli/b.rs", extra),
            ("src/low.rs", &other),
        ])
    };
    // 2 + 750 + 748 = 1,500: at the limit; the 400 lines of `low` are not the cli's
    assert!(cli_violations(&files(&lines(748)).files).is_empty());
    let v = cli_violations(&files(&lines(749)).files);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].starts_with("src/cli/: 1501 lines in 3 files (limit 1500; largest: src/cli/a.rs 750, src/cli/b.rs 749, src/cli/mod.rs 2)"),
        "{}",
        v[0]
    );
}

#[test]
fn items_are_counted_by_visibility() {
    let text = "pub fn a() {}\npub(crate) struct B;\npub(super) const C: u8 = 1;\nfn d() {}\n\
                trait T {\n    fn e();\n    type F;\n}\nimpl T for B {\n    fn e() {}\n    type F = u8;\n}\n\
                impl B {\n    pub fn m() {}\n}\npub async fn g() {}\npub const fn h() {}\n\
                pub unsafe extern \"C\" fn i() {}\nlet pub_x = 1;\n";
    let v = visibility(&mask(text));
    assert_eq!(
        v,
        Visibility {
            public: 5,
            crate_only: 1,
            restricted: 1,
            private: 2
        }
    );
}

#[test]
fn a_crate_private_module_is_still_a_module() {
    let lib = "pub mod low;\npub(crate) mod mid;\nmod high;\n";
    let c = krate(&[
        ("src/lib.rs", lib),
        ("src/low.rs", "pub fn a() {}\n"),
        ("src/mid.rs", "pub fn b() {}\n"),
        ("src/high.rs", "pub fn c() {}\n"),
    ]);
    assert_eq!(c.modules, ["low", "mid", "high"]);
}
