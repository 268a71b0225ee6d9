//! Splitting one k6 schedule over N generators with k6 execution segments: instance i of N
//! runs `--execution-segment=i/N:(i+1)/N` with `--execution-segment-sequence=0,1/N,...,1`, so
//! k6 stripes iterations (and VUs) over the instances and their sum is exactly the plan. Pure.

/// A fraction `num/den` in lowest terms, printed as k6 reads it (`0`, `1/2`, `1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frac {
    pub num: u32,
    pub den: u32,
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl Frac {
    pub(crate) fn new(num: u32, den: u32) -> Frac {
        let g = gcd(num, den).max(1);
        Frac {
            num: num / g,
            den: den / g,
        }
    }
}

impl std::fmt::Display for Frac {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.num == 0 {
            write!(f, "0")
        } else if self.num == self.den {
            write!(f, "1")
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// One generator's share of the schedule.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Segment {
    /// 0-based instance index (`g<index>` in the run directory).
    pub index: u32,
    pub count: u32,
    /// `--execution-segment` value, e.g. `1/2:1`.
    pub segment: String,
    /// `--execution-segment-sequence` value, e.g. `0,1/2,1`.
    pub sequence: String,
}

impl Segment {
    /// The k6 flags of this segment (none for a single generator: the whole schedule).
    pub(crate) fn k6_args(&self) -> Vec<String> {
        if self.count <= 1 {
            return Vec::new();
        }
        vec![
            format!("--execution-segment={}", self.segment),
            format!("--execution-segment-sequence={}", self.sequence),
        ]
    }
}

/// The N equal segments of the schedule, in order. `n` must be at least 1.
pub(crate) fn segments(n: u32) -> Vec<Segment> {
    let n = n.max(1);
    let sequence: Vec<String> = (0..=n).map(|i| Frac::new(i, n).to_string()).collect();
    let sequence = sequence.join(",");
    (0..n)
        .map(|i| Segment {
            index: i,
            count: n,
            segment: format!("{}:{}", Frac::new(i, n), Frac::new(i + 1, n)),
            sequence: sequence.clone(),
        })
        .collect()
}

/// Most generators `--generators` accepts (each is a k6 process with its own VU pool).
pub(crate) const MAX_GENERATORS: u32 = 16;

/// Check a `--generators` value: 1..=16, with a message naming the flag and the fix.
pub(crate) fn check_count(n: u32) -> Result<u32, String> {
    if (1..=MAX_GENERATORS).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "--generators {n}: give 1 to {MAX_GENERATORS} load generators (1 = a single k6, the article's setup)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_generators_split_in_halves() {
        let s = segments(2);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].segment, "0:1/2");
        assert_eq!(s[1].segment, "1/2:1");
        assert_eq!(s[0].sequence, "0,1/2,1");
        assert_eq!(
            s[1].k6_args(),
            vec![
                "--execution-segment=1/2:1".to_string(),
                "--execution-segment-sequence=0,1/2,1".to_string()
            ]
        );
    }

    #[test]
    fn fractions_are_reduced() {
        let s = segments(4);
        let segs: Vec<&str> = s.iter().map(|x| x.segment.as_str()).collect();
        assert_eq!(segs, ["0:1/4", "1/4:1/2", "1/2:3/4", "3/4:1"]);
        assert_eq!(s[0].sequence, "0,1/4,1/2,3/4,1");
        let s = segments(3);
        assert_eq!(s[2].segment, "2/3:1");
        assert_eq!(s[0].sequence, "0,1/3,2/3,1");
    }

    #[test]
    fn segments_cover_the_whole_schedule_without_gaps() {
        for n in 1..=MAX_GENERATORS {
            let s = segments(n);
            assert_eq!(s.len() as u32, n);
            assert!(s[0].segment.starts_with("0:"));
            assert!(s[n as usize - 1].segment.ends_with(":1"));
            for w in s.windows(2) {
                let end = w[0].segment.split(':').nth(1).unwrap();
                let start = w[1].segment.split(':').next().unwrap();
                assert_eq!(end, start, "n={n}");
            }
        }
    }

    #[test]
    fn one_generator_passes_no_segment_flags() {
        let s = segments(1);
        assert_eq!(s[0].segment, "0:1");
        assert!(s[0].k6_args().is_empty());
    }

    #[test]
    fn count_limits_name_the_flag() {
        assert_eq!(check_count(2), Ok(2));
        let e = check_count(0).unwrap_err();
        assert!(e.contains("--generators 0"), "{e}");
        assert!(check_count(17).is_err());
    }
}
