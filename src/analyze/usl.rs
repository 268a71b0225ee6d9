//! Gunther's Universal Scalability Law fitted to measured points (pure): X(N) = γN / (1 +
//! α(N − 1) + βN(N − 1)), by bounded nonlinear least squares (Levenberg-Marquardt, α and β in
//! [0, 1], γ ≥ 0, the R package usl's bounds and start), with each coefficient's standard error
//! from the Jacobian at the fit and its two-sided 95 % interval (Student's t, n − 3 degrees of
//! freedom), and the peak N_max = sqrt((1 − α) / β) when β > 0.
use serde::{Deserialize, Serialize};

use super::model::{LoadModel, StepReport};
use super::student::t_crit;

/// Fewest points a fit takes: the article's "6-8 clean points are needed".
pub const MIN_POINTS: usize = 6;

/// One coefficient: its estimate, standard error and two-sided 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coef {
    pub value: f64,
    pub se: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The fit of X(N) to the points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    /// Contention: throughput flattens towards γ / α.
    pub alpha: Coef,
    /// Coherency: throughput falls past N_max.
    pub beta: Coef,
    /// Throughput at N = 1.
    pub gamma: Coef,
    /// Points fitted and the residual degrees of freedom (points − 3).
    pub points: usize,
    pub df: usize,
    /// Residual standard deviation, in the throughput's unit.
    pub sigma: f64,
    /// The concurrency of peak throughput, sqrt((1 − α) / β); absent when β is 0.
    pub n_max: Option<f64>,
    /// The fitted throughput at `n_max`.
    pub x_max: Option<f64>,
}

impl UslFit {
    /// X(N) of the fitted coefficients.
    pub fn at(&self, n: f64) -> f64 {
        model([self.alpha.value, self.beta.value, self.gamma.value], n)
    }
}

/// X(N) for p = [α, β, γ].
fn model(p: [f64; 3], n: f64) -> f64 {
    p[2] * n / (1.0 + p[0] * (n - 1.0) + p[1] * n * (n - 1.0))
}

/// dX/dα, dX/dβ, dX/dγ at N.
fn gradient(p: [f64; 3], n: f64) -> [f64; 3] {
    let d = 1.0 + p[0] * (n - 1.0) + p[1] * n * (n - 1.0);
    let top = p[2] * n;
    [
        -top * (n - 1.0) / (d * d),
        -top * n * (n - 1.0) / (d * d),
        n / d,
    ]
}

const LOWER: [f64; 3] = [0.0, 0.0, 0.0];
const UPPER: [f64; 3] = [1.0, 1.0, f64::INFINITY];

fn rss(p: [f64; 3], pts: &[(f64, f64)]) -> f64 {
    pts.iter().map(|&(n, x)| (x - model(p, n)).powi(2)).sum()
}

/// JᵀJ and Jᵀr at p (r = observed − fitted).
fn normal_equations(p: [f64; 3], pts: &[(f64, f64)]) -> ([[f64; 3]; 3], [f64; 3]) {
    let mut a = [[0.0; 3]; 3];
    let mut g = [0.0; 3];
    for &(n, x) in pts {
        let j = gradient(p, n);
        let r = x - model(p, n);
        for i in 0..3 {
            g[i] += j[i] * r;
            for k in 0..3 {
                a[i][k] += j[i] * j[k];
            }
        }
    }
    (a, g)
}

/// The inverse of a symmetric 3x3 matrix (None when singular).
fn invert(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let c = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0]
    };
    let det = m[0][0] * c(0, 0) + m[0][1] * c(0, 1) + m[0][2] * c(0, 2);
    if !det.is_finite() || det.abs() < 1e-300 {
        return None;
    }
    let mut inv = [[0.0; 3]; 3];
    for (i, row) in inv.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = c(j, i) / det;
        }
    }
    Some(inv)
}

/// One damped step from p: coefficients held at a bound the gradient pushes past stay there.
fn step(p: [f64; 3], pts: &[(f64, f64)], lambda: f64) -> Option<[f64; 3]> {
    let (mut a, mut g) = normal_equations(p, pts);
    for i in 0..3 {
        a[i][i] *= 1.0 + lambda;
        let held = (p[i] <= LOWER[i] && g[i] < 0.0) || (p[i] >= UPPER[i] && g[i] > 0.0);
        if held {
            for k in 0..3 {
                a[i][k] = 0.0;
                a[k][i] = 0.0;
            }
            a[i][i] = 1.0;
            g[i] = 0.0;
        }
    }
    let inv = invert(a)?;
    let mut q = p;
    for i in 0..3 {
        let d: f64 = (0..3).map(|k| inv[i][k] * g[k]).sum();
        q[i] = (p[i] + d).clamp(LOWER[i], UPPER[i]);
    }
    Some(q)
}

