//! Stand-alone lab experiments for `perflab up` / `perflab smoke` when no catalog entry is
//! given, and `--set key=value` overrides of their stack settings.
use crate::error::InvalidInput;
use crate::experiment::*;

/// A stack-only experiment for `lab` with the article's default settings.
pub fn lab_experiment(lab: Lab) -> Experiment {
    let mut stack = StackSettings::default();
    let (endpoint, script) = match lab {
        Lab::Php => {
            stack.php = Some(PhpSettings {
                max_children: 20,
                listen: Listen::Tcp,
                backlog: 511,
                persistent: true,
                access_log: false,
                warmup_requests: 200,
            });
            ("/api/db", Script::Stepped)
        }
        Lab::Node => {
            stack.node = Some(NodeSettings {
                processes: 1,
                pool_max: 10,
                pg_conn_timeout_ms: 3000,
            });
            ("/db", Script::Breakpoint)
        }
        Lab::Demo => {
            stack.demo = Some(DemoSettings {
                workers: 16,
                service_ms: 40,
            });
            ("/work", Script::Stepped)
        }
    };
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
        },
    }
}

/// The keys `--set` accepts.
pub const SET_KEYS: &[&str] = &[
    "postgres.max_connections",
    "php.max_children",
    "php.listen",
    "php.backlog",
    "php.persistent",
    "php.access_log",
    "node.processes",
    "node.pool_max",
    "node.pg_conn_timeout_ms",
    "demo.workers",
    "demo.service_ms",
];

/// Apply one `key=value` override to the stack settings of `exp`.
pub fn apply_set(exp: &mut Experiment, kv: &str) -> Result<(), InvalidInput> {
    let (k, v) = kv.split_once('=').ok_or_else(|| {
        InvalidInput(format!(
            "--set `{kv}`: expected key=value, e.g. php.max_children=5"
        ))
    })?;
    let (k, v) = (k.trim(), v.trim());
    let num = |v: &str| -> Result<u32, InvalidInput> {
        v.parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| InvalidInput(format!("--set {k}={v}: expected a positive integer")))
    };
    let boolean = |v: &str| -> Result<bool, InvalidInput> {
        match v {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err(InvalidInput(format!(
                "--set {k}={v}: expected true or false"
            ))),
        }
    };
    let section = |present: bool| -> Result<(), InvalidInput> {
        if present {
            Ok(())
        } else {
            Err(InvalidInput(format!(
                "--set {k}: the {} lab has no `{}` settings",
                exp.lab.as_str(),
                k.split('.').next().unwrap_or("")
            )))
        }
    };
    let lab = exp.lab;
    let s = &mut exp.stack;
    match k {
        "postgres.max_connections" => {
            section(lab != Lab::Demo)?;
            s.postgres.max_connections = num(v)?
        }
        k if k.starts_with("php.") => {
            section(s.php.is_some())?;
            let p = s.php.as_mut().unwrap();
            match k {
                "php.max_children" => p.max_children = num(v)?,
                "php.backlog" => p.backlog = num(v)?,
                "php.persistent" => p.persistent = boolean(v)?,
                "php.access_log" => p.access_log = boolean(v)?,
                "php.listen" => {
                    p.listen = match v {
                        "tcp" => Listen::Tcp,
                        "unix" => Listen::Unix,
                        _ => {
                            return Err(InvalidInput(format!(
                                "--set php.listen={v}: expected tcp or unix"
                            )));
                        }
                    }
                }
                _ => return Err(unknown(k)),
            }
        }
        k if k.starts_with("node.") => {
            section(s.node.is_some())?;
            let n = s.node.as_mut().unwrap();
            match k {
                "node.processes" => n.processes = num(v)?,
                "node.pool_max" => n.pool_max = num(v)?,
                "node.pg_conn_timeout_ms" => n.pg_conn_timeout_ms = num(v)?,
                _ => return Err(unknown(k)),
            }
        }
        k if k.starts_with("demo.") => {
            section(s.demo.is_some())?;
            let d = s.demo.as_mut().unwrap();
            match k {
                "demo.workers" => d.workers = num(v)?,
                "demo.service_ms" => d.service_ms = num(v)?,
                _ => return Err(unknown(k)),
            }
        }
        _ => return Err(unknown(k)),
    }
    Ok(())
}

fn unknown(k: &str) -> InvalidInput {
    let hint = SET_KEYS
        .iter()
        .max_by(|a, b| strsim::jaro_winkler(k, a).total_cmp(&strsim::jaro_winkler(k, b)))
        .unwrap();
    InvalidInput(format!(
        "--set: unknown key `{k}` (did you mean `{hint}`?); keys: {}",
        SET_KEYS.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides() {
        let mut e = lab_experiment(Lab::Php);
        apply_set(&mut e, "php.max_children=5").unwrap();
        apply_set(&mut e, "php.listen=unix").unwrap();
        apply_set(&mut e, "php.persistent=false").unwrap();
        let p = e.stack.php.as_ref().unwrap();
        assert_eq!(
            (p.max_children, p.listen, p.persistent),
            (5, Listen::Unix, false)
        );
        assert!(apply_set(&mut e, "node.processes=2").is_err());
        assert!(apply_set(&mut e, "php.max_children=0").is_err());
        let err = apply_set(&mut e, "php.max_childs=3").unwrap_err();
        assert!(err.0.contains("php.max_children"), "{}", err.0);
        let mut d = lab_experiment(Lab::Demo);
        assert!(apply_set(&mut d, "postgres.max_connections=10").is_err());
        apply_set(&mut d, "demo.workers=4").unwrap();
        assert_eq!(d.stack.demo.unwrap().workers, 4);
    }
}
