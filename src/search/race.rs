//! Races decided without search. Once every White car stands north-west
//! of every Black car (north of every Black car's rank and west of every
//! Black car's file), no car can ever stand in another's way again: Black
//! cars never move west and White cars never move south. Each side then
//! always has a forward move (its leading car on each line), and the game
//! is a pure race: the side to move, needing `m` moves against the
//! opponent's `o`, wins in `2m - 1` plies if `m <= o` and loses in `2o`
//! plies otherwise. Sideways moves only lose time, so this is exact.

use super::MATE;
use crate::board::{Color, Position, RANK_STRIDE};
use crate::eval::moves_to_go;

/// The files `cars` occupy, as a bit per file (bit 0 is file `a`).
fn files(cars: u64) -> u64 {
    // Squares are `rank * RANK_STRIDE + file` with a stride of 8: fold the
    // ranks onto one byte.
    const _: () = assert!(RANK_STRIDE == 8);
    let mut folded = cars | cars >> 32;
    folded |= folded >> 16;
    folded |= folded >> 8;
    folded & 0xFF
}

/// The exact score (side to move's view, `ply` plies from the root) of a
/// race the cars can no longer influence, or `None` while they can.
pub(super) fn decided_race(position: &Position, ply: usize) -> Option<i32> {
    let (black, white) = (position.cars(Color::Black), position.cars(Color::White));
    if black == 0 || white == 0 {
        return None;
    }
    let black_min_file = files(black).trailing_zeros();
    let white_max_file = 63 - files(white).leading_zeros();
    let white_min_rank = white.trailing_zeros() / RANK_STRIDE as u32;
    let black_max_rank = (63 - black.leading_zeros()) / RANK_STRIDE as u32;
    if black_min_file <= white_max_file || white_min_rank <= black_max_rank {
        return None;
    }
    let side = position.side_to_move();
    let own = moves_to_go(position, side);
    let theirs = moves_to_go(position, side.other());
    let ply = ply as i32;
    Some(if own <= theirs {
        MATE - (ply + 2 * own - 1)
    } else {
        -(MATE - (ply + 2 * theirs))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::notation::parse_position;
    use crate::search::tablebase::score_of;
    use crate::tablebase;

    #[test]
    fn only_passed_cars_make_a_decided_race() {
        // Cars still facing each other: not decided.
        assert_eq!(decided_race(&Position::start(5), 0), None);
        // White on the top rank, west of Black's cars: Black to move needs
        // 1 + 2 = 3 moves, White 1 + 1 = 2: White wins in 4 plies.
        let passed = parse_position("WW3/5/3B1/4B/5 b").unwrap();
        assert_eq!(decided_race(&passed, 0), Some(-(MATE - 4)));
        // With White to move, White wins in 3 plies; 2 plies deeper, in 5.
        let white = passed.with_side_to_move(Color::White);
        assert_eq!(decided_race(&white, 0), Some(MATE - 3));
        assert_eq!(decided_race(&white, 2), Some(MATE - 5));
        // A White car on Black's rank could still block: not decided.
        let shared = parse_position("W4/5/3B1/1W2B/5 b").unwrap();
        assert_eq!(decided_race(&shared, 0), None);
    }

    /// Every 4 x 4 position the rule calls decided has the solved value
    /// it gives, under both rules.
    #[test]
    fn agrees_with_the_solved_4x4_tables() {
        for rules in Rules::ALL {
            let table = tablebase::builtin(4, rules).expect("the built-in 4x4 table");
            let indexer = table.indexer();
            let mut checked = 0;
            for index in 0..indexer.len() {
                let (black, white) = indexer.position(index);
                for side in [Color::Black, Color::White] {
                    let position = indexer.to_position(black, white, side);
                    if let Some(score) = decided_race(&position, 0) {
                        let value = table.probe(&position).expect("a 4x4 position");
                        assert_eq!(score, score_of(value), "{rules:?} {position:?}");
                        checked += 1;
                    }
                }
            }
            assert!(checked > 1000, "{checked}");
        }
    }
}
