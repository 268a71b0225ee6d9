//! What `compare` refuses before it compares: a side holding one run twice (or a run on both
//! sides), a side mixing experiments, rounds of two experiments (one run a side may still show
//! two experiments' steps side by side), and sides whose rounds differ in more than the
//! declared difference. Within a side the rounds share one configuration (`config::Config`:
//! suite, `--set` overrides, `--quick`, `--fit`, an unfitted run's resolved stack and load);
//! between the sides only the suite and the `--set` overrides (an injected `burn_us` among
//! them, and the stack they resolve to) may differ. Pure: the message names the runs.
use super::rounds::Run;
use crate::verify::config::Config;
use std::collections::BTreeMap;

fn config(r: &Run) -> Config {
    Config::of(r.2)
}

/// Ok when the two sides (neither empty) can be compared, else why not (naming the runs).
pub(crate) fn check(a: &[Run], b: &[Run]) -> Result<(), String> {
    if a.is_empty() || b.is_empty() {
        return Err("a side without runs".into());
    }
    let sides = [("A", a), ("B", b)];
    // one experiment a side; two experiments only side by side, one run each (no verdict)
    for (name, side) in sides {
        let exp = &side[0].2.experiment_id;
        if let Some(r) = side.iter().find(|r| &r.2.experiment_id != exp) {
            return Err(format!(
                "side {name}'s run {} is experiment {}, but {} is {exp}: a side's rounds must be of one experiment",
                r.0, r.2.experiment_id, side[0].0
            ));
        }
    }
    let (ea, eb) = (&a[0].2.experiment_id, &b[0].2.experiment_id);
    if ea != eb && (a.len() > 1 || b.len() > 1) {
        return Err(format!(
            "A is experiment {ea} ({}) and B is {eb} ({}): a verdict compares rounds of one experiment; give one run a side to see two experiments' steps side by side",
            a[0].0, b[0].0
        ));
    }
    // each run once (a copied run directory is the same run: same run id)
    let mut seen: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
    for (name, side) in sides {
        for r in side {
            let Some((other_side, other)) = seen.insert(&r.2.run_id, (name, r.0)) else {
                continue;
            };
            let where_ = if other_side == name {
                let list: Vec<&str> = side.iter().map(|r| r.0).collect();
                format!("twice in side {name} ({})", list.join(","))
            } else {
                format!("on both sides (A: {other}, B: {})", r.0)
            };
            return Err(format!(
                "the run {} is {where_}: each round must be a different run",
                r.0
            ));
        }
    }
    // one configuration a side
    for (name, side) in sides {
        one_configuration(name, side)?;
    }
    // between the sides, only the suite and --set may differ
    let (ca, cb) = (config(&a[0]), config(&b[0]));
    if (ca.quick, ca.fitted) != (cb.quick, cb.fitted) {
        return Err(format!(
            "A ({}: {}) and B ({}: {}) differ in --quick or --fit: the sides may differ only in the suite and --set overrides",
            a[0].0,
            ca.describe(),
            b[0].0,
            cb.describe()
        ));
    }
    Ok(())
}

