//! When an experiment's timed actions run (`load.actions`: a php-fpm reload during the
//! collapse): seconds from k6's start, from the window each names, `--quick` scaling the
//! offset with the window so an action keeps its place in it.
use serde::{Deserialize, Serialize};

use crate::experiment::schema::{ActionWindow, LoadSettings};

/// One action of a load, as planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionPlan {
    pub name: String,
    /// The role whose container runs it.
    pub role: String,
    /// The command (argv).
    pub exec: Vec<String>,
    /// Seconds from k6's start (t = 0 of the plan's timeline) to the action.
    pub start_s: f64,
    /// The window it falls in, and the seconds into it (scaled under `--quick`).
    pub during: ActionWindow,
    pub after_s: f64,
}

/// The actions of `l` on the timeline, `window_of` giving the (start, end) seconds of the
/// window each names (already validated: each names a window the load has, its offset within
/// the published window's length); one whose window the timeline lacks is left out.
pub(crate) fn plan(
    l: &LoadSettings,
    window_of: impl Fn(ActionWindow) -> Option<(u32, u32)>,
) -> Vec<ActionPlan> {
    l.actions
        .iter()
        .filter_map(|a| {
            let published = match a.during {
                ActionWindow::Top => l.hold_s,
                ActionWindow::Recover => l.recover_s.unwrap_or(0),
            };
            let (start, end) = window_of(a.during)?;
            let len = f64::from(end.saturating_sub(start));
            let scale = if published > 0 {
                len / f64::from(published)
            } else {
                1.0
            };
            let after_s = (a.after_s * scale).clamp(0.0, len);
            Some(ActionPlan {
                name: a.name.clone(),
                role: a.role.clone(),
                exec: a.exec.clone(),
                start_s: f64::from(start) + after_s,
                during: a.during,
                after_s,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::plan::{PlanOptions, build};

    fn recover(after_s: f64, during: &str) -> crate::experiment::Experiment {
        let yaml = format!(
            "id: r\nlab: php\ndescription: d\nfinding: f\nstack: {{php: {{max_children: 5, listen: tcp, backlog: 511, persistent: true}}}}\n\
             load: {{script: stepped, endpoint: /api/slow, steps: [22, 90], hold_s: 20, \
             slo_p95_ms: 200, pre_vus: 10, max_vus: 900, timeout_s: 10, abort: false, \
             recover_rps: 22, recover_s: 60, actions: [{{name: reload, during: {during}, \
             after_s: {after_s}, role: php-fpm, exec: [sh, -c, 'kill -USR2 1'], why: w}}]}}\n"
        );
        serde_yaml::from_str(&yaml).unwrap()
    }

    /// An action in the recovery phase lands `after_s` into it; `--quick` keeps its place in
    /// the (shorter) phase; one in the top step lands in the last hold.
    #[test]
    fn an_action_lands_in_its_window_and_quick_keeps_its_place() {
        let full = build(&recover(30.0, "recover"), PlanOptions { quick: false });
        let w = full.windows.last().unwrap();
        let a = &full.actions[0];
        assert_eq!(a.start_s, f64::from(w.start_s) + 30.0, "{a:?} in {w:?}");
        assert_eq!((a.name.as_str(), a.role.as_str()), ("reload", "php-fpm"));
        assert_eq!(a.exec, ["sh", "-c", "kill -USR2 1"]);
        let quick = build(&recover(30.0, "recover"), PlanOptions { quick: true });
        let (q, qw) = (&quick.actions[0], quick.windows.last().unwrap());
        let len = f64::from(qw.end_s - qw.start_s);
        assert!(len < 60.0, "quick shortens the phase: {len}");
        assert!(
            (q.after_s - len / 2.0).abs() < 1e-9,
            "half-way stays half-way: {q:?}"
        );
        let top = build(&recover(10.0, "top"), PlanOptions { quick: false });
        let hold = &top.steps[1];
        assert_eq!(top.actions[0].start_s, f64::from(hold.hold_start_s) + 10.0);
    }
}
