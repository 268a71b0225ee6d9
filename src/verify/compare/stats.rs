//! The small statistics `compare` needs, pure and deterministic: mean and sample variance,
//! Student's t distribution (its home is `analyze::student`, which the history's change points
//! share), and a seeded generator (SplitMix64) with normal draws for the simulations that
//! calibrate and measure the verdict.
pub(crate) use crate::analyze::student::{t_crit, t_two_sided_p};

/// Mean (0 for an empty slice).
pub(crate) fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample variance (n - 1 in the denominator; 0 below 2 values).
pub(crate) fn variance(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = mean(v);
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64
}

/// Sample standard deviation of the natural logs of `v` (every value > 0).
pub(crate) fn sd_of_logs(v: &[f64]) -> f64 {
    let l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
    variance(&l).sqrt()
}

/// A small seeded generator (SplitMix64): the same seed gives the same draws everywhere.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
    spare: Option<f64>,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed,
            spare: None,
        }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1).
    pub(crate) fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Uniform index in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }

    /// A standard normal draw (Box-Muller, the second value kept for the next call).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let (u, v) = (self.uniform(), self.uniform());
        let r = (-2.0 * u.ln()).sqrt();
        let th = 2.0 * std::f64::consts::PI * v;
        self.spare = Some(r * th.sin());
        r * th.cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_seeded_and_its_normals_are_standard() {
        let mut r = Rng::new(7);
        let v: Vec<f64> = (0..40_000).map(|_| r.normal()).collect();
        assert!(mean(&v).abs() < 0.02, "{}", mean(&v));
        assert!((variance(&v) - 1.0).abs() < 0.03, "{}", variance(&v));
        assert_eq!(Rng::new(7).next_u64(), Rng::new(7).next_u64());
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| r.below(9) < 9));
    }
}
