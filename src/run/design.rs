//! How `perflab compare` makes its pairs (`--design`): whole rounds in ABBA order, or the two
//! sides' stacks up side by side taking turns at each load level within one round
//! (`plan::turns`, `steps`), or both loaded at once at half the rates each (`together`,
//! `plan::turns::together`), where both stacks fit the host and the loads can (`auto`, the
//! default, loads them together and falls back to whole rounds, saying why).
use crate::plan::Resolved;
use crate::rundir::batch::Design;

/// `--design`. `auto` by default: both sides loaded together where two stacks fit, whole
/// rounds otherwise. On the 2-CPU VM of 2026-12-06 the pairs' differences of the CPU signal
/// spread 1.1-2.4 % loaded together (five A/A batches of 2a) against 6.0 % by turns; whole
/// rounds read 6.0-6.8 % on the held-out batches of 2026-12-05 (docs/regression.md, "Pairs
/// loaded together").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Wanted {
    /// Both sides loaded together where they can run, whole rounds otherwise.
    #[default]
    Auto,
    /// Turns, or bad input when they cannot run.
    Steps,
    /// Both sides loaded at the same time on the same CPUs, each at half the plan's rates; bad
    /// input when two stacks cannot run side by side.
    Together,
    /// Whole rounds.
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
    let why = why.and_then(|()| match wanted {
        Wanted::Together | Wanted::Auto => crate::plan::turns::together(&a.experiment)
            .and(crate::plan::turns::together(&b.experiment))
            .map(|_| ()),
        _ => Ok(()),
    });
    match (why, wanted) {
        (Ok(()), Wanted::Together | Wanted::Auto) => Ok((Design::Together, None)),
        (Ok(()), _) => Ok((Design::Steps, None)),
        (Err(why), Wanted::Steps | Wanted::Together) => Err(format!(
            "{}: --design {} cannot run: {why}; leave --design out to run whole rounds",
            a.experiment.id,
            match wanted {
                Wanted::Steps => "steps",
                _ => "together",
            }
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
            Ok((Design::Together, None))
        );
        assert_eq!(
            choose(Wanted::Steps, (&r, &r), false, roomy),
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
            Wanted::Auto,
            "loaded together where they fit (docs/regression.md)"
        );
        assert_eq!(
            choose(Wanted::Together, (&r, &r), false, roomy),
            Ok((Design::Together, None))
        );
        let err = choose(Wanted::Together, (&r, &r), false, (2, Some(GIB))).unwrap_err();
        assert!(err.contains("--design together cannot run"), "{err}");
        let mut tiny = resolved("2a", true);
        tiny.experiment.load.steps = vec![1, 2];
        let err = choose(Wanted::Together, (&tiny, &tiny), false, roomy).unwrap_err();
        assert!(err.contains("merges"), "{err}");
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
