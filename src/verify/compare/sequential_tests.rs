//! The sequential test's unit tests (`sequential.rs`).
use super::super::stats::t_two_sided_p;
use super::*;

/// The boundary for `n_a` and `n_b` rounds (each at least `FIRST_LOOK`) under a plan of
/// `max_rounds` a side at `confidence` (a plan of at least the rounds given).
fn boundary(n_a: usize, n_b: usize, max_rounds: usize, confidence: f64) -> Boundary {
    let s = Settings {
        confidence,
        max_rounds,
        ..Settings::default()
    };
    Plan::new(&s, n_a.max(n_b)).boundary(n_a, n_b)
}

fn logs(rng: &mut Rng, n: usize, mu: f64, sigma: f64) -> Vec<f64> {
    (0..n).map(|_| mu + sigma * rng.normal()).collect()
}

#[test]
fn the_boundary_lies_between_bonferroni_and_one_look() {
    let a = nominal_alpha(0.99, 10);
    // 9 looks: between Bonferroni and one look, and looser than Bonferroni since looks
    // correlate
    let share = 0.01 * CALIBRATION_SHARE;
    assert!(a > share / 9.0 * 1.2 && a < share * 0.6, "{a}");
    let one = 0.01 * CALIBRATION_SHARE;
    assert!(
        (nominal_alpha(0.99, 2) - one).abs() < 1e-12,
        "one look: the level itself"
    );
    // more looks, a stricter level per look; more confidence, stricter too
    assert!(nominal_alpha(0.99, 20) < a);
    assert!(nominal_alpha(0.999, 10) < a);
    assert_eq!(nominal_alpha(0.99, 10), a, "cached and deterministic");
    // the boundary at a look: 3 rounds a side under the default plan, t(4) at α'
    let b = boundary(3, 3, 10, 0.99);
    assert_eq!((b.df, b.looks, b.planned_rounds), (4.0, 9, 10));
    assert_eq!(b.nominal_alpha, a);
    assert!((t_two_sided_p(b.t_crit, 4.0) - a).abs() < 1e-9);
    // more rounds given than planned: the plan grows to them
    assert_eq!(boundary(12, 3, 10, 0.99).planned_rounds, 12);
}

/// Log-normal rounds with a known sigma: the interval covers the true ratio as often as its
/// level says, the pooled SD estimates sigma, and a large change is called at 10 rounds.
#[test]
fn known_sigma_log_normal_rounds() {
    let s = Settings::default();
    let plan = Plan::new(&s, 10);
    let sigma = 0.05;
    let mut rng = Rng::new(42);
    let (trials, mut covered, mut sd_sum) = (4000, 0, 0.0);
    for _ in 0..trials {
        let a = logs(&mut rng, 10, 2.0, sigma);
        let b = logs(&mut rng, 10, 2.0 + 0.02, sigma);
        let (d, sd, half) = plan.interval(&a, &b, 0.0).unwrap();
        covered += usize::from((d - 0.02).abs() <= half);
        sd_sum += sd * 100.0;
    }
    let level = plan.boundary(10, 10).level;
    let coverage = covered as f64 / trials as f64;
    // a level of 1 - α' ~ 0.997: at most ~0.3 % of intervals miss, give or take noise
    assert!(coverage >= level - 0.004, "coverage {coverage} < {level}");
    let mean_sd = sd_sum / trials as f64;
    // E[s] for 18 df is ~0.986 sigma
    assert!((mean_sd / 5.0 - 0.986).abs() < 0.02, "mean SD {mean_sd} %");
    // +20 % at 5 % noise, 10 rounds a side: called higher; the reverse lower
    let a = logs(&mut rng, 10, 2.0, sigma);
    let b = logs(&mut rng, 10, 2.0 + 1.2f64.ln(), sigma);
    assert_eq!(plan.call(&a, &b, 0.0), Some(Call::Higher));
    assert_eq!(plan.call(&b, &a, 0.0), Some(Call::Lower));
    assert_eq!(plan.call(&a[..1], &b, 0.0), None);
}

#[test]
fn the_calls_follow_the_interval() {
    let s = Settings::default();
    let ln = |x: f64| x.ln();
    // above 1 and at least +3 %: higher; above 1 but +2 %: not higher
    assert_eq!(call(ln(1.10), 0.05, &s), Call::Higher);
    assert_eq!(call(ln(1.02), 0.01, &s), Call::Within);
    assert_eq!(call(ln(1.025), 0.03, &s), Call::Undecided);
    assert_eq!(call(ln(0.90), 0.05, &s), Call::Lower);
    // within ±5 % is the same; "not detected" with a wide interval is not
    assert_eq!(call(0.0, 0.04, &s), Call::Within);
    assert_eq!(call(0.0, 0.08, &s), Call::Undecided);
}

#[test]
fn rounds_needed_shrink_the_interval_enough_to_decide() {
    let s = Settings::default();
    let plan = Plan::new(&s, 3);
    // +10 % at 5 % SD with 3 rounds a side: undecided now, decided at some n in 4..=20
    let n = plan.rounds_needed(1.1f64.ln(), 0.05, 3).unwrap();
    assert!((4..=20).contains(&n), "{n}");
    let half = plan.crit_at(2 * n - 2) * 0.05 * (2.0 / n as f64).sqrt();
    assert_eq!(call(1.1f64.ln(), half, &s), Call::Higher);
    // an estimate between the margin and the min effect, with the min effect set above
    // the margin, is never decided
    let odd = Settings {
        min_effect_pct: 8.0,
        ..s
    };
    let plan = Plan::new(&odd, 3);
    assert_eq!(plan.rounds_needed(1.06f64.ln(), 0.05, 3), None);
}

/// The false-alarm budget is split over the rows, then over each row's deciding signals:
/// rows x signals tests, each at its share, sum to at most 1 - confidence.
#[test]
fn the_budget_splits_over_rows_then_signals() {
    let s = Settings::default();
    assert!((s.per_signal().confidence - 0.995).abs() < 1e-12);
    let (row, f) = s.family(8);
    assert!((row.confidence - 0.99875).abs() < 1e-12);
    assert!((row.per_signal().confidence - f.signal_confidence).abs() < 1e-15);
    let tests = (f.rows * f.signals) as f64;
    assert!(tests * (1.0 - f.signal_confidence) <= 1.0 - s.confidence + 1e-15);
    assert_eq!(
        f.text(),
        "99 % over 8 rows (each row at 99.875 %, each of its 2 signals at 99.9375 %)"
    );
    assert_eq!(
        s.family(1).1.text(),
        "99 % (each of its 2 signals at 99.5 %)"
    );
    // a stricter share, a stricter boundary
    let plan = |s: &Settings| Plan::new(s, 10).nominal_alpha;
    assert!(plan(&s.per_signal()) < plan(&s) * 0.6);
}

#[test]
fn settings_out_of_range_are_named() {
    let s = Settings {
        confidence: 1.0,
        ..Settings::default()
    };
    assert!(s.check().unwrap_err().starts_with("--confidence 1:"));
    let s = Settings {
        max_rounds: 1,
        ..Settings::default()
    };
    assert!(s.check().unwrap_err().contains("--max-rounds 1"));
    assert!(Settings::default().check().is_ok());
}
