//! How `perflab compare` makes its pairs (`--design`): whole rounds in ABBA order (the default),
//! or the two sides' stacks up side by side taking turns at each load level within one round
//! (`plan::turns`), where both stacks fit the host and the loads can take turns (`steps`, or
//! `auto`, which falls back to whole rounds and says why).
use crate::plan::Resolved;
use crate::rundir::batch::Design;

/// `--design`. Whole rounds by default: on the one host measured so far (a 2-CPU VM at a load
/// average of 6-9), pairs by turns were noisier than whole rounds (A/A 2a, 6 pairs each: SD of
/// the pairs' differences 13.2 % against 8.2 % at 50 rps) and broke at a lower level, so they
/// are asked for until a quiet host says otherwise (docs/regression.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Wanted {
    /// Turns where they can run, whole rounds otherwise.
    Auto,
    /// Turns, or bad input when they cannot run.
    Steps,
    /// Whole rounds.
    #[default]
    Rounds,
}

/// Both stacks' memory limits must fit in this share of the memory the host has available.
const MEMORY_SHARE: f64 = 0.8;

/// The design of one experiment's pairs and, for whole rounds, why. Err: `--design steps`
/// where turns cannot run (bad input, naming why).
pub(crate) fn choose(
    wanted: Wanted,
    (a, b): (&Resolved, &Resolved),
    fitted: bool,
    (app_cpus, available): (usize, Option<u64>),
) -> Result<(Design, Option<String>), String> {
    if wanted == Wanted::Rounds {
        return Ok((Design::Rounds, None));
    }
    let why = match fitted {
        true => Err(
            "--fit calibrates each stack under load, which two stacks cannot do by turns"
                .to_string(),
        ),
        false => crate::plan::turns::check(&a.plan, &b.plan)
            .and_then(|()| fits((a, b), app_cpus, available)),
    };
    match (why, wanted) {
        (Ok(()), _) => Ok((Design::Steps, None)),
        (Err(why), Wanted::Steps) => Err(format!(
            "{}: --design steps cannot run: {why}; leave --design out to run whole rounds",
            a.experiment.id
        )),
        (Err(why), _) => Ok((Design::Rounds, Some(why))),
    }
}

/// Both stacks' memory limits within [`MEMORY_SHARE`] of what the host has available.
fn fits(
    (a, b): (&Resolved, &Resolved),
    app_cpus: usize,
    available: Option<u64>,
) -> Result<(), String> {
    let need = |r: &Resolved| crate::stack::footprint::memory_bytes(&r.experiment, app_cpus);
    let need = need(a)? + need(b)?;
    let Some(available) = available else {
        return Err("the host's available memory is unknown (no /proc/meminfo)".into());
    };
    let mib = |v: f64| v / 1048576.0;
    if need as f64 > available as f64 * MEMORY_SHARE {
        return Err(format!(
            "the two stacks' memory limits ({:.0} MiB) exceed {:.0} % of the {:.0} MiB the host has available",
            mib(need as f64),
            MEMORY_SHARE * 100.0,
            mib(available as f64)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanOptions, build};

    fn resolved(id: &str, quick: bool) -> Resolved {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let q = &crate::verify::quantities::Quantities;
        let cat = crate::experiment::Catalog::load(&dir, q).expect("catalog loads");
        let e = cat.expand(id).unwrap()[0].clone();
        Resolved {
            plan: build(&e, PlanOptions { quick }),
            experiment: e,
            warnings: Vec::new(),
        }
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn turns_where_both_stacks_fit_rounds_otherwise_and_why() {
        let r = resolved("2a", true);
        let roomy = (2, Some(16 * GIB));
        assert_eq!(
            choose(Wanted::Auto, (&r, &r), false, roomy),
            Ok((Design::Steps, None))
        );
        let (d, why) = choose(Wanted::Auto, (&r, &r), false, (2, Some(GIB))).unwrap();
        assert_eq!(d, Design::Rounds);
        assert!(why.unwrap().contains("memory limits"));
        let err = choose(Wanted::Steps, (&r, &r), false, (2, Some(GIB))).unwrap_err();
        assert!(
            err.contains("--design steps cannot run") && err.contains("MiB"),
            "{err}"
        );
        let (d, why) = choose(Wanted::Auto, (&r, &r), true, roomy).unwrap();
        assert_eq!((d, why.unwrap().contains("--fit")), (Design::Rounds, true));
        assert_eq!(
            choose(Wanted::Rounds, (&r, &r), false, roomy),
            Ok((Design::Rounds, None))
        );
        assert_eq!(
            Wanted::default(),
            Wanted::Rounds,
            "turns are asked for (docs/regression.md)"
        );
        let (d, why) = choose(Wanted::Auto, (&r, &r), false, (2, None)).unwrap();
        assert_eq!(
            (d, why.unwrap().contains("unknown")),
            (Design::Rounds, true)
        );
    }

    #[test]
    fn loads_that_cannot_take_turns_run_whole_rounds() {
        let closed = resolved("demo-closed", true);
        let (d, why) =
            choose(Wanted::Auto, (&closed, &closed), false, (2, Some(64 * GIB))).unwrap();
        assert_eq!(d, Design::Rounds);
        assert!(why.unwrap().contains("closed"));
        let (a, mut b) = (resolved("2a", true), resolved("2a", true));
        b.plan.hold_s += 1;
        assert!(choose(Wanted::Steps, (&a, &b), false, (2, Some(64 * GIB))).is_err());
    }
}
