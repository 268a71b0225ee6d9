//! The Universal Scalability Law block of a closed-model run: α, β, γ with their 95 %
//! intervals, N_max beside the measured knee, and each clean step's measured and fitted X(N).
use super::cells::block;
use crate::analyze::model::Report;
use crate::analyze::usl::Coef;
use crate::report::table::{Block, Table};

fn coef(name: &str, c: &Coef) -> String {
    format!("{name} {} [{}, {}]", sig(c.value), sig(c.lo), sig(c.hi))
}

/// Four significant digits, plain.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

pub fn usl_block(r: &Report) -> Option<Block> {
    let u = r.usl.as_ref()?;
    let mut b = block("Universal Scalability Law (closed model: N = VUs, X = ok/s)");
    let knee = u
        .knee
        .map(|k| format!("the measured knee {k} VUs"))
        .unwrap_or_else(|| "no knee measured".into());
    let Some(f) = &u.fit else {
        b.lines.push(format!(
            "not fitted: {}; clean steps (a full window, failures within the budget) are its points",
            u.why_not.as_deref().unwrap_or("?")
        ));
        return Some(b);
    };
    b.lines.push(format!(
        "X(N) = γN / (1 + α(N-1) + βN(N-1)) over {} clean steps: {}, {}, {} (95 % intervals, t with {} df; σ {} ok/s)",
        f.points,
        coef("α", &f.alpha),
        coef("β", &f.beta),
        coef("γ", &f.gamma),
        f.df,
        sig(f.sigma)
    ));
    b.lines.push(match (f.n_max, f.x_max) {
        (Some(n), Some(x)) => format!(
            "N_max = sqrt((1-α)/β) = {} VUs (X {} ok/s), beside {knee}",
            sig(n),
            sig(x)
        ),
        _ => format!(
            "β = 0: no peak; X flattens towards γ/α = {} ok/s (contention only), beside {knee}",
            if f.alpha.value > 0.0 {
                sig(f.gamma.value / f.alpha.value)
            } else {
                "∞".into()
            }
        ),
    });
    let mut t = Table::new(["N", "X", "X fitted", "residual"]);
    for &(n, x) in &u.points {
        let fit = f.at(n);
        t.push(vec![sig(n), sig(x), sig(fit), format!("{:+.1}", x - fit)]);
    }
    b.table = Some(t);
    Some(b)
}
