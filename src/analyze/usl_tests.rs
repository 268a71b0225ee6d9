//! Golden tests of the USL fit against the R package usl (smoeding/usl): its `tests/coef` data
//! and its `raytracer` data set (Gunther 2007, an SGI Origin 2000), with the coefficients and
//! 95 % intervals its `tests/confint.Rout.save` prints.
use super::*;

/// The R package usl's tests/coef.R: these points give α = 0.02, β = 0.02, γ = 1.00 (to 3
/// significant digits).
#[test]
fn the_r_package_coef_points_give_its_coefficients() {
    let pts = [
        (1.0, 1.0),
        (2.0, 1.8868),
        (4.0, 3.0769),
        (6.0, 3.5294),
        (8.0, 3.5398),
        (10.0, 3.3557),
    ];
    let f = fit(&pts).unwrap();
    let sig3 = |v: f64| format!("{v:.3}");
    assert_eq!(sig3(f.alpha.value), "0.020", "{f:?}");
    assert_eq!(sig3(f.beta.value), "0.020", "{f:?}");
    assert_eq!(sig3(f.gamma.value), "1.000", "{f:?}");
    // N_max = sqrt(0.98 / 0.02) = 7
    assert!((f.n_max.unwrap() - 7.0).abs() < 0.01, "{f:?}");
    assert_eq!((f.points, f.df), (6, 3));
}

/// data(raytracer) of the R package usl, read from its data/raytracer.rda.
const RAYTRACER: [(f64, f64); 11] = [
    (1.0, 20.0),
    (4.0, 78.0),
    (8.0, 130.0),
    (12.0, 170.0),
    (16.0, 190.0),
    (20.0, 200.0),
    (24.0, 210.0),
    (28.0, 230.0),
    (32.0, 260.0),
    (48.0, 280.0),
    (64.0, 310.0),
];

/// The package prints coef 0.0578, 0.0000, 21.8488 and confint alpha [0.033677, 0.081864], beta
/// [-0.000214, 0.000214], gamma [17.868380, 25.829306]. Its intervals are estimate ± se x
/// qt(0.95, n − 1) (R/confint.R); the same standard errors give them back to 4 digits, and the
/// two-sided 95 % intervals reported here (t(0.975, n − 3)) contain them.
#[test]
fn the_raytracer_fit_lies_in_the_r_package_intervals() {
    let f = fit(&RAYTRACER).unwrap();
    let inside = |c: &Coef, lo: f64, hi: f64| c.value >= lo && c.value <= hi;
    assert!(inside(&f.alpha, 0.0337, 0.0819), "{f:?}");
    assert!(inside(&f.beta, 0.0, 0.000214), "{f:?}");
    assert!(inside(&f.gamma, 17.87, 25.83), "{f:?}");
    assert!((f.alpha.value - 0.0578).abs() < 5e-5, "{f:?}");
    assert!(f.beta.value < 1e-9, "β at its bound 0: {f:?}");
    assert!((f.gamma.value - 21.8488).abs() < 5e-4, "{f:?}");
    assert_eq!(f.n_max, None, "no peak with β = 0");
    // the package's convention, from our standard errors
    let q = t_one_sided_95(10.0);
    let r = |c: &Coef| (c.value - c.se * q, c.value + c.se * q);
    let close = |(a, b): (f64, f64), (x, y): (f64, f64), tol: f64| {
        (a - x).abs() < tol && (b - y).abs() < tol
    };
    assert!(
        close(r(&f.alpha), (0.033677, 0.081864), 5e-6),
        "{:?}",
        r(&f.alpha)
    );
    assert!(
        close(r(&f.beta), (-0.000214, 0.000214), 5e-7),
        "{:?}",
        r(&f.beta)
    );
    assert!(
        close(r(&f.gamma), (17.868380, 25.829306), 5e-4),
        "{:?}",
        r(&f.gamma)
    );
    // ours are wider: t(0.975, 8) = 2.306 against t(0.95, 10) = 1.812
    assert!(f.alpha.lo < 0.033677 && f.alpha.hi > 0.081864, "{f:?}");
    assert!(f.gamma.lo < 17.868380 && f.gamma.hi > 25.829306, "{f:?}");
}

