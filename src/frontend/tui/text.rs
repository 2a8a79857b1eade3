//! How counts and durations read on screen: `12,345`, `840 ms`, `2.4 s`.

use std::time::Duration;

/// `n` with thousands separators.
pub use crate::render::thousands as count;

/// A duration for people: milliseconds under a second, then seconds with
/// one decimal, then minutes and seconds.
pub fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_durations() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(duration(Duration::from_millis(4)), "4 ms");
        assert_eq!(duration(Duration::from_millis(2449)), "2.4 s");
        assert_eq!(duration(Duration::from_secs(125)), "2 min 5 s");
    }
}
