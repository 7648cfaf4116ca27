//! Text forms of squares, moves and positions, parsed and printed.
//!
//! - Square: file letter + rank number, `a1` bottom-left.
//! - Move: from-square + to-square, `a2b2`; a car leaving the board names
//!   the square just past the edge (`c2d2` for Black on 3 x 3, `b3b4` for
//!   White); the null move is `0000`.
//! - Position string: ranks from the top down separated by `/`, `B` and `W`
//!   for cars, a digit for a run of empty squares, a space, then `b` or `w`
//!   for the side to move. The 3 x 3 start is `B2/B2/1WW b`.
//!
//! ```
//! use dodgem::{notation, Position};
//! let start = notation::parse_position("B2/B2/1WW b").unwrap();
//! assert_eq!(start, Position::start(3));
//! assert_eq!(notation::format_position(&start), "B2/B2/1WW b");
//! ```

use std::fmt;

use crate::protocol::{escape, quote};

use crate::board::{
    BadSize, Color, Direction, MAX_SIZE, MIN_SIZE, Move, Position, Square, check_size, file_of,
    rank_of, square,
};

/// Why a position string was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionError {
    Empty,
    MissingSideToMove,
    BadSideToMove(String),
    TrailingText(String),
    SizeOutOfRange(usize),
    NotSquare {
        rank: usize,
        width: usize,
        size: usize,
    },
    UnknownCharacter(char),
    TooManyCars {
        color: Color,
        count: usize,
        max: usize,
    },
    NoCars,
}

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionError::Empty => write!(f, "empty position string"),
            PositionError::MissingSideToMove => {
                write!(
                    f,
                    "missing side to move (expected 'b' or 'w' after the board)"
                )
            }
            PositionError::BadSideToMove(text) => {
                write!(f, "bad side to move {} (expected 'b' or 'w')", quote(text))
            }
            PositionError::TrailingText(text) => {
                write!(f, "unexpected text {} after the side to move", quote(text))
            }
            PositionError::SizeOutOfRange(size) => write!(
                f,
                "board has {size} rank{}; sizes {MIN_SIZE} to {MAX_SIZE} are supported",
                if *size == 1 { "" } else { "s" }
            ),
            PositionError::NotSquare { rank, width, size } => write!(
                f,
                "board is not square: rank {rank} has {width} squares, expected {size}"
            ),
            PositionError::UnknownCharacter(c) => write!(
                f,
                "unknown character {} in board (expected B, W, / or a digit 1-{MAX_SIZE})",
                quote(&c.to_string())
            ),
            PositionError::TooManyCars { color, count, max } => write!(
                f,
                "{} has {count} cars; at most {max} fit this board size",
                color.name()
            ),
            PositionError::NoCars => write!(f, "neither side has a car on the board"),
        }
    }
}

impl std::error::Error for PositionError {}

/// Parses a position string (see the module docs).
///
/// # Errors
/// A [`PositionError`] naming the first problem found.
pub fn parse_position(text: &str) -> Result<Position, PositionError> {
    let mut fields = text.split_whitespace();
    let board = fields.next().ok_or(PositionError::Empty)?;
    let side = match fields.next() {
        None => return Err(PositionError::MissingSideToMove),
        Some("b") | Some("B") => Color::Black,
        Some("w") | Some("W") => Color::White,
        Some(other) => return Err(PositionError::BadSideToMove(other.to_string())),
    };
    if let Some(extra) = fields.next() {
        return Err(PositionError::TrailingText(extra.to_string()));
    }
    let ranks: Vec<&str> = board.split('/').collect();
    let size = ranks.len();
    if let Some(c) = board
        .chars()
        .find(|c| !matches!(c, 'B' | 'W' | '/' | '1'..='9'))
    {
        return Err(PositionError::UnknownCharacter(c));
    }
    check_size(size).map_err(|BadSize(size)| PositionError::SizeOutOfRange(size))?;
    let mut cars = [0u64; 2];
    for (row, text) in ranks.iter().enumerate() {
        let rank = size - 1 - row;
        let mut file = 0usize;
        for c in text.chars() {
            match c {
                'B' | 'W' => {
                    if file < size {
                        let color = if c == 'B' { Color::Black } else { Color::White };
                        cars[color.index()] |= 1u64 << square(file, rank);
                    }
                    file += 1;
                }
                digit => file += digit.to_digit(10).unwrap_or(0) as usize,
            }
        }
        if file != size {
            return Err(PositionError::NotSquare {
                rank: rank + 1,
                width: file,
                size,
            });
        }
    }
    for color in [Color::Black, Color::White] {
        let count = cars[color.index()].count_ones() as usize;
        if count > size - 1 {
            return Err(PositionError::TooManyCars {
                color,
                count,
                max: size - 1,
            });
        }
    }
    if cars[0] == 0 && cars[1] == 0 {
        return Err(PositionError::NoCars);
    }
    Ok(Position::from_parts(size, cars[0], cars[1], side))
}