/// qt(0.95, df): the one-sided 95 % point, the two-sided 10 % one.
fn t_one_sided_95(df: f64) -> f64 {
    t_crit(df, 0.10)
}

/// A curve made from known coefficients is found again, with N_max where the formula puts it,
/// and the fitted X(N) reproduces the points.
#[test]
fn a_curve_with_a_peak_is_recovered() {
    let truth = [0.05, 0.002, 100.0];
    let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 12.0, 16.0, 24.0, 32.0]
        .iter()
        .map(|&n| (n, model(truth, n)))
        .collect();
    let f = fit(&pts).unwrap();
    assert!((f.alpha.value - 0.05).abs() < 1e-6, "{f:?}");
    assert!((f.beta.value - 0.002).abs() < 1e-8, "{f:?}");
    assert!((f.gamma.value - 100.0).abs() < 1e-4, "{f:?}");
    let n_max = (0.95f64 / 0.002).sqrt();
    assert!((f.n_max.unwrap() - n_max).abs() < 1e-3, "{f:?}");
    assert!((f.at(8.0) - pts[3].1).abs() < 1e-6);
}

/// Too few points, repeated concurrencies and non-positive values are refused, saying why.
#[test]
fn bad_points_are_refused() {
    let five: Vec<(f64, f64)> = (1..=5).map(|n| (n as f64, n as f64)).collect();
    assert!(fit(&five).unwrap_err().contains("at least 6 clean points"));
    let mut same = five.clone();
    same.push((5.0, 5.0));
    assert!(fit(&same).unwrap_err().contains("5 distinct concurrencies"));
    let mut zero = five.clone();
    zero.push((6.0, 0.0));
    assert!(fit(&zero).unwrap_err().contains("X > 0"));
}

/// A closed run's clean steps are the points (N = VUs, X = ok/s): a step cut short by an abort
/// or failing past the error budget is left out; an open run has no sweep; too few clean steps
/// give the reason and no fit; the report's block shows the fit beside the knee.
#[test]
fn a_closed_run_s_clean_steps_are_the_points() {
    use crate::analyze::model::LoadModel;
    use crate::analyze::run::{test_report, test_row};
    let truth = [0.03, 0.0005, 50.0];
    let mut steps: Vec<_> = [1u32, 2, 4, 8, 16, 24, 32, 48]
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let mut s = test_row(n, i as i64 * 10_000);
            s.ok_per_s = model(truth, n as f64);
            s
        })
        .collect();
    steps[6].failed_rate = 0.2;
    steps[7].truncated = true;
    assert_eq!(sweep(LoadModel::Open, &steps, 0.01, None), None);
    let u = sweep(LoadModel::Closed, &steps, 0.01, Some(32)).unwrap();
    let ns: Vec<f64> = u.points.iter().map(|p| p.0).collect();
    assert_eq!(ns, [1.0, 2.0, 4.0, 8.0, 16.0, 24.0]);
    let f = u.fit.as_ref().unwrap();
    assert!((f.alpha.value - 0.03).abs() < 1e-6, "{f:?}");
    assert!((f.gamma.value - 50.0).abs() < 1e-4, "{f:?}");
    let mut r = test_report(steps.clone(), crate::analyze::Params::new(100.0));
    r.model = LoadModel::Closed;
    r.usl = Some(u);
    let text = crate::report::content::usl_block(&r).unwrap().body_text();
    assert!(text.contains("over 6 clean steps: α 0.03000 ["), "{text}");
    assert!(text.contains("N_max = sqrt((1-α)/β) = 44.05 VUs"), "{text}");
    assert!(text.contains("beside the measured knee 32 VUs"), "{text}");
    steps[5].failed_rate = 0.5;
    let u = sweep(LoadModel::Closed, &steps, 0.01, None).unwrap();
    assert_eq!(u.fit, None);
    assert_eq!(
        u.why_not.as_deref(),
        Some("5 points: the USL needs at least 6 clean points")
    );
}
