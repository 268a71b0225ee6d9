//! Every catalog file parses and validates, and carries the article's values.
use perflab::experiment::{Catalog, CatalogEntry, Experiment, Lab, Listen, Model, Script};
use std::path::Path;

fn catalog() -> Catalog {
    Catalog::load(
        Path::new("experiments"),
        &perflab::verify::quantities::Quantities,
    )
    .unwrap_or_else(|d| panic!("{}", perflab::experiment::diag::render(&d)))
}

fn exp<'a>(c: &'a Catalog, id: &str) -> &'a Experiment {
    match &c.get(id).unwrap_or_else(|| panic!("missing {id}")).entry {
        CatalogEntry::Experiment(e) => e,
        CatalogEntry::Group(_) => panic!("{id} is a group"),
    }
}

#[test]
fn every_file_parses_and_validates() {
    let c = catalog();
    let n = std::fs::read_dir("experiments")
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "yaml")
        })
        .count();
    assert_eq!(c.files.len(), n, "every yaml file is in the catalog");
    for f in c.files.values() {
        assert!(f.warnings.iter().all(|w| !w.is_error()));
    }
}

/// The stock catalog validates with no warning at all: where it keeps a value a check would
/// warn about (the article's VU caps, exp2-pgconn's workers beyond PostgreSQL's connections),
/// the file says why in the field the validator accepts (`load.vu_cap_reason`,
/// `stack.php.oversubscribe_reason`), and a reason the values no longer need is itself warned
/// about.
#[test]
fn the_stock_catalog_has_no_warnings() {
    let c = catalog();
    let warnings: Vec<String> = c.warnings().iter().map(|w| w.to_string()).collect();
    assert!(warnings.is_empty(), "{}", warnings.join("\n"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perflab"))
        .arg("validate")
        .env_remove("PERFLAB_CATALOG")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).ends_with(", 0 warning(s)\n"));
    // every reason is the explicit acceptance of a check that would otherwise speak
    let pgconn = exp(&c, "exp2-pgconn");
    let php = pgconn.stack.php.as_ref().unwrap();
    assert!(php.max_children > pgconn.stack.postgres.max_connections);
    assert!(php.oversubscribe_reason.is_some());
    for f in c.files.values() {
        if let CatalogEntry::Experiment(e) = &f.entry
            && e.load.vu_cap_reason.is_some()
        {
            let mut without = e.clone();
            without.load.vu_cap_reason = None;
            let d = perflab::experiment::validate::check_experiment(&f.path, &without);
            assert!(
                d.iter().any(|d| d.field == "load.max_vus"),
                "{}: vu_cap_reason accepts nothing",
                e.id
            );
        }
    }
}

/// The fields and severities `check_experiment` gives `e`.
fn diagnosed(e: &Experiment) -> Vec<(String, bool)> {
    perflab::experiment::validate::check_experiment(Path::new("x.yaml"), e)
        .iter()
        .map(|d| (d.field.clone(), d.is_error()))
        .collect()
}

#[test]
fn a_reason_accepts_its_check_and_a_stale_one_is_warned_about() {
    let c = catalog();
    let mut e = exp(&c, "exp1").clone();
    let reason = e.load.vu_cap_reason.take();
    // 600 VUs < 300 rps x 10 s: a warning without the reason, nothing with it
    assert_eq!(diagnosed(&e), [("load.max_vus".to_string(), false)]);
    e.load.vu_cap_reason = reason.clone();
    assert_eq!(diagnosed(&e), []);
    // below Little's law at the SLO: an error without the reason, accepted with it
    e.load.max_vus = 50;
    e.load.pre_vus = 50;
    assert_eq!(diagnosed(&e), []);
    e.load.vu_cap_reason = None;
    assert_eq!(diagnosed(&e), [("load.max_vus".to_string(), true)]);
    // a cap that covers both needs makes the reason stale
    e.load.max_vus = 3000;
    e.load.vu_cap_reason = reason;
    assert_eq!(diagnosed(&e), [("load.vu_cap_reason".to_string(), false)]);
    // more persistent workers than connections
    let mut p = exp(&c, "exp2-pgconn").clone();
    p.load.max_vus = 1500;
    p.load.vu_cap_reason = None;
    assert_eq!(diagnosed(&p), []);
    let why = p.stack.php.as_mut().unwrap().oversubscribe_reason.take();
    assert_eq!(
        diagnosed(&p),
        [("stack.php.max_children".to_string(), false)]
    );
    let php = p.stack.php.as_mut().unwrap();
    php.oversubscribe_reason = why;
    php.max_children = 20;
    assert_eq!(
        diagnosed(&p),
        [("stack.php.oversubscribe_reason".to_string(), false)]
    );
}

