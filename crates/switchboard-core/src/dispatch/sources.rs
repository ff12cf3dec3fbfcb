//! Time and randomness, the two things the dispatcher takes from the edge so that
//! tests can be exact: the clock that stamps events and the source of fence nonces.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch; injected so tests can be exact.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// Fence delimiters; injected so tests can be exact.
pub type NonceSource = Arc<dyn Fn() -> String + Send + Sync>;

/// A fresh 32-hex-digit nonce: the default source of fence delimiters.
pub fn random_nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded from the operating system's randomness once per process
    // and advanced per instance; the clock adds per-call variation.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).map(|elapsed| elapsed.as_nanos()).unwrap_or(0));
    let first = hasher.finish();
    let mut second_hasher = std::collections::hash_map::RandomState::new().build_hasher();
    second_hasher.write_u64(first);
    format!("{:016x}{:016x}", first, second_hasher.finish())
}
