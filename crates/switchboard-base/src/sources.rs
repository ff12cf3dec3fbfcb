//! Time and randomness, the two things the dispatcher takes from the edge so that
//! tests can be exact: the clock that stamps events and the source of fence nonces.

use std::sync::Arc;

/// Milliseconds since the Unix epoch; injected so tests can be exact.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Fence delimiters; injected so tests can be exact.
pub type NonceSource = Arc<dyn Fn() -> String + Send + Sync>;

/// 128 bits from the operating system's random source, as 32 hex digits: the
/// default source of fence delimiters, which a delegate must not be able to guess.
pub fn random_nonce() -> String {
    let mut bytes = [0u8; 16];
    // The OS source failing is not something a turn can recover from; it would
    // leave fences guessable, so it stops the program rather than degrade.
    getrandom::fill(&mut bytes).expect("the operating system's random source is available");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_128_random_bits_never_repeated() {
        let nonces: std::collections::HashSet<String> = (0..10_000).map(|_| random_nonce()).collect();
        assert_eq!(nonces.len(), 10_000, "a nonce repeated");
        assert!(nonces.iter().all(|nonce| nonce.len() == 32 && nonce.chars().all(|digit| digit.is_ascii_hexdigit())));
        // Every hex digit turns up in every position over many draws: not a counter
        // or a clock in disguise.
        for position in 0..32 {
            let digits: std::collections::HashSet<char> =
                nonces.iter().map(|nonce| nonce.as_bytes()[position] as char).collect();
            assert_eq!(digits.len(), 16, "position {position} varies over only {digits:?}");
        }
    }
}
