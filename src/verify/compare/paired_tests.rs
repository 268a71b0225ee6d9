//! Unit tests of `paired`: the paired t on small inputs computed by hand, the boundary, and
//! every way rounds fall back to the unpaired test.
use super::*;
use crate::rundir::batch::CompareSide::{self, A, B};
use crate::verify::compare::stats::t_two_sided_p;

fn tag(batch: &str, side: CompareSide, pair: u32) -> CompareTag {
    CompareTag {
        batch: batch.into(),
        side,
        pair,
        declared: Vec::new(),
        design: Default::default(),
    }
}

fn pairing_of(a: &[CompareTag], b: &[CompareTag]) -> Pairing {
    let a: Vec<Option<&CompareTag>> = a.iter().map(Some).collect();
    let b: Vec<Option<&CompareTag>> = b.iter().map(Some).collect();
    pairing(&a, &b)
}

#[test]
fn the_paired_t_on_three_pairs_computed_by_hand() {
    // differences 0.02, 0.04, 0.06: mean 0.04, SD 0.02, standard error 0.02 / sqrt(3) =
    // 0.011547, t = 3.4641; with 2 df the two-sided p is 1 - t / sqrt(t² + 2) = 0.07418
    let (m, sd) = mean_sd(&[0.02, 0.04, 0.06]);
    assert!(
        (m - 0.04).abs() < 1e-12 && (sd - 0.02).abs() < 1e-12,
        "{m} {sd}"
    );
    let t = m / (sd / 3f64.sqrt());
    assert!((t - 3.464_101_6).abs() < 1e-6, "{t}");
    assert!((t_two_sided_p(t, 2.0) - 0.074_180).abs() < 1e-5);
    // the same differences on rounds with a large shared pair component: the paired test
    // sees only the differences
    let a = [1.0, 1.5, 0.7];
    let b = [1.02, 1.54, 0.76];
    let plan = PairedPlan::new(&Settings::default(), 3);
    let test = plan.test(&a, &b, 0.005).unwrap();
    let bound = plan.boundary(3);
    assert_eq!((bound.df, test.pairs, test.n_a), (2.0, Some(3), 3));
    assert!((test.boundary.t_crit - bound.t_crit).abs() < 1e-12);
    assert!((t_two_sided_p(bound.t_crit, 2.0) - plan.nominal_alpha).abs() < 1e-9);
    assert!((test.ratio - 0.04f64.exp()).abs() < 1e-12);
    assert!((test.sd_log_pct - 2.0).abs() < 1e-9);
    let half = bound.t_crit * 0.02 / 3f64.sqrt();
    assert!(
        (test.low - (0.04 - half).exp()).abs() < 1e-9,
        "{test:?} {half}"
    );
    assert!((test.high - (0.04 + half).exp()).abs() < 1e-9);
    // t 3.46 at 2 df is far from the boundary (its α' is a fraction of a percent): undecided
    assert_eq!(test.call, Call::Undecided);
    // the unpaired test on the same rounds: the pair component's spread (about 40 %) makes
    // its SD, and its interval is far wider
    let unpaired = Plan::new(&Settings::default(), 3)
        .test(&a, &b, 0.005)
        .unwrap();
    assert!(unpaired.sd_log_pct > 30.0, "{unpaired:?}");
    assert!(unpaired.high / unpaired.low > test.high / test.low);
    assert_eq!(unpaired.pairs, None);
}

#[test]
fn equal_differences_are_floored_and_one_pair_is_no_test() {
    let plan = PairedPlan::new(&Settings::default(), 10);
    let d = [0.2; 10];
    let (m, sd, half) = plan.interval(&d, 0.005).unwrap();
    assert!((m - 0.2).abs() < 1e-12);
    // the floor of a difference of two rounds: sqrt(2) x 0.5 %
    assert!((sd - 0.005 * 2f64.sqrt()).abs() < 1e-12, "{sd}");
    assert!((half - plan.boundary(10).t_crit * sd / 10f64.sqrt()).abs() < 1e-12);
    assert_eq!(plan.call(&d, 0.005), Some(Call::Higher));
    assert_eq!(plan.call(&d[..1], 0.005), None);
    assert!(plan.test(&[1.0], &[2.0], 0.005).is_none());
}

