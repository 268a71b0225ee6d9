//! Tests that need neither Docker nor a browser: parsers, plans, reports on recorded fixtures, the
//! CLI's errors and help, the fake engine's sessions, the docs.
//! One test binary per need (see tests/README.md): each file below was a binary of its own.

mod analyze_criteria;
mod analyze_fixtures;
mod architecture;
mod bounds_fixtures;
#[path = "../run_support/bounds.rs"]
mod bounds_support;
mod catalog_files;
mod catalog_layout;
mod catalog_plan;
mod cli_errors;
mod cli_help;
mod cli_show;
mod compare_batches;
mod compare_cli;
mod compare_forky;
mod compare_heldout_power;
mod compare_interleave;
mod compare_matrix_cli;
mod compare_power;
mod compare_turns;
mod cut_step_cpu;
mod docs;
mod drop_input;
mod drop_map;
mod export_k8s;
mod fit_rules;
#[path = "../fit_support/mod.rs"]
mod fit_support;
mod fit_validate;
mod fuzz_replay;
mod generators_report;
mod history_cli;
mod history_nightly;
mod history_otava;
#[path = "../history_support/mod.rs"]
mod history_support;
mod hostile_input;
mod live_grafana;
mod live_room;
mod live_server;
#[path = "../live_support/mod.rs"]
mod live_support;
mod lock_contention;
mod matrix_compare;
mod out_scale;
mod remedies_input;
mod report_example;
mod report_hostcpu;
mod report_html;
mod report_index;
mod report_meaning;
mod report_rundir;
mod report_snapshots;
#[path = "../report_support/mod.rs"]
mod report_support;
mod rundir_contract;
mod rundir_layout;
mod rundir_naming;
mod session_fit;
mod session_fit_recorded;
mod session_phases;
mod session_twin_fit;
mod shared_host_report;
mod stack_cli;
mod verify_claims;
mod verify_cli;
mod verify_diag_acc_fit;
mod verify_fixes_dec07;
mod verify_render;
mod verify_restated_dec07;
mod verify_restated_dec07b;
mod verify_round_dec07;
mod verify_rounds;
#[path = "../verify_support/mod.rs"]
mod verify_support;
mod verify_validate;