/// Prints a position string (see the module docs).
pub fn format_position(position: &Position) -> String {
    let size = position.size();
    let mut out = String::new();
    for rank in (0..size).rev() {
        let mut empty = 0;
        for file in 0..size {
            match position.car_at(square(file, rank)) {
                None => empty += 1,
                Some(color) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(if color == Color::Black { 'B' } else { 'W' });
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out.push(' ');
    out.push(match position.side_to_move() {
        Color::Black => 'b',
        Color::White => 'w',
    });
    out
}

/// Prints a square, `a1` bottom-left. Works for the squares just past the
/// board's edge too (`d2` on 3 x 3), as exits name them.
pub fn format_coords(file: i32, rank: i32) -> String {
    format!("{}{}", (b'a' + file as u8) as char, rank + 1)
}

/// Prints a square index.
pub fn format_square(sq: Square) -> String {
    format_coords(file_of(sq) as i32, rank_of(sq) as i32)
}

/// Prints a move, `a2b2`; `None` is the null move `0000`.
pub fn format_move(mv: Option<Move>) -> String {
    match mv {
        None => "0000".to_string(),
        Some(mv) => {
            let (file, rank) = mv.to_coords();
            format!("{}{}", format_square(mv.from), format_coords(file, rank))
        }
    }
}

/// Prints moves, sorted alphabetically (how lists of moves are shown).
pub fn format_moves_sorted(moves: &[Move]) -> Vec<String> {
    let mut names: Vec<String> = moves.iter().map(|&mv| format_move(Some(mv))).collect();
    names.sort();
    names
}

/// Why a move could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveError {
    /// Not of the form `<file><rank><file><rank>`.
    Syntax(String),
    /// The from-square is not on this board.
    OffBoard(String),
    /// The two squares are not one step apart.
    NotAStep(String),
    /// Well-formed, but not legal in the position.
    Illegal(String),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Syntax(m) => write!(
                f,
                "{} is not a move (expected from-square and to-square, like a2b2)",
                quote(m)
            ),
            MoveError::OffBoard(m) => write!(f, "move {} starts off the board", escape(m)),
            MoveError::NotAStep(m) => write!(
                f,
                "move {} is not a step of one square east, west, north or south",
                escape(m)
            ),
            MoveError::Illegal(m) => write!(f, "move {} is illegal in this position", escape(m)),
        }
    }
}

impl std::error::Error for MoveError {}

fn parse_coords(text: &[u8]) -> Option<(i32, i32)> {
    match text {
        [f @ b'a'..=b'z', r @ b'1'..=b'9'] => Some(((f - b'a') as i32, (r - b'1') as i32)),
        _ => None,
    }
}

/// Reads a move for a board of `size`, checking its form only: `Ok(None)`
/// is the null move `0000`.
///
/// # Errors
/// [`MoveError::Syntax`], [`MoveError::OffBoard`] or [`MoveError::NotAStep`].
pub fn parse_move_syntax(text: &str, size: usize) -> Result<Option<Move>, MoveError> {
    if text == "0000" {
        return Ok(None);
    }
    let bytes = text.as_bytes();
    let (from, to) = match bytes.len() {
        4 => (parse_coords(&bytes[..2]), parse_coords(&bytes[2..])),
        _ => (None, None),
    };
    let (Some(from), Some(to)) = (from, to) else {
        return Err(MoveError::Syntax(text.to_string()));
    };
    let on_board = |(f, r): (i32, i32)| f < size as i32 && r < size as i32;
    if !on_board(from) {
        return Err(MoveError::OffBoard(text.to_string()));
    }
    let step = (to.0 - from.0, to.1 - from.1);
    let dir = [
        Direction::East,
        Direction::North,
        Direction::South,
        Direction::West,
    ]
    .into_iter()
    .find(|d| d.step() == step)
    .ok_or_else(|| MoveError::NotAStep(text.to_string()))?;
    Ok(Some(Move::new(
        square(from.0 as usize, from.1 as usize),
        dir,
    )))
}

