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
        .stderr(contains("[possible values: trixie, forky, bookworm, all]"));
}

#[test]
fn unknown_lab_is_invalid_input() {
    perflab()
        .args(["up", "ruby"])
        .assert()
        .code(2)
        .stderr(contains(
            "neither a lab (php, node, demo, storefront) nor an experiment",
        ));
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

#[test]
fn a_group_is_not_a_stack() {
    perflab()
        .args(["smoke", "exp3"])
        .assert()
        .code(2)
        .stderr(contains("`exp3` is a group (exp3-n5, exp3-n10, exp3-n40)"));
}

#[test]
fn misspelt_experiment_id_suggests_the_right_one() {
    perflab()
        .args(["up", "exp3-n55", "--set", "max_children=7"])
        .assert()
        .code(2)
        .stderr(contains("did you mean `exp3-n5`?"));
}

#[test]
fn experiment_settings_are_validated_like_run() {
    // exp3-n5's stack with an override the validator refuses: nothing starts
    perflab()
        .args(["up", "exp3-n5", "--set", "stack.php.listen=pipe"])
        .assert()
        .code(2)
        .stderr(contains("nothing was started"));
}
