//! Stand-alone lab experiments for `perflab up` / `perflab smoke` when no catalog entry is
//! given (overrides go through `experiment::overrides`, as for `perflab run`).
use crate::experiment::*;

/// A stack-only experiment for `lab` with the article's default settings (the descriptor's).
pub fn lab_experiment(lab: Lab) -> Experiment {
    let d = crate::lab::descriptor(lab).defaults();
    let (stack, endpoint, script) = (d.stack, d.endpoint, d.script);
    Experiment {
        kind: Default::default(),
        notes: None,
        id: format!("{}-lab", lab.as_str()),
        lab,
        description: format!(
            "the {} lab with default settings (perflab up / smoke)",
            lab.as_str()
        ),
        finding: String::new(),
        reference: None,
        stack,
        expect: Vec::new(),
        fit: None,
        load: LoadSettings {
            script,
            model: Model::Open,
            endpoint: endpoint.into(),
            steps: vec![10],
            hold_s: 10,
            ramp_s: 0,
            warmup_s: 0,
            warmup_rps: 20,
            slo_p95_ms: 200.0,
            slo_p99_ms: None,
            error_budget: 0.01,
            abort: true,
            abort_p95_ms: None,
            vu_cap_reason: None,
            pre_vus: 10,
            max_vus: 10,
            timeout_s: 10,
            think_time_s: None,
            recover_rps: None,
            recover_s: None,
            pause: None,
            actions: Vec::new(),
            drop: None,
            trigger: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_defaults_take_run_style_overrides() {
        let e = lab_experiment(Lab::Php);
        let sets: Vec<String> = [
            "max_children=5",
            "php.listen=unix",
            "stack.php.persistent=false",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (e, _) = overrides::apply(&e, &sets).unwrap();
        let p = e.stack.php.as_ref().unwrap();
        assert_eq!(
            (p.max_children, p.listen, p.persistent),
            (5, Listen::Unix, false)
        );
        for bad in ["node.processes=2", "max_children=0", "php.max_childs=3"] {
            assert!(
                overrides::apply(&e, &[bad.to_string()]).is_err(),
                "{bad} must be refused"
            );
        }
        let d = lab_experiment(Lab::Demo);
        assert!(overrides::apply(&d, &["postgres.max_connections=10".into()]).is_err());
        let (d, _) = overrides::apply(&d, &["demo.workers=4".into()]).unwrap();
        assert_eq!(d.stack.demo.unwrap().workers, 4);
    }
}
