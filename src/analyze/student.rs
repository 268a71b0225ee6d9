//! Student's t distribution, pure and deterministic: the two-sided tail and the critical value,
//! through the regularized incomplete beta function. `compare`'s tests, the history's change
//! points (`changepoint`) and the USL fit's intervals (`usl`) read it.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection: Γ(x) Γ(1 - x) = π / sin(πx)
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function I_x(a, b), a, b > 0, x in [0, 1].
pub(crate) fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    inc_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The two-sided critical value: P(|T| >= c) = `alpha` for Student's t with `df` degrees of
/// freedom (bisection on x = df / (df + c²), where the tail is I_x(df/2, 1/2), increasing in x).
pub(crate) fn t_crit(df: f64, alpha: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if inc_beta(df / 2.0, 0.5, mid) < alpha {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let x = 0.5 * (lo + hi);
    (df * (1.0 - x) / x).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_critical_values_match_the_tables() {
        // two-sided 5 % and 1 %: t(1) 12.706 / 63.657, t(4) 2.776 / 4.604, t(18) 2.101 / 2.878
        for (df, alpha, want) in [
            (1.0, 0.05, 12.706),
            (1.0, 0.01, 63.657),
            (4.0, 0.05, 2.776),
            (4.0, 0.01, 4.604),
            (18.0, 0.05, 2.101),
            (18.0, 0.01, 2.878),
            (1000.0, 0.05, 1.962),
        ] {
            let c = t_crit(df, alpha);
            assert!(
                (c - want).abs() < 2e-3,
                "t({df}, {alpha}) = {c}, want {want}"
            );
            let p = t_two_sided_p(c, df);
            assert!((p - alpha).abs() < 1e-9 * alpha.max(1e-3), "{p}");
        }
    }

    #[test]
    fn gamma_and_beta_are_right() {
        assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
        assert!((ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln()).abs() < 1e-12);
        // I_x(1, 1) = x; I_x(a, b) = 1 - I_(1-x)(b, a)
        assert!((inc_beta(1.0, 1.0, 0.3) - 0.3).abs() < 1e-12);
        let (a, b, x) = (2.5, 0.5, 0.8);
        assert!((inc_beta(a, b, x) + inc_beta(b, a, 1.0 - x) - 1.0).abs() < 1e-12);
    }
}
