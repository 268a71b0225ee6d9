//! The table's cases of the matrix and the export (issue 26): plan files and hosts files made
//! hostile (too large, one endless line, shell characters, cells of another plan, too many
//! cells), `run --run-name` misused, plan flags out of bounds, export flags out of bounds.
use super::{Case, case};

const HEAD: &str = "# perflab matrix plan 1\n# id 20261201T101500Z\n";

fn plan(lines: &str) -> Vec<u8> {
    format!("{HEAD}{lines}").into_bytes()
}

/// `n` distinct cells (round 1..n of demo-open on trixie).
fn cells(n: usize) -> Vec<u8> {
    let mut s = HEAD.to_string();
    for r in 1..=n {
        s += &format!(
            "perflab run demo-open --suite trixie --run-name 20261201T101500Z-r{r}-trixie --quick\n"
        );
    }
    s.into_bytes()
}

fn run_plan(name: &'static str, body: Vec<u8>, says: &[&'static str]) -> Case {
    case(
        name,
        Some(("m.plan", body)),
        &["matrix", "run", "m.plan", "--local", "--out", "out"],
        2,
        says,
    )
}

pub fn matrix_cases() -> Vec<Case> {
    vec![
        run_plan(
            "matrix plan file of 5 MiB",
            vec![b'#'; 5 << 20],
            &["m.plan", "larger than 4 MiB"],
        ),
        run_plan(
            "matrix plan: one endless line",
            plan(&"x".repeat(3 << 20)),
            &["m.plan: line 3", "at most 2048"],
        ),
        run_plan(
            "matrix plan: shell characters in a cell",
            plan(
                "perflab run demo-open --suite trixie --run-name 20261201T101500Z-r1-trixie$(reboot)\n",
            ),
            &["m.plan: line 3", "shell characters"],
        ),
        run_plan(
            "matrix plan: a cell of another plan",
            plan("perflab run demo-open --suite trixie --run-name 20261201T101501Z-r1-trixie\n"),
            &["line 3", "field --run-name", "plan's id"],
        ),
        run_plan(
            "matrix plan: an unknown experiment",
            plan("perflab run nosuch --suite trixie --run-name 20261201T101500Z-r1-trixie\n"),
            &[
                "cell nosuch/20261201T101500Z-r1-trixie",
                "no experiment `nosuch`",
            ],
        ),
        run_plan(
            "matrix plan: 25,000 cells",
            cells(25_000),
            &["line 20003", "more than 20000 cells"],
        ),
        run_plan(
            "matrix plan: not UTF-8",
            [plan("# "), vec![0xff, 0xfe, b'\n']].concat(),
            &["m.plan", "not UTF-8"],
        ),
        case(
            "matrix hosts file: a control character",
            Some(("hosts", b"root@a\nroot@\x1b[2Jb\n".to_vec())),
            &[
                "matrix", "run", "m.plan", "--hosts", "hosts", "--out", "out",
            ],
            2,
            &["hosts: line 2", "not an ssh login"],
        ),
        case(
            "matrix run: --remote-dir out of the home",
            Some(("hosts", b"root@a\n".to_vec())),
            &[
                "matrix",
                "run",
                "m.plan",
                "--hosts",
                "hosts",
                "--remote-dir",
                "../x",
                "--out",
                "out",
            ],
            2,
            &["--remote-dir ../x: give a relative path"],
        ),
        case(
            "matrix run: the hosts file is /dev/null",
            None,
            &[
                "matrix",
                "run",
                "m.plan",
                "--hosts",
                "/dev/null",
                "--out",
                "out",
            ],
            2,
            &["/dev/null: cannot read it (not a regular file (a character device)"],
        ),
        case(
            "matrix plan: --rounds 0",
            None,
            &[
                "matrix",
                "plan",
                "demo-open",
                "--rounds",
                "0",
                "--plan",
                "p",
            ],
            2,
            &["--rounds 0"],
        ),
        case(
            "matrix plan: a --set with a space",
            None,
            &[
                "matrix",
                "plan",
                "demo-open",
                "--set",
                "load.steps=1, 2",
                "--plan",
                "p",
            ],
            2,
            &["--set", "load.steps"],
        ),
        case(
            "matrix plan: a suite twice",
            None,
            &[
                "matrix",
                "plan",
                "demo-open",
                "--suites",
                "trixie,trixie",
                "--plan",
                "p",
            ],
            2,
            &["given twice"],
        ),
        case(
            "run --run-name: not a cell name",
            None,
            &["run", "demo-open", "--run-name", "../../etc"],
            2,
            &["--run-name", "not a cell name"],
        ),
        case(
            "run --run-name with two rounds",
            None,
            &[
                "run",
                "demo-open",
                "--rounds",
                "2",
                "--run-name",
                "20261201T101500Z-r1-trixie",
            ],
            2,
            &["--run-name", "one round of one experiment"],
        ),
        case(
            "export k8s: 99 generators",
            None,
            &["export", "k8s", "exp1", "--dir", "k", "--generators", "99"],
            2,
            &["--generators"],
        ),
        case(
            "export k8s: half a CPU",
            None,
            &[
                "export",
                "k8s",
                "exp1",
                "--dir",
                "k",
                "--k8s-cpus",
                "loadgen=1,db=1,app=0.5",
            ],
            2,
            &["--k8s-cpus", "whole"],
        ),
    ]
}