#[test]
fn covers_the_spec_entries() {
    let c = catalog();
    for id in [
        "exp0",
        "exp1",
        "exp2-mc5",
        "exp2-mc80",
        "exp12",
        "exp2-pgconn",
        "exp3-n5",
        "exp3-n10",
        "exp3-n40",
        "exp3sat-n5",
        "exp3sat-n10",
        "fail-unix",
        "diag",
        "diag-acc",
        "php-smoke",
        "1a",
        "1b",
        "1c",
        "2a",
        "2b",
        "3a",
        "3b",
        "3c",
        "node-smoke",
        "demo-open",
        "demo-closed",
        "php",
        "node",
        "all",
    ] {
        assert!(c.get(id).is_some(), "catalog lacks {id}");
    }
}

#[test]
fn php_lab_values_match_the_article() {
    let c = catalog();
    let e1 = exp(&c, "exp1");
    let php = e1.stack.php.as_ref().unwrap();
    assert_eq!(
        (php.max_children, php.listen, php.backlog, php.persistent),
        (20, Listen::Tcp, 511, true)
    );
    assert_eq!(e1.load.steps, vec![60, 90, 120, 150, 180, 210, 240, 300]);
    assert_eq!(
        (
            e1.load.hold_s,
            e1.load.slo_p95_ms,
            e1.load.pre_vus,
            e1.load.max_vus,
            e1.load.timeout_s
        ),
        (20, 200.0, 600, 600, 10)
    );
    assert_eq!(
        (e1.load.script, e1.load.model, e1.load.abort),
        (Script::Stepped, Model::Open, true)
    );
    let e0 = exp(&c, "exp0");
    assert!(!e0.stack.php.as_ref().unwrap().persistent);
    assert_eq!(e0.load.steps, vec![20, 40, 60]);
    let pg = exp(&c, "exp2-pgconn");
    assert_eq!(pg.stack.php.as_ref().unwrap().max_children, 120);
    assert_eq!(pg.stack.postgres.max_connections, 100);
    assert_eq!(
        (pg.load.steps.clone(), pg.load.abort),
        (vec![50, 100, 150], false)
    );
    assert_eq!(
        exp(&c, "exp2-mc5").stack.php.as_ref().unwrap().max_children,
        5
    );
    assert_eq!(
        exp(&c, "exp2-mc80")
            .stack
            .php
            .as_ref()
            .unwrap()
            .max_children,
        80
    );
    for (id, n) in [("exp3-n5", 5), ("exp3-n10", 10), ("exp3-n40", 40)] {
        let e = exp(&c, id);
        assert_eq!(
            (
                e.load.endpoint.as_str(),
                e.stack.php.as_ref().unwrap().max_children
            ),
            ("/api/slow", n)
        );
    }
    let sat = exp(&c, "exp3sat-n5");
    assert_eq!(
        (sat.load.steps.clone(), sat.load.abort),
        (vec![60, 90], false)
    );
    let fu = exp(&c, "fail-unix");
    assert_eq!(
        (
            fu.stack.php.as_ref().unwrap().listen,
            fu.load.hold_s,
            fu.load.abort
        ),
        (Listen::Unix, 15, false)
    );
    assert_eq!(fu.load.steps.last(), Some(&600));
    let acc = exp(&c, "diag-acc");
    assert!(acc.stack.php.as_ref().unwrap().access_log);
    assert_eq!(
        (
            acc.load.endpoint.as_str(),
            acc.stack.php.as_ref().unwrap().max_children
        ),
        ("/api/slow", 10)
    );
    for id in ["diag-tcp", "diag-unix"] {
        assert_eq!(
            (exp(&c, id).load.hold_s, exp(&c, id).load.abort),
            (15, false)
        );
    }
}

