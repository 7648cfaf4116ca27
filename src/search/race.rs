//! Races decided without search. Black cars never move west and White
//! cars never move south, so:
//!
//! - once every White car stands on a rank north of every Black car, no
//!   White car can ever get in a Black car's way: Black is *safe*, and
//!   driving straight on it needs exactly its moves to go, whatever White
//!   does (its leading car on each rank always has a free square ahead);
//! - once every Black car stands on a file east of every White car,
//!   White is safe in the same way.
//!
//! A safe side wins if it finishes first even against an opponent that is
//! never held up: needing `m` moves against the opponent's `o`, it wins in
//! `2m - 1` plies when it is to move and `m <= o`, in `2m` plies when the
//! opponent is to move and `m < o`. Driving straight on never leaves the
//! opponent without a move (nothing of the safe side is ever north of a
//! White car or east of a Black car that was not there already), so this
//! holds under both rules; under `textbook` a faster win by blocking may
//! exist, so the distance is then an upper bound. When both sides are
//! safe (the cars have passed each other) the race is exact either way.

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

/// The score (side to move's view, `ply` plies from the root) of a race
/// decided as the module documentation says, or `None` while it is not.
pub(super) fn decided_race(position: &Position, ply: usize) -> Option<i32> {
    let (black, white) = (position.cars(Color::Black), position.cars(Color::White));
    if black == 0 || white == 0 {
        return None;
    }
    let black_min_file = files(black).trailing_zeros();
    let white_max_file = 63 - files(white).leading_zeros();
    let white_min_rank = white.trailing_zeros() / RANK_STRIDE as u32;
    let black_max_rank = (63 - black.leading_zeros()) / RANK_STRIDE as u32;
    let black_safe = white_min_rank > black_max_rank;
    let white_safe = black_min_file > white_max_file;
    if !black_safe && !white_safe {
        return None;
    }
    let side = position.side_to_move();
    let (mover_safe, other_safe) = match side {
        Color::Black => (black_safe, white_safe),
        Color::White => (white_safe, black_safe),
    };
    let own = moves_to_go(position, side);
    let theirs = moves_to_go(position, side.other());
    let ply = ply as i32;
    if mover_safe && own <= theirs {
        Some(MATE - (ply + 2 * own - 1))
    } else if other_safe && theirs < own {
        Some(-(MATE - (ply + 2 * theirs)))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::notation::parse_position;
    use crate::solver::Wdl;
    use crate::tablebase;

    #[test]
    fn only_cars_out_of_reach_make_a_decided_race() {
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
        // A White car below a Black car's rank could still block it; White
        // is safe (west of every Black car) but needs 5 moves to Black's 3.
        let shared = parse_position("W4/5/3B1/1W2B/5 b").unwrap();
        assert_eq!(decided_race(&shared, 0), None);
        // The same with White's cars nearer home: White, safe and to move,
        // needs 1 + 2 = 3 moves to Black's 3: it wins in 5 plies, whatever
        // Black does.
        let safe = parse_position("W4/1W3/3B1/4B/5 w").unwrap();
        assert_eq!(decided_race(&safe, 0), Some(MATE - 5));
    }

    /// Every 4 x 4 position met in random games that the rule calls
    /// decided has that winner in the solved tables. (The built-in tables
    /// store the distance to progress, not to the end, so the distances
    /// the rule gives are not checked here.)
    #[test]
    fn agrees_with_the_solved_4x4_tables() {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for rules in Rules::ALL {
            let table = tablebase::builtin(4, rules).expect("the built-in 4x4 table");
            let (mut checked, mut one_sided) = (0, 0);
            for _ in 0..3000 {
                let mut position = Position::start(4);
                while position.cars(Color::Black) != 0 && position.cars(Color::White) != 0 {
                    if let Some(score) = decided_race(&position, 0) {
                        let truth = table.probe(&position).expect("a 4x4 position").wdl();
                        let claimed = if score > 0 { Wdl::Win } else { Wdl::Loss };
                        assert_eq!(claimed, truth, "{rules:?} {position:?}");
                        checked += 1;
                        one_sided += usize::from(!is_passed(&position));
                    }
                    let moves = position.legal_moves();
                    let moves = moves.as_slice();
                    if moves.is_empty() {
                        break;
                    }
                    position = position.play(moves[random(moves.len())]);
                }
            }
            assert!(checked > 1000 && one_sided > 100, "{checked} {one_sided}");
        }
    }

    /// Whether the cars have passed each other (both sides safe).
    fn is_passed(position: &Position) -> bool {
        let (black, white) = (position.cars(Color::Black), position.cars(Color::White));
        let black_min_file = files(black).trailing_zeros();
        let white_max_file = 63 - files(white).leading_zeros();
        let white_min_rank = white.trailing_zeros() / RANK_STRIDE as u32;
        let black_max_rank = (63 - black.leading_zeros()) / RANK_STRIDE as u32;
        black_min_file > white_max_file && white_min_rank > black_max_rank
    }
}
