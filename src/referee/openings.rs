//! Opening positions: read from a file, or made by random plies from the
//! start with a seeded generator (the same seed gives the same openings).

use std::collections::HashSet;
use std::path::Path;

use crate::board::{Position, Rules};
use crate::notation::parse_position;

/// SplitMix64: a small, well-mixed generator, plenty for picking moves.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`); the bias is below 2^-50 for small `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Attempts per opening before giving up on finding one.
const ATTEMPTS: usize = 10_000;

/// One line of `plies` random legal moves from the start of a `size`
/// board; `None` if the game ends on the way (or at the end) or a position
/// occurs a third time.
fn random_line(size: usize, plies: u32, rules: Rules, rng: &mut SplitMix64) -> Option<Position> {
    let mut position = Position::start(size);
    let mut seen = vec![position.key()];
    for _ in 0..plies {
        if position.outcome(rules).is_some() {
            return None;
        }
        let moves = position.legal_moves();
        position = position.play(moves[rng.below(moves.len())]);
        seen.push(position.key());
        if seen.iter().filter(|&&k| k == position.key()).count() >= 3 {
            return None;
        }
    }
    position.outcome(rules).is_none().then_some(position)
}

/// `count` openings of `plies` random plies each from the start, with no
/// finished games among them, and no two alike while different ones can
/// still be found.
///
/// # Errors
/// When no line of that many plies keeps the game going.
pub fn random(
    size: usize,
    plies: u32,
    count: usize,
    seed: u64,
    rules: Rules,
) -> Result<Vec<Position>, String> {
    let mut rng = SplitMix64::new(seed);
    let mut openings = Vec::with_capacity(count);
    let mut used = HashSet::new();
    while openings.len() < count {
        let mut found = None;
        for attempt in 0..ATTEMPTS {
            if let Some(position) = random_line(size, plies, rules, &mut rng) {
                // Late attempts accept a repeat: there may be few openings.
                if used.insert(position) || attempt >= ATTEMPTS / 10 {
                    found = Some(position);
                    break;
                }
            }
        }
        let position = found.ok_or_else(|| {
            format!(
                "no opening of {plies} random plies on {size} x {size} found in {ATTEMPTS} tries: every line ends the game"
            )
        })?;
        openings.push(position);
    }
    Ok(openings)
}

/// The longest openings file: some hundred thousand positions of a few
/// dozen bytes, many more than a match can use.
const MAX_OPENINGS_BYTES: u64 = 16 << 20;

/// Reads position strings, one per line; blank lines and lines starting
/// with `#` are skipped.
///
/// # Errors
/// A message naming the file and line of the first bad or finished
/// position, or the reading error.
pub fn from_file(path: &Path, rules: Rules) -> Result<Vec<Position>, String> {
    let text = crate::files::read_text(path, MAX_OPENINGS_BYTES)
        .map_err(|error| format!("openings file: {error}"))?;
    let mut openings = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), number + 1);
        let position =
            parse_position(line).map_err(|error| format!("{}: '{line}': {error}", at()))?;
        if let Some(outcome) = position.outcome(rules) {
            return Err(format!(
                "{}: '{line}': the game is already over: {outcome}",
                at()
            ));
        }
        openings.push(position);
    }
    if openings.is_empty() {
        return Err(format!("openings file {} has no positions", path.display()));
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::format_position;
    use crate::perft::perft;

    #[test]
    fn splitmix_reference_values() {
        // The first outputs for seed 0 of the published SplitMix64.
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn random_openings_are_reproducible_legal_and_distinct() {
        let a = random(5, 4, 20, 7, Rules::Textbook).unwrap();
        let b = random(5, 4, 20, 7, Rules::Textbook).unwrap();
        assert_eq!(a, b);
        let c = random(5, 4, 20, 8, Rules::Textbook).unwrap();
        assert_ne!(a, c);
        let distinct: HashSet<_> = a.iter().collect();
        assert_eq!(distinct.len(), 20);
        for position in &a {
            // Four plies from the start: Black to move again, game not over.
            assert_eq!(position.side_to_move(), crate::Color::Black);
            assert!(position.outcome(Rules::Textbook).is_none());
        }
        assert_eq!(
            random(3, 0, 2, 1, Rules::Textbook).unwrap(),
            vec![Position::start(3); 2]
        );
    }

    #[test]
    fn few_openings_are_reused_rather_than_refused() {
        // 3 x 3 has 3 lines of one ply (perft 1 = 3): ask for 5.
        assert_eq!(perft(&Position::start(3), 1), 3);
        let openings = random(3, 1, 5, 1, Rules::Textbook).unwrap();
        let distinct: HashSet<String> = openings.iter().map(format_position).collect();
        assert_eq!(distinct.len(), 3);
    }

    #[test]
    fn openings_file_errors_name_the_line() {
        let dir = std::env::temp_dir().join(format!("dodgem-openings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.txt");
        std::fs::write(&good, "# two openings\nB2/B2/1WW b\n\n 1B1/BW1/2W b \n").unwrap();
        let openings = from_file(&good, Rules::Textbook).unwrap();
        assert_eq!(openings.len(), 2);
        assert_eq!(format_position(&openings[1]), "1B1/BW1/2W b");
        let bad = dir.join("bad.txt");
        std::fs::write(&bad, "B2/B2/1WW b\nB2/B2/1WX b\n").unwrap();
        let error = from_file(&bad, Rules::Textbook).unwrap_err();
        assert!(error.ends_with("bad.txt:2: 'B2/B2/1WX b': unknown character 'X' in board (expected B, W, / or a digit 1-8)"), "{error}");
        let over = dir.join("over.txt");
        std::fs::write(&over, "3/B2/3 w\n").unwrap();
        let error = from_file(&over, Rules::Textbook).unwrap_err();
        assert!(error.contains("already over"), "{error}");
        let empty = dir.join("empty.txt");
        std::fs::write(&empty, "# nothing\n").unwrap();
        assert!(
            from_file(&empty, Rules::Textbook)
                .unwrap_err()
                .contains("no positions")
        );
        assert!(
            from_file(&dir.join("missing.txt"), Rules::Textbook)
                .unwrap_err()
                .contains("cannot read")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
