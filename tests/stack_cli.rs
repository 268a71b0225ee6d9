//! Bad input to the lab commands exits 2 with a message naming the fix, and starts nothing.
use assert_cmd::Command;
use predicates::str::contains;

fn perflab() -> Command {
    Command::cargo_bin("perflab").unwrap()
}

#[test]
fn unknown_suite_is_invalid_input() {
    perflab()
        .args(["build", "--suite", "sid"])
        .assert()
        .code(2)
        .stderr(contains("use one of trixie (default), forky, bookworm"));
}

#[test]
fn unknown_lab_is_invalid_input() {
    perflab()
        .args(["up", "ruby"])
        .assert()
        .code(2)
        .stderr(contains("use php, node or demo"));
}

#[test]
fn misspelt_set_key_suggests_the_right_one() {
    perflab()
        .args(["smoke", "php", "--set", "php.max_childs=5"])
        .assert()
        .code(2)
        .stderr(contains("did you mean `php.max_children`"));
}

#[test]
fn set_for_another_lab_is_rejected() {
    perflab()
        .args(["up", "demo", "--set", "php.max_children=5"])
        .assert()
        .code(2)
        .stderr(contains("the demo lab has no `php` settings"));
}

#[test]
fn bad_cpus_override_is_rejected() {
    perflab()
        .args(["up", "node", "--cpus", "web=3"])
        .assert()
        .code(2)
        .stderr(contains("unknown role `web`"));
}

#[test]
fn down_of_an_unknown_run_is_invalid_input() {
    perflab()
        .args(["down", "up-php-doesnotexist"])
        .assert()
        .code(2)
        .stderr(contains("no stack with run id"));
}