/// Ok when every round of side `name` has the first one's configuration (image build
/// included), else why not, naming the two rounds and what differs.
pub(crate) fn one_configuration(name: &str, side: &[Run]) -> Result<(), String> {
    let Some(first) = side.first() else {
        return Ok(());
    };
    let c0 = config(first);
    if let Some(r) = side.iter().find(|r| config(r) != c0) {
        let c = config(r);
        let changes = c0.build_changes(&c);
        let build = match changes.is_empty() {
            true => String::new(),
            false => format!(" [{}]", changes.join("; ")),
        };
        return Err(format!(
            "side {name} mixes configurations: {} and {} differ in {}{build} ({} has {}, {} has {}); a side's rounds must share one configuration (rounds of another image build never pool: rebuild nothing within a side, or compare the builds as A and B)",
            first.0,
            r.0,
            c0.differences(&c).join(", "),
            first.0,
            c0.describe(),
            r.0,
            c.describe()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::model::Report;
    use crate::rundir::Manifest;

    fn round(dir: &str) -> (Report, Manifest) {
        let path = format!(
            "{}/tests/fixtures/compare/{dir}",
            env!("CARGO_MANIFEST_DIR")
        );
        let l = crate::rundir::Layout::new(path);
        let read = |f: std::path::PathBuf| std::fs::read_to_string(f).unwrap();
        (
            crate::rundir::report::parse(&read(l.report_json())).unwrap(),
            Manifest::parse(&read(l.manifest())).unwrap(),
        )
    }

    #[test]
    fn the_sides_must_differ_only_in_what_was_declared() {
        let (r1, m1) = round("2a-base/2a/20261130T222220Z-r1");
        let (r2, m2) = round("2a-base/2a/20261130T222301Z-r2");
        let (b1, n1) = round("2a-burn/2a/20261130T222517Z-r1");
        let (b2, n2) = round("2a-burn/2a/20261130T222600Z-r2");
        let (e1, f1) = round("exp1-base/exp1/20261130T222725Z-r1");
        let a: Vec<Run> = vec![("a1", &r1, &m1), ("a2", &r2, &m2)];
        let b: Vec<Run> = vec![("b1", &b1, &n1), ("b2", &b2, &n2)];
        // the declared difference (burn_us) between the sides is fine
        assert_eq!(check(&a, &b), Ok(()));
        let twice: Vec<Run> = vec![("a1", &r1, &m1), ("a1 again", &r1, &m1)];
        let e = check(&twice, &b).unwrap_err();
        assert!(
            e.starts_with("the run a1 again is twice in side A (a1,a1 again)"),
            "{e}"
        );
        let both: Vec<Run> = vec![("b1", &b1, &n1), ("a2", &r2, &m2)];
        assert!(
            check(&a, &both)
                .unwrap_err()
                .contains("on both sides (A: a2, B: a2)")
        );
        let mixed: Vec<Run> = vec![("b1", &b1, &n1), ("e1", &e1, &f1)];
        assert!(
            check(&a, &mixed)
                .unwrap_err()
                .contains("side B's run e1 is experiment exp1")
        );
        let config: Vec<Run> = vec![("a1", &r1, &m1), ("b2", &b2, &n2)];
        assert!(
            check(&config, &b[..1])
                .unwrap_err()
                .starts_with("side A mixes configurations")
        );
        // one configuration with the key spelt short is one configuration; a stack changed
        // under the same keys (the YAML edited between rounds) is not
        let mut short = n2.clone();
        short.overrides = vec!["burn_us = 1000".into()];
        let spelt: Vec<Run> = vec![("b1", &b1, &n1), ("b2", &b2, &short)];
        assert_eq!(check(&a, &spelt), Ok(()));
        let mut edited = n2.clone();
        edited.experiment.stack.node.as_mut().unwrap().pool_max += 1;
        let moved: Vec<Run> = vec![("b1", &b1, &n1), ("b2", &b2, &edited)];
        let e = check(&a, &moved).unwrap_err();
        assert!(
            e.starts_with("side B mixes configurations: b1 and b2 differ in stack ("),
            "{e}"
        );
        // a round of another build (its Node.js changed, or its image rebuilt under the same
        // tag) never pools with the side's other rounds, and the message says what moved
        let mut newer = m2.clone();
        newer
            .components
            .insert("node-app.node".into(), "20.19.999".into());
        let mixed: Vec<Run> = vec![("a1", &r1, &m1), ("a2", &r2, &newer)];
        let e = check(&mixed, &b).unwrap_err();
        assert!(
            e.starts_with("side A mixes configurations: a1 and a2 differ in versions [version node-app.node: v20.19.2 -> 20.19.999]"),
            "{e}"
        );
        let mut rebuilt = m2.clone();
        let image = rebuilt.images.get_mut("node-app").unwrap();
        *image = image.replace("sha256:", "sha256:ff");
        let e = check(&[("a1", &r1, &m1), ("a2", &r2, &rebuilt)], &b).unwrap_err();
        assert!(e.contains("differ in images [image node-app: "), "{e}");
        // the host's Docker Engine is not the build
        let mut engine = m2.clone();
        engine
            .components
            .insert("docker-engine".into(), "99.0".into());
        assert_eq!(check(&[("a1", &r1, &m1), ("a2", &r2, &engine)], &b), Ok(()));
        // two experiments: one run a side only
        assert_eq!(check(&a[..1], &[("e1", &e1, &f1)]), Ok(()));
        assert!(
            check(&a, &[("e1", &e1, &f1)])
                .unwrap_err()
                .contains("one experiment")
        );
    }
}
