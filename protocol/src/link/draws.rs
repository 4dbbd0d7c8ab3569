//! Keyed random draws: every random number the link and the drivers use is a hash of a key and a
//! position, never the next output of a generator.
//!
//! A generator's n-th output depends on how many came before; a hash of `(key, position)` does not.
//! That is what lets two strategies on one seed meet the same link at every instant whatever each
//! sent before, and lets one kind of draw be added or moved without shifting any other. Each use
//! gets its own stream key ([`stream`]) so no two uses ever share a draw.

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
pub(crate) const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The key of stream `name` under `key` (a seed, or another stream's key).
pub(crate) fn stream(key: u64, name: u64) -> u64 {
    splitmix(key ^ splitmix(name))
}

/// A uniform draw in `[0, 1)` at `position` of the stream `key`.
pub(crate) fn uniform(key: u64, position: u64) -> f64 {
    unit(splitmix(key ^ splitmix(position)))
}

/// The top 53 bits of `x` as a uniform number in `[0, 1)`.
pub(crate) fn unit(x: u64) -> f64 {
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal number from two uniforms in `[0, 1)` (Box-Muller).
pub(crate) fn normal(u1: f64, u2: f64) -> f64 {
    (-2.0 * (1.0 - u1).ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}
