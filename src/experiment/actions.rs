//! `load.actions:`' checks: each timed action names a role of the experiment's lab, a command,
//! and an instant inside a window the load has (`top`: the last step's hold; `recover`: the
//! recovery phase, which must be there).
use super::diag::Diagnostic;
use super::schema::{ActionWindow, Experiment};
use std::path::Path;

/// The checks of every action of `e`, each error naming `load.actions[i].<field>`.
pub(crate) fn check_actions(file: &Path, e: &Experiment, d: &mut Vec<Diagnostic>) {
    let roles = crate::lab::descriptor(e.lab).info().roles;
    for (i, a) in e.load.actions.iter().enumerate() {
        let err = |field: &str, msg: String| {
            Diagnostic::error(file, format!("load.actions[{i}].{field}"), msg)
        };
        let same = e.load.actions.iter().filter(|b| b.name == a.name).count();
        if a.name.trim().is_empty() || same > 1 {
            d.push(
                err(
                    "name",
                    format!("`{}`: must be a name no other action has", a.name),
                )
                .help("name it for the report, e.g. `name: reload`"),
            );
        }
        if !roles.iter().any(|r| r.column() == a.role) {
            let names: Vec<&str> = roles.iter().map(|r| r.column()).collect();
            d.push(
                err(
                    "role",
                    format!("`{}` is not a role of the {} lab", a.role, e.lab.as_str()),
                )
                .help(format!("one of: {}", names.join(", "))),
            );
        }
        if a.exec.is_empty() || a.exec[0].trim().is_empty() {
            d.push(
                err("exec", "must name a command (argv)".into())
                    .help("e.g. `exec: [sh, -c, \"kill -USR2 1\"]` (php-fpm's graceful reload)"),
            );
        }
        let window = match a.during {
            ActionWindow::Top => Some(e.load.hold_s),
            ActionWindow::Recover => e.load.recover_s,
        };
        let Some(len) = window else {
            d.push(
                err("during", "`recover`: the load has no recovery phase".into())
                    .help("set load.recover_rps and load.recover_s, or use `during: top`"),
            );
            continue;
        };
        if !(a.after_s.is_finite() && a.after_s >= 0.0 && a.after_s <= f64::from(len)) {
            d.push(
                err(
                    "after_s",
                    format!("{} s: must lie within its window (0 to {len} s)", a.after_s),
                )
                .help("seconds from the start of the window `during` names"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(actions: &str, recover: bool) -> Experiment {
        let r = if recover {
            "recover_rps: 22, recover_s: 60, "
        } else {
            ""
        };
        let yaml = format!(
            "id: r\nlab: php\ndescription: d\nfinding: f\nstack: {{php: {{max_children: 5, listen: tcp, backlog: 511, persistent: true}}}}\n\
             load: {{script: stepped, endpoint: /api/slow, steps: [22, 90], hold_s: 20, \
             slo_p95_ms: 200, pre_vus: 10, max_vus: 900, timeout_s: 10, abort: false, {r}\
             actions: [{actions}]}}\n"
        );
        serde_yaml::from_str(&yaml).unwrap()
    }

    fn fields(e: &Experiment) -> Vec<String> {
        let mut d = Vec::new();
        check_actions(Path::new("x.yaml"), e, &mut d);
        d.iter().map(|d| d.field.clone()).collect()
    }

    const OK: &str = "{name: reload, during: recover, after_s: 0, role: fpm, exec: [sh, -c, 'kill -USR2 1'], why: w}";

    #[test]
    fn a_bad_action_is_named_by_its_field() {
        assert!(fields(&exp(OK, true)).is_empty());
        assert_eq!(fields(&exp(OK, false)), ["load.actions[0].during"]);
        let bad = "{name: reload, during: top, after_s: 21, role: nope, exec: [], why: w}";
        assert_eq!(
            fields(&exp(bad, true)),
            [
                "load.actions[0].role",
                "load.actions[0].exec",
                "load.actions[0].after_s"
            ]
        );
        let twice = format!("{OK}, {OK}");
        assert_eq!(
            fields(&exp(&twice, true)),
            ["load.actions[0].name", "load.actions[1].name"]
        );
    }
}
