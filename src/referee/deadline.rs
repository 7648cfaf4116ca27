//! Deadlines as instants, safe against durations beyond the clock's range.

use std::time::{Duration, Instant};

/// `instant + duration`, or a year on for a duration beyond the clock's
/// range (a clock that increments have grown absurdly large).
pub fn later(instant: Instant, duration: Duration) -> Instant {
    instant
        .checked_add(duration)
        .unwrap_or_else(|| instant + Duration::from_secs(365 * 86_400))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_beyond_the_clock_is_a_year_on() {
        let now = Instant::now();
        assert_eq!(
            later(now, Duration::from_secs(2)),
            now + Duration::from_secs(2)
        );
        let far = later(now, Duration::MAX);
        assert_eq!(far, now + Duration::from_secs(365 * 86_400));
    }
}
