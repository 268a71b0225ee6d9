//! Bad input of the drop day's settings (issue 44): a journey weight table that does not sum
//! to 100, a journey to a page the lab does not serve, a retry budget outside 0-1, a trigger
//! longer than its step or one that leaves no room to judge the recovery, a CPU cut without its
//! share. Each is the catalog's experiment with one line changed: `perflab validate` exits 2
//! naming the file, the line, the field and the fix, and starts nothing.
use super::remedies_input::rejects;

#[test]
fn journey_weights_that_do_not_sum_to_100() {
    let from = "    journeys: {home: 40, landing: 20, gacha: 15, raffle: 15, catalog: 10}";
    rejects(
        "drop-profile",
        from,
        "    journeys: {home: 50, landing: 20, gacha: 15, raffle: 15, catalog: 10}",
        &[
            "drop-profile.yaml:",
            "load.drop.journeys",
            "sum to 110, not 100",
            "home 40, landing 20",
        ],
    );
    rejects(
        "drop-profile",
        from,
        "    journeys: {home: 40, landing: 20, gacha: 15, raffle: 15, checkout: 10}",
        &[
            "load.drop.journeys.checkout",
            "not a page of the storefront lab",
            "home, landing, gacha, raffle, catalog",
        ],
    );
}

#[test]
fn a_retry_budget_outside_0_to_1() {
    for bad in ["1.5", "-0.1"] {
        rejects(
            "drop-profile",
            "    retry_budget: 0.1",
            &format!("    retry_budget: {bad}"),
            &[
                "drop-profile.yaml:",
                "load.drop.retry_budget",
                "a share of the requests, 0 to 1",
            ],
        );
    }
}

#[test]
fn a_trigger_longer_than_its_step_or_without_room_to_recover() {
    rejects(
        "drop-stuck",
        "    for_s: 10",
        "    for_s: 150",
        &[
            "drop-stuck.yaml:",
            "load.trigger.for_s",
            "150 s: the trigger is longer than its step (hold_s = 120 s)",
        ],
    );
    rejects(
        "drop-stuck",
        "    recover_within_s: 40",
        "    recover_within_s: 90",
        &[
            "load.trigger.recover_within_s",
            "past the step's end (70 s left after the trigger)",
            "lengthen hold_s",
        ],
    );
    rejects(
        "drop-recovered",
        "    cut: 0.95",
        "    cut: 1.5",
        &["load.trigger.cut", "above 0 and below 1", "cut: 0.9"],
    );
    rejects(
        "drop-recovered",
        "    kind: cpu",
        "    kind: cpu\n    role: cache",
        &[
            "load.trigger.role",
            "`cache` is not a container of the storefront lab",
            "api, front",
        ],
    );
}
