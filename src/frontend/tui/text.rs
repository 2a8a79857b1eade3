//! How counts and durations read on screen: `12,345`, `840 ms`, `2.4 s`.

/// `n` with thousands separators.
pub use crate::render::thousands as count;

/// A duration for people: `840 ms`, `2.4 s`, `2 min 05 s` (as the console
/// writes it).
pub use crate::frontend::progress::duration;

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counts_and_durations() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(duration(Duration::from_millis(4)), "4 ms");
        assert_eq!(duration(Duration::from_millis(2449)), "2.4 s");
        assert_eq!(duration(Duration::from_secs(125)), "2 min 05 s");
    }
}
