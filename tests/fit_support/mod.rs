//! Shared by the tests of `--fit`'s outcome (`runs`' real fit, `offline`'s replayed ones): the
//! fitted steps against the published ones.
use perflab::rundir::fit::FitRecord;

/// The fitted steps are the published ones times `factor`, rounded.
pub fn assert_scaled(published: &[u32], fitted: &[u32], factor: f64) {
    assert_eq!(published.len(), fitted.len());
    for (a, b) in published.iter().zip(fitted) {
        let want = f64::from(*a) * factor;
        assert!(
            (f64::from(*b) - want).abs() <= 1.01,
            "{a} x {factor} = {want}, got {b}"
        );
    }
}

/// The published plan's measured steps, as the fit record keeps it.
pub fn published_steps(f: &FitRecord) -> Vec<u32> {
    f.article_plan
        .measured_windows()
        .map(|w| w.target)
        .collect()
}