#[test]
fn the_paired_boundary_is_calibrated_for_its_own_degrees_of_freedom() {
    let s = Settings::default();
    let paired = PairedPlan::new(&s, 10);
    let unpaired = Plan::new(&s, 10);
    // 9 looks: between Bonferroni and one look
    let share = 0.01 * super::super::sequential::CALIBRATION_SHARE;
    let a = paired.nominal_alpha;
    assert!(a > share / 9.0 && a < share, "{a}");
    assert_eq!(PairedPlan::new(&s, 10).nominal_alpha, a, "cached");
    // n pairs: n - 1 df, against 2n - 2 unpaired
    assert_eq!(paired.boundary(5).df, 4.0);
    assert_eq!(unpaired.boundary(5, 5).df, 8.0);
    // one look: the level itself
    assert!(
        (PairedPlan::new(&Settings { max_rounds: 2, ..s }, 2).nominal_alpha - share).abs() < 1e-12
    );
    // rounds needed at +10 % with 4 % SD of the differences: more than 3 pairs, decided there
    let n = paired.rounds_needed(1.1f64.ln(), 0.04, 3).unwrap();
    assert!((4..=20).contains(&n), "{n}");
    let half = paired.crit_at(n - 1) * 0.04 / (n as f64).sqrt();
    assert_eq!(call(1.1f64.ln(), half, &s), Call::Higher);
}

#[test]
fn complete_pairs_of_one_batch_are_paired_in_pair_order() {
    // ABBA order recorded: B's rounds listed in another order than A's
    let a = [tag("b1", A, 1), tag("b1", A, 2), tag("b1", A, 3)];
    let b = [tag("b1", B, 2), tag("b1", B, 1), tag("b1", B, 3)];
    let p = pairing_of(&a, &b);
    assert_eq!(
        p,
        Pairing::Paired(vec![(0, 1), (1, 0), (2, 2)], vec![Design::Rounds; 3])
    );
    assert_eq!(p.text(), "paired over 3 pairs");
    // the sides given the other way round (`compare B A`) pair too
    assert_eq!(
        pairing_of(&b, &a),
        Pairing::Paired(vec![(1, 0), (0, 1), (2, 2)], vec![Design::Rounds; 3])
    );
    // the paired test uses the matched logs: B's logs reordered by pair
    let plan = Plan::new(&Settings::default(), 3);
    let t = p
        .test(&plan, &[1.0, 1.5, 0.7], &[1.54, 1.02, 0.76], 0.005)
        .unwrap();
    assert!(
        (t.ratio - 0.04f64.exp()).abs() < 1e-12 && t.pairs == Some(3),
        "{t:?}"
    );
}

#[test]
fn rounds_that_cannot_be_paired_fall_back_and_say_why() {
    let a = [tag("b1", A, 1), tag("b1", A, 2)];
    let b = [tag("b1", B, 1), tag("b1", B, 2)];
    let unpaired = |p: Pairing, want: &str| match p {
        Pairing::Unpaired(why) => assert!(why.contains(want), "{why} lacks {want}"),
        p => panic!("paired: {p:?}"),
    };
    // a round without a tag (a plain `perflab run` round, or an older run)
    let ta: Vec<Option<&CompareTag>> = vec![Some(&a[0]), None];
    let tb: Vec<Option<&CompareTag>> = b.iter().map(Some).collect();
    let p = pairing(&ta, &tb);
    assert!(
        p.text()
            .starts_with("unpaired: 1 round(s) without a pair number, not run by"),
        "{}",
        p.text()
    );
    // rounds of two batches
    let other = [tag("b1", B, 1), tag("b2", B, 2)];
    unpaired(pairing_of(&a, &other), "2 comparison batches (b1, b2)");
    // a round whose pair is missing on the other side
    let three = [tag("b1", B, 1), tag("b1", B, 2), tag("b1", B, 3)];
    unpaired(pairing_of(&a, &three), "B3 without the other side's round");
    let gap = [tag("b1", B, 1), tag("b1", B, 3)];
    unpaired(pairing_of(&a, &gap), "A2, B3 without");
    // one pair number twice on a side, a side mixing sides, both sides one side
    let twice = [tag("b1", B, 1), tag("b1", B, 1)];
    unpaired(pairing_of(&a, &twice), "appears twice");
    let mixed = [tag("b1", B, 1), tag("b1", A, 2)];
    unpaired(pairing_of(&a, &mixed), "mixes");
    unpaired(pairing_of(&a, &a), "one side of the batch");
    // the unpaired fallback is the pooled test
    let plan = Plan::new(&Settings::default(), 2);
    let (la, lb) = ([1.0, 1.1], [1.2, 1.3]);
    let fallback = Pairing::Unpaired("x".into()).test(&plan, &la, &lb, 0.005);
    assert_eq!(fallback, plan.test(&la, &lb, 0.005));
}
