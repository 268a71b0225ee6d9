//! Every claim of the catalog (`expect:`) on recorded data: once on a run where it holds and
//! once where it does not.
//!
//! Fixtures: `tests/fixtures/verify/<experiment>/<run>/` are the real catalog runs of
//! 2026-11-30 on the 2-CPU dev host (report.json without its `timeline`/`per_second` arrays,
//! manifest.json and status.json as recorded). Where no real run can show a case, a copy of a
//! real run with ONE value changed lives in `tests/fixtures/verify-edited/`, named `*-edited`;
//! the test says what was changed and why.
use crate::verify_support;
use perflab::experiment::{Catalog, CatalogEntry};
use perflab::verify::load::{self, LoadedRun};
use perflab::verify::{ClaimResult, ClaimVerdict, evaluate};
use verify_support::{real, root};

fn catalog() -> Catalog {
    Catalog::load(
        &root().join("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .expect("catalog valid")
}

/// The edited copy `tests/fixtures/verify-edited/<exp>/<...>-<what>-edited` (or `-edited`).
fn edited(exp: &str, what: &str) -> LoadedRun {
    let dir = root().join("tests/fixtures/verify-edited").join(exp);
    let suffix = if what.is_empty() {
        "-r1-edited".to_string()
    } else {
        format!("-{what}-edited")
    };
    let run = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(&suffix))
        .unwrap_or_else(|| panic!("no {suffix} under {}", dir.display()));
    load::load_run(&run).unwrap()
}

/// `r` as if php-fpm's access log had been read and showed no steal at any step: the 2026-11-30
/// runs predate the log by worker, so `error-rate` cannot read them as recorded (a fail naming
/// the missing row); with no steal its bounds are the strict turn's, which the tests check.
fn as_if_no_steals(mut r: LoadedRun) -> LoadedRun {
    use perflab::analyze::access::{AccessRow, TurnBreaks, WorkerShares};
    r.report.access = r
        .report
        .steps
        .iter()
        .map(|s| AccessRow {
            step: s.name.clone(),
            fpm_requests: s.requests as usize,
            fpm_duration_p50_ms: None,
            fpm_duration_p95_ms: None,
            fpm_cpu_pct_mean: None,
            nginx_requests: s.requests as usize,
            nginx_request_p50_ms: None,
            nginx_request_p95_ms: None,
            upstream_connect_p50_ms: None,
            upstream_connect_max_ms: None,
            backlog_p50_ms: None,
            workers: Some(WorkerShares {
                served: 120,
                always_failed: 24,
                mixed: 0,
                failing_share: s.failed_rate,
                per_worker_min: 0,
                per_worker_max: 0,
                failed_p50_ms: None,
                ok_p50_ms: None,
                turns: Some(TurnBreaks::default()),
            }),
        })
        .collect();
    r
}

/// exp2-pgconn's `error-rate` on `r` read with no steal (`as_if_no_steals`): the strict turn.
pub(crate) fn error_rate_if_no_steals(r: LoadedRun) -> ClaimResult {
    claim("exp2-pgconn", "error-rate", &as_if_no_steals(r), None)
}

/// The claim's value and bound without its `needs:` (the hardware it needs is tested apart):
/// what the claim would say on this run if the host had it.
fn claim_as_if_needs_met(
    exp: &str,
    name: &str,
    run: &LoadedRun,
    against: Option<&LoadedRun>,
) -> ClaimResult {
    let cat = catalog();
    let CatalogEntry::Experiment(e) = &cat.get(exp).unwrap().entry else {
        panic!("{exp} is a group")
    };
    let mut c = e.expect.iter().find(|c| c.name == name).unwrap().clone();
    assert!(!c.needs.is_empty(), "{exp}/{name} has needs");
    c.needs.clear();
    let la = run.label();
    let lb = against.map(LoadedRun::label).unwrap_or_default();
    evaluate(exp, &c, run.view(&la), against.map(|a| a.view(&lb)))
}

/// Claim `name` of experiment `exp` evaluated on `run` (and `against`).
pub(crate) fn claim(
    exp: &str,
    name: &str,
    run: &LoadedRun,
    against: Option<&LoadedRun>,
) -> ClaimResult {
    let cat = catalog();
    let CatalogEntry::Experiment(e) = &cat.get(exp).unwrap().entry else {
        panic!("{exp} is a group")
    };
    let c = e
        .expect
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{exp} has no claim {name}"));
    let la = run.label();
    let lb = against.map(LoadedRun::label).unwrap_or_default();
    evaluate(exp, c, run.view(&la), against.map(|a| a.view(&lb)))
}

pub(crate) fn holds(r: &ClaimResult) {
    assert_eq!(r.verdict, ClaimVerdict::Pass, "{r:#?}");
}
pub(crate) fn fails(r: &ClaimResult) {
    assert_eq!(r.verdict, ClaimVerdict::Fail, "{r:#?}");
}

// ---- exp0 vs exp1: persistent PDO --------------------------------------------------------

#[test]
fn exp0_knee_ratio_not_reproduced_here_holds_with_a_knee() {
    // Real exp0 on this host: no step fails up to 60 rps (pg 36 % of its core), so there is
    // no knee to compare: the finding is not reproduced.
    let r = claim(
        "exp0",
        "persistent-raises-knee",
        &real("exp0"),
        Some(&real("exp1")),
    );
    fails(&r);
    assert!(r.reason.as_deref().unwrap().contains("no knee"), "{r:?}");
    // The same claim on a real run with a knee at 50 rps (exp2-pgconn, /api/db): 210 / 50.
    let r = claim(
        "exp0",
        "persistent-raises-knee",
        &real("exp2-pgconn"),
        Some(&real("exp1")),
    );
    holds(&r);
    assert!(r.measured.starts_with("4.2"), "{}", r.measured);
}

#[test]
fn exp0_db_core_saturated_not_reproduced_here() {
    // With one app CPU the claim is n/a, naming the hardware.
    let r = claim("exp0", "db-core-saturated", &real("exp0"), None);
    assert_eq!(r.verdict, ClaimVerdict::NotApplicable, "{r:?}");
    assert!(
        r.reason
            .unwrap()
            .contains("needs >= 2 app CPUs; this host gives the app 1")
    );
    // Its value and bound, as if the host had them: real exp0 has no knee (see above).
    fails(&claim_as_if_needs_met(
        "exp0",
        "db-core-saturated",
        &real("exp0"),
        None,
    ));
    // exp1's knee: fpm busy and app CPU saturated, the pg core is not.
    fails(&claim_as_if_needs_met(
        "exp0",
        "db-core-saturated",
        &real("exp1"),
        None,
    ));
    // Edited copy of exp1: r0210's `saturated` list gains "pg core at 90 %", the one value
    // this claim reads (no run of this host saturates the pg core at its knee).
    holds(&claim_as_if_needs_met(
        "exp0",
        "db-core-saturated",
        &edited("exp1", "pgsat"),
        None,
    ));
}

#[test]
fn exp0_app_cpu_left_at_the_knee() {
    let n_a = claim("exp0", "app-cpu-left", &real("exp2-pgconn"), None);
    assert_eq!(n_a.verdict, ClaimVerdict::NotApplicable, "{n_a:?}");
    let c = |run: &str| claim_as_if_needs_met("exp0", "app-cpu-left", &real(run), None);
    fails(&c("exp0")); // no knee
    // exp2-pgconn's knee (50 rps): app box at ~33 % of its core.
    holds(&c("exp2-pgconn"));
    // exp2-mc80's knee (150 rps): fpm + nginx ~90 %.
    fails(&c("exp2-mc80"));
}

#[test]
fn exp1_db_waits_for_php_at_the_knee() {
    holds(&claim("exp1", "db-waits-for-php", &real("exp1"), None));
    // /api/slow's knee: the connections are active in pg_sleep, not waiting for PHP.
    fails(&claim("exp1", "db-waits-for-php", &real("exp3-n5"), None));
}

// ---- exp2-pgconn ---------------------------------------------------------------------------

#[test]
fn exp2_pgconn_error_rate_misses_at_150_on_this_host() {
    // Real run: 19.22 / 20.25 / 16.90 % at 999 / 2,000 / 3,000 requests. The fixed turn of
    // 120 workers (24 refused) bounds each step: 0.1922-0.2162, 0.192-0.204, and 0.2-0.2 at
    // step 150 (25 whole turns). 192 of 999 is the lower bound exactly (8 turns, a part turn
    // of 39 without a refused worker); step 150 is 3.1 points off.
    // As recorded, the run has no access log by worker: the claim cannot read its steals.
    let r = claim("exp2-pgconn", "error-rate", &real("exp2-pgconn"), None);
    fails(&r);
    assert_ne!(r.reason.as_deref(), Some("fails at step 150"), "{r:#?}");
    assert!(format!("{r:?}").contains("access"), "{r:#?}");
    let r = error_rate_if_no_steals(real("exp2-pgconn"));
    fails(&r);
    assert_eq!(r.reason.as_deref(), Some("fails at step 150"));
    assert!(r.expected.starts_with("between"), "{}", r.expected);
    // Edited copy: r0150's failed_rate 0.169 -> 0.1792 (the article's 17.92 %). Under the old
    // claim (0.2 +- 0.03) it passed; 3,000 requests are 25 whole turns, so the turn allows
    // exactly 0.2 and the article's figure fails too.
    let r = error_rate_if_no_steals(edited("exp2-pgconn", ""));
    fails(&r);
    assert_eq!(r.reason.as_deref(), Some("fails at step 150"));
    // exp1 has no errors at all.
    fails(&claim("exp2-pgconn", "error-rate", &real("exp1"), None));
}

#[test]
fn exp2_pgconn_error_rate_uses_the_measured_slots() {
    // The real run predates `postgres_slots`: PostgreSQL's defaults (3 reserved) and the
    // harness's one connection are assumed, 96 usable -> 24 refused of 120.
    let r = error_rate_if_no_steals(real("exp2-pgconn"));
    assert_eq!(r.reason.as_deref(), Some("fails at step 150"));
    // Edited copy: the manifest records 100 usable slots (no reserved ones, no harness
    // connection: the article's arithmetic, 20 refused of 120). The bounds follow the record:
    // 0.160-0.180 at step 50 (999 requests), 0.16-0.17 at 100, so the measured rates miss at
    // every step, not only at 150.
    let r = error_rate_if_no_steals(edited("exp2-pgconn", "slots"));
    fails(&r);
    assert_eq!(r.reason.as_deref(), Some("fails at step 50, 100, 150"));
}

#[test]
fn exp2_pgconn_errors_are_http_500() {
    holds(&claim(
        "exp2-pgconn",
        "http-500",
        &real("exp2-pgconn"),
        None,
    ));
    // fail-unix fails with 502s.
    fails(&claim("exp2-pgconn", "http-500", &real("fail-unix"), None));
}

#[test]
fn exp2_pgconn_laravel_log_too_many_clients() {
    let r = claim(
        "exp2-pgconn",
        "too-many-clients",
        &real("exp2-pgconn"),
        None,
    );
    holds(&r);
    // exp3-n5 has no Laravel log with that message.
    fails(&claim(
        "exp2-pgconn",
        "too-many-clients",
        &real("exp3-n5"),
        None,
    ));
}

// ---- exp2: 5 and 80 workers ------------------------------------------------------------------

#[test]
fn exp2_mc5_cpu_spare_not_reproduced_here() {
    // Real: knee 180 with the app's one CPU at 84 %: no CPU to spare on this host.
    fails(&claim(
        "exp2-mc5",
        "cpu-spare-at-knee",
        &real("exp2-mc5"),
        None,
    ));
    // /api/slow with 5 workers breaks with the CPU nearly idle.
    holds(&claim(
        "exp2-mc5",
        "cpu-spare-at-knee",
        &real("exp3-n5"),
        None,
    ));
}

/// Where the fit had to go down to one worker, the claim cannot test a pool: n/a, naming it.
#[test]
fn exp2_mc5_cpu_spare_needs_a_pool_of_two() {
    let mut one = real("exp2-mc5");
    let php = one.manifest.experiment.stack.php.as_mut().unwrap();
    assert_eq!(
        php.max_children, 5,
        "the recorded run has the article's 5 workers"
    );
    php.max_children = 1;
    let r = claim("exp2-mc5", "cpu-spare-at-knee", &one, None);
    assert_eq!(r.verdict, ClaimVerdict::NotApplicable, "{r:#?}");
    assert_eq!(
        r.reason.as_deref(),
        Some("needs max_children >= 2; this run has max_children = 1")
    );
}

#[test]
fn exp2_mc80_knee_like_mc20() {
    // Real: 80 workers sustain 120, exp1 180: two steps below (0.67), no capacity added.
    let r = claim(
        "exp2-mc80",
        "knee-like-mc20",
        &real("exp2-mc80"),
        Some(&real("exp1")),
    );
    holds(&r);
    assert!(r.measured.starts_with("0.6667"), "{}", r.measured);
    // The other way round (exp1's 180 against mc80's 120): 1.5, a gain the claim refuses.
    let r = claim(
        "exp2-mc80",
        "knee-like-mc20",
        &real("exp1"),
        Some(&real("exp2-mc80")),
    );
    fails(&r);
    assert!(r.measured.starts_with("1.5"), "{}", r.measured);
}

// ---- exp3: N / W ---------------------------------------------------------------------------

#[test]
fn exp3_n5_plateau_queue_idle() {
    let n5 = real("exp3-n5");
    for c in ["plateau-n-over-w", "queue-at-knee", "no-idle-at-knee"] {
        holds(&claim("exp3-n5", c, &n5, None));
    }
    // 40 workers plateau at 174 ok/s, far below 40 / 0.112 s.
    fails(&claim(
        "exp3-n5",
        "plateau-n-over-w",
        &real("exp3-n40"),
        None,
    ));
    // exp2-pgconn's knee: 119 idle workers, empty queue (the errors break it).
    let pg = real("exp2-pgconn");
    fails(&claim("exp3-n5", "queue-at-knee", &pg, None));
    fails(&claim("exp3-n5", "no-idle-at-knee", &pg, None));
}

#[test]
fn exp3_n40_under_n_over_w_near_cpu_ceiling() {
    let n40 = real("exp3-n40");
    holds(&claim("exp3-n40", "plateau-under-n-over-w", &n40, None));
    holds(&claim("exp3-n40", "near-cpu-ceiling", &n40, None));
    // 5 workers reach 92 % of N/W, and stay far below the CPU ceiling.
    let n5 = real("exp3-n5");
    fails(&claim("exp3-n40", "plateau-under-n-over-w", &n5, None));
    fails(&claim("exp3-n40", "near-cpu-ceiling", &n5, None));
}

#[test]
fn exp3sat_n5_collapse_while_php_serves() {
    let sat = real("exp3sat-n5");
    let n5 = real("exp3-n5");
    holds(&claim("exp3sat-n5", "goodput-collapse", &sat, None));
    holds(&claim("exp3sat-n5", "php-still-serving", &sat, Some(&n5)));
    holds(&claim("exp3sat-n5", "nginx-timeouts", &sat, None));
    // exp3-n5 (with abort) still serves 70 % of its top step.
    fails(&claim("exp3sat-n5", "goodput-collapse", &n5, None));
    // exp2-pgconn accepts ~150/s with 120 workers: nowhere near 120 / W.
    fails(&claim(
        "exp3sat-n5",
        "php-still-serving",
        &real("exp2-pgconn"),
        Some(&n5),
    ));
    // exp1's nginx log is empty.
    fails(&claim("exp3sat-n5", "nginx-timeouts", &real("exp1"), None));
    // Without the exp3-n5 run there is nothing to take W from: fail, not pass.
    let r = claim("exp3sat-n5", "php-still-serving", &sat, None);
    fails(&r);
    assert!(r.reason.unwrap().contains("perflab run exp3-n5"));
}

// ---- the unix socket ---------------------------------------------------------------------

#[test]
fn fail_unix_eagain_502_and_blind_status() {
    let u = real("fail-unix");
    let tcp = real("exp1");
    for c in [
        "eagain-502",
        "fast-502s",
        "status-blind-len",
        "status-blind-queue",
    ] {
        holds(&claim("fail-unix", c, &u, None));
        // Over TCP (exp1): no EAGAIN, no 502, `listen queue len` 511, queue 151 at the knee.
        fails(&claim("fail-unix", c, &tcp, None));
    }
}

#[test]
fn diag_tcp_backlog_visible_full_and_no_fast_fail() {
    let tcp = real("diag-tcp");
    let unix = real("fail-unix");
    holds(&claim("diag-tcp", "backlog-visible", &tcp, None));
    // its top step (300 rps): `listen queue` 512 of 511, 8 x 504 and no 502
    holds(&claim("diag-tcp", "backlog-fills", &tcp, None));
    holds(&claim("diag-tcp", "fails-slow", &tcp, None));
    // over the unix socket the status page shows `listen queue len` 0, not 511, and the
    // full queue refuses at once: 502
    for c in ["backlog-visible", "backlog-fills", "fails-slow"] {
        fails(&claim("diag-tcp", c, &unix, None));
    }
    // exp1 aborts at its knee, its queue never full (151 at the knee)
    fails(&claim("diag-tcp", "backlog-fills", &real("exp1"), None));
}

#[test]
fn exp3_n10_plateau_and_exp3sat_n10_collapse() {
    holds(&claim(
        "exp3-n10",
        "plateau-n-over-w",
        &real("exp3-n10"),
        None,
    ));
    fails(&claim(
        "exp3-n10",
        "plateau-n-over-w",
        &real("exp3-n40"),
        None,
    ));
    let sat = real("exp3sat-n10");
    holds(&claim("exp3sat-n10", "goodput-collapse", &sat, None));
    holds(&claim("exp3sat-n10", "nginx-timeouts", &sat, None));
    let n10 = real("exp3-n10");
    fails(&claim("exp3sat-n10", "goodput-collapse", &n10, None));
    fails(&claim("exp3sat-n10", "nginx-timeouts", &n10, None));
}

// ---- Node: database-bound (1a), pool-bound (1b) -----------------------------------------

#[test]
fn node_1a_db_core_not_reproduced_here() {
    // Real 1a: no step fails up to 300 rps (pg 37 % of its core): no knee to read.
    let a = real("1a");
    fails(&claim("1a", "db-core-busy", &a, None));
    fails(&claim("1a", "loop-not-busy", &a, None));
    // 1b's knee: pg_sleep holds connections, the pg core is at 6 %.
    let b = real("1b");
    fails(&claim("1a", "db-core-busy", &b, None));
    // ... and the event loop is far from busy there.
    holds(&claim("1a", "loop-not-busy", &b, None));
    // PostgreSQL alone at 90 % does not answer it: the claim reads the core's busy time.
    fails(&claim("1a", "db-core-busy", &edited("exp1", "pgcpu"), None));
    // Edited copy of exp1: r0210 gains db_core_busy_pct 92, the one value this claim reads.
    holds(&claim(
        "1a",
        "db-core-busy",
        &edited("exp1", "dbcore"),
        None,
    ));
}

#[test]
fn node_1b_pool_ceiling_waiting_db_idle() {
    let b = real("1b");
    for c in ["pool-ceiling", "pool-waiting-at-knee", "db-cpu-low"] {
        holds(&claim("1b", c, &b, None));
    }
    // 1a tops out at 300 rps, far below 10 / 2.4 ms.
    fails(&claim("1b", "pool-ceiling", &real("1a"), None));
    // exp1 (PHP) has no Node pool metrics at its knee: missing data fails, never passes.
    let r = claim("1b", "pool-waiting-at-knee", &real("exp1"), None);
    fails(&r);
    assert!(r.reason.unwrap().contains("no Node app metrics"));
    // The edited exp1 copy with pg at 90 % at the knee.
    fails(&claim("1b", "db-cpu-low", &edited("exp1", "pgcpu"), None));
}

#[test]
fn node_1c_pool_timeout_not_reproduced_here_little_holds() {
    let c = real("1c");
    // Real 1c: the pool serves ~485/s here (W 20.6 ms), so the 400 capped VUs wait ~0.82 s,
    // under the 1 s PG_CONN_TIMEOUT_MS: no 500s, no timeout message.
    fails(&claim("1c", "pool-timeout-500", &c, None));
    fails(&claim("1c", "pool-timeout-message", &c, None));
    // exp2-pgconn's knee has HTTP 500s.
    holds(&claim("1c", "pool-timeout-500", &real("exp2-pgconn"), None));
    // Edited copy of 1c: the knee's (550) Node error counts gain the pool-timeout message (the
    // article's 86), the one value this claim reads.
    holds(&claim(
        "1c",
        "pool-timeout-message",
        &edited("1c", "errors"),
        None,
    ));
    // Little's law at 550: mean 645.7 ms vs 323.4 mean VUs in flight / 485.6 completed/s =
    // 666 ms (-3 %). The cap (400) binds only part of the step: 400 / 485.6 = 824 ms is 28 %
    // above the mean (its median, 794, sat near it because most requests came at the cap).
    let r = claim("1c", "little-mean", &c, None);
    holds(&r);
    assert!(r.measured.starts_with("645.7 at 550"), "{}", r.measured);
    // 1b stopped at 500: there is no 550 step to read.
    let r = claim("1c", "little-mean", &real("1b"), None);
    fails(&r);
    assert!(r.reason.unwrap().contains("no step 550"));
}

/// The recorded runs where the old form (p50 against the VU cap over the goodput) missed by
/// more than 20 % while the system held the law: the mean against the mean VUs in flight over
/// the completed rate holds within 20 % (1b at 500: p50 133 vs 98 VUs / 494 = 198 ms, -33 %;
/// mean 132 vs 65.4 / 494.4 = 132 ms).
#[test]
fn little_law_reads_the_mean_against_the_mean_vus_in_flight() {
    let cat = catalog();
    let CatalogEntry::Experiment(e) = &cat.get("1c").unwrap().entry else {
        panic!()
    };
    let mut c = e
        .expect
        .iter()
        .find(|c| c.name == "little-mean")
        .unwrap()
        .clone();
    c.at = Some(perflab::claim::schema::StepAt::Target(500));
    let run = real("1b");
    let r = evaluate("1c", &c, run.view(&run.label()), None);
    holds(&r);
    assert!(r.measured.starts_with("132 at 500"), "{}", r.measured);
    // The old form on the same step misses by a third: the claim can fail.
    c.value = "p50_ms".into();
    c.near = Some(perflab::claim::schema::Bound::Expr(
        "1000 * max_vus / ok_per_s".into(),
    ));
    let r = evaluate("1c", &c, run.view(&run.label()), None);
    fails(&r);
}

// ---- Node: CPU-bound (2a, 2b) -----------------------------------------------------------

#[test]
fn node_2a_one_core_is_not_applicable_on_one_app_cpu() {
    let a = real("2a");
    // The app box has one CPU here: "one process uses one core" cannot be tested.
    let r = claim("2a", "one-core", &a, None);
    assert_eq!(r.verdict, ClaimVerdict::NotApplicable, "{r:?}");
    assert_eq!(
        r.reason.as_deref(),
        Some("needs >= 2 app CPUs; this host gives the app 1 (of 2 online)")
    );
    // Edited copies with cpu_layout.app "1" -> "1-2": the claim reads the recorded CPU.
    // 2a's top step: the process at 0.95 cores.
    holds(&claim("2a", "one-core", &edited("2a", "layout"), None));
    // 1b's top step: 0.16 cores (the app waits for the pool, not the CPU).
    fails(&claim("2a", "one-core", &edited("1b", "layout"), None));
}

#[test]
fn node_2a_loop_saturated() {
    holds(&claim("2a", "loop-saturated", &real("2a"), None));
    // /dbsleep: ELU 0.16 at the top step.
    fails(&claim("2a", "loop-saturated", &real("1b"), None));
}

#[test]
fn node_2b_cluster_gain_is_not_applicable_on_one_app_cpu() {
    let r = claim("2b", "cluster-gain", &real("2b"), Some(&real("2a")));
    assert_eq!(r.verdict, ClaimVerdict::NotApplicable, "{r:?}");
    // Edited 2b copy with cpu_layout.app "1-2" (knee 300 as recorded):
    let b = edited("2b", "layout");
    // real 2a has no knee up to 250 rps here: nothing to divide by
    let r = claim("2b", "cluster-gain", &b, Some(&real("2a")));
    fails(&r);
    assert!(r.reason.unwrap().contains("no knee"));
    // against a real run with a knee at 210 (exp1): 300 / 210 = 1.43, inside 1.2-1.8
    holds(&claim("2b", "cluster-gain", &b, Some(&real("exp1"))));
    // against a knee at 150 (exp2-mc80): 2.0, outside
    fails(&claim("2b", "cluster-gain", &b, Some(&real("exp2-mc80"))));
}

// ---- Node: open vs closed model (3b, 3c) ------------------------------------------------

#[test]
fn node_3b_open_model_loses_requests_3c_closed_does_not() {
    let (b, c) = (real("3b"), real("3c"));
    holds(&claim("3b", "open-loses", &b, None)); // 7.2 % failed or dropped at 300
    fails(&claim("3b", "open-loses", &c, None));
    holds(&claim("3c", "closed-no-loss", &c, None));
    fails(&claim("3c", "closed-no-loss", &b, None));
    holds(&claim("3c", "open-vs-closed", &c, Some(&b)));
    // exp1's top step lost nothing either: no difference to show
    fails(&claim("3c", "open-vs-closed", &c, Some(&real("exp1"))));
}

#[test]
fn node_3c_below_nominal_not_reproduced_here() {
    // Real 3c: 274.8 req/s of 293.4 nominal at 60 VUs (94 %): /cpu is cheaper here.
    let r = claim("3c", "closed-below-nominal", &real("3c"), None);
    fails(&r);
    assert!(r.measured.starts_with("0.9366 at 60"), "{}", r.measured);
    // Edited copy: the 60-VU closed row's achieved rate set to the article's 169.3.
    holds(&claim(
        "3c",
        "closed-below-nominal",
        &edited("3c", "achieved"),
        None,
    ));
}