#[test]
fn node_lab_values_match_the_article() {
    let c = catalog();
    let a = exp(&c, "1a");
    assert_eq!(a.load.steps, vec![100, 150, 200, 225, 250, 275, 300]);
    assert_eq!(
        (
            a.load.ramp_s,
            a.load.hold_s,
            a.load.warmup_s,
            a.load.warmup_rps
        ),
        (8, 22, 20, 20)
    );
    assert_eq!(
        (
            a.load.slo_p95_ms,
            a.load.pre_vus,
            a.load.max_vus,
            a.load.timeout_s
        ),
        (100.0, 100, 400, 5)
    );
    assert!(a.stack.postgres.prewarm && a.stack.postgres.xact_delta);
    let n = a.stack.node.as_ref().unwrap();
    assert_eq!(
        (n.processes, n.pool_max, n.pg_conn_timeout_ms),
        (1, 10, 3000)
    );
    assert_eq!(
        exp(&c, "1b").load.steps,
        vec![200, 300, 350, 400, 450, 500, 550]
    );
    let c1 = exp(&c, "1c");
    assert_eq!(
        (c1.load.steps.clone(), c1.load.slo_p95_ms),
        (vec![300, 550, 600], 2000.0)
    );
    assert_eq!(c1.stack.node.as_ref().unwrap().pg_conn_timeout_ms, 1000);
    assert!(c1.load.vu_cap_reason.is_some());
    assert_eq!(
        exp(&c, "2a").load.steps,
        vec![50, 100, 125, 150, 175, 200, 250]
    );
    let b2 = exp(&c, "2b");
    assert_eq!(
        (
            b2.stack.node.as_ref().unwrap().processes,
            b2.load.steps.clone()
        ),
        (2, vec![100, 200, 250, 300, 350, 400, 450])
    );
    for (id, abort) in [("3a", true), ("3c", false)] {
        let e = exp(&c, id);
        assert_eq!(
            (e.load.model, e.load.abort, e.load.think_time_s),
            (Model::Closed, abort, Some(0.2))
        );
        assert_eq!(e.load.steps, vec![10, 20, 30, 40, 50, 60]);
    }
    let b3 = exp(&c, "3b");
    assert_eq!(
        (b3.load.model, b3.load.abort, b3.load.steps.clone()),
        (Model::Open, false, vec![50, 100, 150, 200, 250, 300])
    );
    let smoke = exp(&c, "node-smoke");
    assert_eq!(
        smoke.load.ramp_s + smoke.load.hold_s + smoke.load.warmup_s,
        7,
        "the article's smoke runs 7 s"
    );
}

#[test]
fn demo_lab_values_match_the_seed() {
    let c = catalog();
    let o = exp(&c, "demo-open");
    assert_eq!(
        (o.lab, o.load.endpoint.as_str(), o.load.model),
        (Lab::Demo, "/work", Model::Open)
    );
    assert_eq!(o.load.steps, vec![100, 200, 300, 400, 500, 600]);
    let d = o.stack.demo.as_ref().unwrap();
    assert_eq!((d.workers, d.service_ms), (16, 40));
    let cl = exp(&c, "demo-closed");
    assert_eq!(cl.load.model, Model::Closed);
    let z = cl.load.think_time_s.unwrap();
    let nominal_max = *cl.load.steps.last().unwrap() as f64 / (z + 0.040);
    assert!(nominal_max > 400.0, "nominal rate past 400: {nominal_max}");
}

#[test]
fn groups_expand_in_order() {
    let c = catalog();
    let ids = |g: &str| {
        c.expand(g)
            .unwrap()
            .iter()
            .map(|e| e.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids("exp12"), ["exp2-mc5", "exp1", "exp2-mc80"]);
    assert_eq!(
        ids("diag"),
        ["diag-tcp", "diag-unix", "diag-tcp", "diag-unix"]
    );
    assert_eq!(
        ids("node"),
        ["node-smoke", "1a", "1b", "1c", "2a", "2b", "3a", "3b", "3c"]
    );
    let all = ids("all");
    assert!(all.contains(&"exp0".to_string()) && all.contains(&"3c".to_string()));
    assert!(all.iter().all(|i| !i.starts_with("demo")));
    assert_eq!(c.lab_of("all"), "mixed");
    assert_eq!(c.lab_of("exp12"), "php");
}

#[test]
fn group_cycles_are_rejected() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("a.yaml"),
        "kind: group\nid: a\ndescription: x\nmembers: [b]\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("b.yaml"),
        "kind: group\nid: b\ndescription: x\nmembers: [a]\n",
    )
    .unwrap();
    let err = Catalog::load(d.path(), &perflab::verify::quantities::Quantities).unwrap_err();
    assert!(
        err.iter().any(|e| e.message.contains("group cycle")),
        "{err:?}"
    );
}

#[test]
fn a_file_that_is_not_a_mapping_is_rejected() {
    let p = Path::new("x.yaml");
    let err = perflab::experiment::catalog::parse_entry(
        p,
        "- a\n- b\n",
        &perflab::verify::quantities::Quantities,
    )
    .unwrap_err();
    assert!(err[0].message.contains("must be a YAML mapping"), "{err:?}");
    let err = perflab::experiment::catalog::parse_entry(
        p,
        "kind: group\nid: [\n",
        &perflab::verify::quantities::Quantities,
    )
    .unwrap_err();
    assert!(err[0].message.starts_with("malformed YAML"), "{err:?}");
}