/// Reads a move and checks that it is legal in `position`.
///
/// # Errors
/// As [`parse_move_syntax`], plus [`MoveError::Illegal`] (the null move is
/// never legal: Dodgem has no passing).
pub fn parse_move(text: &str, position: &Position) -> Result<Move, MoveError> {
    match parse_move_syntax(text, position.size())? {
        Some(mv) if position.is_legal(mv) => Ok(mv),
        _ => Err(MoveError::Illegal(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_round_trip() {
        let expected = [
            (3, "B2/B2/1WW b"),
            (4, "B3/B3/B3/1WWW b"),
            (8, "B7/B7/B7/B7/B7/B7/B7/1WWWWWWW b"),
        ];
        for (size, text) in expected {
            let start = Position::start(size);
            assert_eq!(format_position(&start), text);
            assert_eq!(parse_position(text).unwrap(), start);
        }
    }

    #[test]
    fn rejects_bad_positions_with_a_reason() {
        let cases = [
            ("", PositionError::Empty),
            ("B2/B2/1WW", PositionError::MissingSideToMove),
            ("B2/B2/1WW x", PositionError::BadSideToMove("x".into())),
            ("B2/B2/1WW b 3", PositionError::TrailingText("3".into())),
            (
                "B1/B2/1WW b",
                PositionError::NotSquare {
                    rank: 3,
                    width: 2,
                    size: 3,
                },
            ),
            (
                "B2/B2/1WWW b",
                PositionError::NotSquare {
                    rank: 1,
                    width: 4,
                    size: 3,
                },
            ),
            ("B1/B1 b", PositionError::SizeOutOfRange(2)),
            ("9/9/9/9/9/9/9/9/9 b", PositionError::SizeOutOfRange(9)),
            ("B2/Bx1/1WW b", PositionError::UnknownCharacter('x')),
            (
                "BB1/B2/1WW b",
                PositionError::TooManyCars {
                    color: Color::Black,
                    count: 3,
                    max: 2,
                },
            ),
            ("3/3/3 w", PositionError::NoCars),
        ];
        for (text, error) in cases {
            assert_eq!(parse_position(text), Err(error.clone()), "{text}");
            assert!(!error.to_string().is_empty());
        }
    }

    #[test]
    fn moves_round_trip_including_exits() {
        let position = parse_position("2B/3/WW1 b").unwrap();
        let exit = parse_move("c3d3", &position).unwrap();
        assert!(exit.is_exit(3));
        assert_eq!(format_move(Some(exit)), "c3d3");
        let white = parse_position("1W1/B2/B2 w").unwrap();
        let exit = parse_move("b3b4", &white).unwrap();
        assert_eq!(format_move(Some(exit)), "b3b4");
        assert_eq!(parse_move_syntax("0000", 3), Ok(None));
        assert_eq!(format_move(None), "0000");
    }

    #[test]
    fn rejects_bad_moves_with_a_reason() {
        let start = Position::start(3);
        assert!(matches!(
            parse_move("a3", &start),
            Err(MoveError::Syntax(_))
        ));
        assert!(matches!(
            parse_move("a3b3x", &start),
            Err(MoveError::Syntax(_))
        ));
        assert!(matches!(
            parse_move("d1e1", &start),
            Err(MoveError::OffBoard(_))
        ));
        assert!(matches!(
            parse_move("a3c3", &start),
            Err(MoveError::NotAStep(_))
        ));
        assert!(matches!(
            parse_move("a2a3", &start),
            Err(MoveError::Illegal(_))
        ));
        assert!(matches!(
            parse_move("b1b2", &start),
            Err(MoveError::Illegal(_))
        ));
        assert!(matches!(
            parse_move("0000", &start),
            Err(MoveError::Illegal(_))
        ));
        assert_eq!(
            parse_move("a3b3", &start).map(|m| format_move(Some(m))),
            Ok("a3b3".into())
        );
    }
}
