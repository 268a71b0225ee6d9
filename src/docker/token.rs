//! Random tokens (passwords, run ids, socket names).

/// Random lowercase alphanumerics from the kernel's CSPRNG (passwords, run ids).
pub fn random_token(n: usize) -> String {
    const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut buf = vec![0u8; n];
    let mut f = std::fs::File::open("/dev/urandom").expect("/dev/urandom");
    std::io::Read::read_exact(&mut f, &mut buf).expect("reading /dev/urandom");
    buf.iter()
        .map(|b| A[(*b as usize) % A.len()] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random() {
        let a = random_token(24);
        assert_eq!(a.len(), 24);
        assert_ne!(a, random_token(24));
    }
}