/// Fits X(N) to `(N, X)` points: at least [`MIN_POINTS`], N ≥ 1 and distinct, X > 0.
pub fn fit(points: &[(f64, f64)]) -> Result<UslFit, String> {
    check(points)?;
    // the R package usl's start: γ the best X/N, α 0.01, β 0.0001
    let g0 = points.iter().map(|&(n, x)| x / n).fold(0.0, f64::max);
    let mut p = [0.01, 0.0001, g0];
    let mut cur = rss(p, points);
    let mut lambda = 1e-3;
    for _ in 0..10_000 {
        let Some(q) = step(p, points, lambda) else {
            lambda *= 10.0;
            continue;
        };
        let next = rss(q, points);
        if next < cur {
            let gain = (cur - next) / cur.max(f64::MIN_POSITIVE);
            p = q;
            cur = next;
            lambda = (lambda / 10.0).max(1e-12);
            if gain < 1e-15 {
                break;
            }
        } else {
            lambda *= 10.0;
            if lambda > 1e16 {
                break;
            }
        }
    }
    finish(p, cur, points)
}

fn check(points: &[(f64, f64)]) -> Result<(), String> {
    if points.len() < MIN_POINTS {
        return Err(format!(
            "{} points: the USL needs at least {MIN_POINTS} clean points",
            points.len()
        ));
    }
    if let Some(&(n, x)) = points
        .iter()
        .find(|(n, x)| !(n.is_finite() && x.is_finite() && *n >= 1.0 && *x > 0.0))
    {
        return Err(format!("point ({n}, {x}): N must be >= 1 and X > 0"));
    }
    let mut ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < MIN_POINTS {
        return Err(format!(
            "{} distinct concurrencies: the USL needs at least {MIN_POINTS}",
            ns.len()
        ));
    }
    Ok(())
}

/// Standard errors (diag((JᵀJ)⁻¹) s², s² = RSS / (n − 3)), intervals and the peak.
fn finish(p: [f64; 3], rss: f64, pts: &[(f64, f64)]) -> Result<UslFit, String> {
    let df = pts.len() - 3;
    let s2 = rss / df as f64;
    let (a, _) = normal_equations(p, pts);
    let inv = invert(a)
        .ok_or("the fit's Jacobian is singular: the points do not tell α, β and γ apart")?;
    let t = t_crit(df as f64, 0.05);
    let coef = |i: usize| {
        let se = (inv[i][i] * s2).max(0.0).sqrt();
        Coef {
            value: p[i],
            se,
            lo: p[i] - t * se,
            hi: p[i] + t * se,
        }
    };
    let n_max = (p[1] > 0.0).then(|| ((1.0 - p[0]) / p[1]).sqrt());
    Ok(UslFit {
        alpha: coef(0),
        beta: coef(1),
        gamma: coef(2),
        points: pts.len(),
        df,
        sigma: s2.sqrt(),
        n_max,
        x_max: n_max.map(|n| model(p, n)),
    })
}

/// The USL of a closed-model run: its clean steps as (N = VUs, X = ok/s) and the fit, or why
/// there is none; the measured knee beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UslSweep {
    /// (VUs, ok/s) of each clean step: a full window, failures within the error budget.
    pub points: Vec<(f64, f64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<UslFit>,
    /// Why there is no fit (too few clean points, a singular fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// The run's measured knee (VUs), to read beside `fit.n_max`.
    pub knee: Option<u32>,
}

/// The sweep of a closed-model run (None for an open one: its N is not set by the load).
pub fn sweep(
    model: LoadModel,
    steps: &[StepReport],
    error_budget: f64,
    knee: Option<u32>,
) -> Option<UslSweep> {
    if model != LoadModel::Closed {
        return None;
    }
    let points: Vec<(f64, f64)> = steps
        .iter()
        .filter(|s| !s.truncated && s.requests > 0 && s.failed_rate <= error_budget)
        .map(|s| (s.target as f64, s.ok_per_s))
        .collect();
    let (fit, why_not) = match fit(&points) {
        Ok(f) => (Some(f), None),
        Err(e) => (None, Some(e)),
    };
    Some(UslSweep {
        points,
        fit,
        why_not,
        knee,
    })
}

#[cfg(test)]
#[path = "usl_tests.rs"]
mod tests;
