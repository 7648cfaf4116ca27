//! The Dodgem board: cars, moves, move generation and the end of the game.
//!
//! Squares are numbered `rank * 8 + file` (0-based) whatever the board size,
//! so every board from 3 x 3 to 8 x 8 fits one `u64` bitboard per side and
//! one shift moves every car of a side one square in one direction.
//!
//! Positions are small `Copy` values; [`Position::play`] returns the child
//! position (copy-make), keeping the Zobrist key up to date incrementally.

use std::fmt;

use crate::zobrist;

/// Smallest supported board size.
pub const MIN_SIZE: usize = 3;
/// Largest supported board size (one square per bit of a `u64`).
pub const MAX_SIZE: usize = 8;
/// Squares from one rank to the next in the numbering: `MAX_SIZE` on
/// every board, so a shift by this moves a car one rank.
pub const RANK_STRIDE: usize = MAX_SIZE;
/// Square numbers in use: one per bit of a bitboard.
pub const SQUARES: usize = RANK_STRIDE * MAX_SIZE;
/// Directions a car can move in.
const DIRECTIONS: usize = 4;

/// The two sides. Black drives east and moves first; White drives north.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    Black,
    White,
}

impl Color {
    /// The opponent.
    pub fn other(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// `0` for Black, `1` for White: an index into per-side arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The side's name as players say it.
    pub fn name(self) -> &'static str {
        match self {
            Color::Black => "Black",
            Color::White => "White",
        }
    }

    /// The side's name in lower case, as the GUI's JSON and the
    /// referee's results file write it.
    pub fn key(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// The side a name (as [`Color::name`] gives it, any case) names.
    pub fn from_name(name: &str) -> Option<Color> {
        [Color::Black, Color::White]
            .into_iter()
            .find(|color| color.name().eq_ignore_ascii_case(name))
    }
}

/// What happens to a side that is to move but has no legal move.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Rules {
    /// The blocked side loses (the course material's rule; the default).
    #[default]
    Textbook,
    /// The blocked side wins (*Winning Ways*, most published analysis).
    Classic,
}

impl Rules {
    pub const ALL: [Rules; 2] = [Rules::Textbook, Rules::Classic];

    /// The option value naming this rule.
    pub const fn name(self) -> &'static str {
        match self {
            Rules::Textbook => "textbook",
            Rules::Classic => "classic",
        }
    }

    /// Parses an option value (case-insensitive).
    pub fn from_name(name: &str) -> Option<Rules> {
        Rules::ALL
            .into_iter()
            .find(|rules| rules.name().eq_ignore_ascii_case(name))
    }
}

/// A name that is no rule (see [`Rules::from_str`](std::str::FromStr)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownRules(pub String);

impl fmt::Display for UnknownRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown rules '{}' (expected textbook or classic)",
            self.0
        )
    }
}

impl std::error::Error for UnknownRules {}

impl std::str::FromStr for Rules {
    type Err = UnknownRules;

    /// Reads a rule's name, case-insensitive (`textbook`, `classic`).
    fn from_str(name: &str) -> Result<Rules, UnknownRules> {
        Rules::from_name(name).ok_or_else(|| UnknownRules(name.to_string()))
    }
}

/// Checks a board size: the size if it is supported.
pub fn check_size(size: usize) -> Result<usize, BadSize> {
    if (MIN_SIZE..=MAX_SIZE).contains(&size) {
        Ok(size)
    } else {
        Err(BadSize(size))
    }
}

/// A board size outside [`MIN_SIZE`]`..=`[`MAX_SIZE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadSize(pub usize);

impl fmt::Display for BadSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "board size {} is outside {MIN_SIZE}..{MAX_SIZE}", self.0)
    }
}

impl std::error::Error for BadSize {}

/// The four directions a car can drive in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    East,
    North,
    South,
    West,
}

impl Direction {
    const ALL: [Direction; DIRECTIONS] = [
        Direction::East,
        Direction::North,
        Direction::South,
        Direction::West,
    ];

    /// `(file, rank)` step of one square in this direction.
    pub fn step(self) -> (i32, i32) {
        match self {
            Direction::East => (1, 0),
            Direction::North => (0, 1),
            Direction::South => (0, -1),
            Direction::West => (-1, 0),
        }
    }

    /// The direction that takes `color`'s cars towards their exit.
    pub fn forward(color: Color) -> Direction {
        match color {
            Color::Black => Direction::East,
            Color::White => Direction::North,
        }
    }
}

/// A square index, `rank * RANK_STRIDE + file`, both 0-based.
pub type Square = u8;

/// The square at `file`, `rank` (0-based).
pub fn square(file: usize, rank: usize) -> Square {
    (rank * RANK_STRIDE + file) as Square
}

/// File of a square, 0-based.
pub fn file_of(sq: Square) -> usize {
    sq as usize % RANK_STRIDE
}

/// Rank of a square, 0-based.
pub fn rank_of(sq: Square) -> usize {
    sq as usize / RANK_STRIDE
}

/// One car moving one square (possibly off the board). The null move is
/// represented as `Option::<Move>::None` by callers that need it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    pub from: Square,
    pub dir: Direction,
}

impl Move {
    pub fn new(from: Square, dir: Direction) -> Move {
        Move { from, dir }
    }

    /// A compact non-zero code (for the transposition table); see [`Move::from_code`].
    pub fn code(self) -> u16 {
        (self.from as u16) * DIRECTIONS as u16 + self.dir as u16 + 1
    }

    /// Inverse of [`Move::code`]; `0` (and anything out of range) is no move.
    pub fn from_code(code: u16) -> Option<Move> {
        if code == 0 || code > (SQUARES * DIRECTIONS) as u16 {
            return None;
        }
        let raw = code - 1;
        Some(Move::new(
            (raw / DIRECTIONS as u16) as Square,
            Direction::ALL[(raw % DIRECTIONS as u16) as usize],
        ))
    }

    /// The destination as (file, rank), which may lie just past the board's edge.
    pub fn to_coords(self) -> (i32, i32) {
        let (df, dr) = self.dir.step();
        (
            file_of(self.from) as i32 + df,
            rank_of(self.from) as i32 + dr,
        )
    }

    /// Whether this move drives the car off a board of `size`.
    pub fn is_exit(self, size: usize) -> bool {
        let (file, rank) = self.to_coords();
        file >= size as i32 || rank >= size as i32
    }

    /// Whether this move, made by `color`, can never be undone (forward
    /// moves and exits). Only sideways moves can take part in a repetition.
    pub fn is_irreversible(self, color: Color) -> bool {
        self.dir == Direction::forward(color)
    }
}

/// At most 7 cars with at most 3 moves each.
pub const MAX_MOVES: usize = 21;

/// A fixed-capacity list of moves, filled by [`Position::legal_moves`].
#[derive(Clone, Copy)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::new(0, Direction::East); MAX_MOVES],
            len: 0,
        }
    }

    fn push(&mut self, mv: Move) {
        self.moves[self.len] = mv;
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }

    pub fn contains(&self, mv: Move) -> bool {
        self.as_slice().contains(&mv)
    }

    /// Keeps only the moves for which `keep` is true, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(Move) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            if keep(self.moves[i]) {
                self.moves[kept] = self.moves[i];
                kept += 1;
            }
        }
        self.len = kept;
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

/// Why a side won.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    /// The winner has driven every car off the board.
    AllCarsOff,
    /// This side was to move with no legal move (it wins or loses per the rules).
    Blocked(Color),
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Win(Color, WinReason),
    /// The same position (cars and side to move) occurred a third time.
    DrawByRepetition,
}

impl Outcome {
    /// The winner, if any.
    pub fn winner(self) -> Option<Color> {
        match self {
            Outcome::Win(color, _) => Some(color),
            Outcome::DrawByRepetition => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Outcome::Win(winner, WinReason::AllCarsOff) => {
                write!(f, "{} wins: all its cars are off the board", winner.name())
            }
            Outcome::Win(winner, WinReason::Blocked(blocked)) => {
                let rule = if winner == blocked {
                    "under the classic rule a blocked side wins"
                } else {
                    "under the textbook rule a blocked side loses"
                };
                let (w, b) = (winner.name(), blocked.name());
                write!(
                    f,
                    "{w} wins: {b} is to move and has no legal move, and {rule}"
                )
            }
            Outcome::DrawByRepetition => write!(f, "draw by threefold repetition"),
        }
    }
}

/// Bitboard masks for one board size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Masks {
    /// Every square of the board.
    pub board: u64,
    pub first_file: u64,
    /// Black's exit line.
    pub last_file: u64,
    /// White's exit line.
    pub last_rank: u64,
}

const fn masks(size: usize) -> Masks {
    let mut board = 0u64;
    let mut first_file = 0u64;
    let mut last_file = 0u64;
    let mut last_rank = 0u64;
    let mut rank = 0;
    while rank < size {
        let mut file = 0;
        while file < size {
            let bit = 1u64 << (rank * RANK_STRIDE + file);
            board |= bit;
            if file == 0 {
                first_file |= bit;
            }
            if file == size - 1 {
                last_file |= bit;
            }
            if rank == size - 1 {
                last_rank |= bit;
            }
            file += 1;
        }
        rank += 1;
    }
    Masks {
        board,
        first_file,
        last_file,
        last_rank,
    }
}

const MASKS: [Masks; MAX_SIZE + 1] = {
    let mut all = [masks(0); MAX_SIZE + 1];
    let mut size = MIN_SIZE;
    while size <= MAX_SIZE {
        all[size] = masks(size);
        size += 1;
    }
    all
};

/// A Dodgem position: board size, both sides' cars and the side to move.
///
/// The rule variant is not part of the position; it is a parameter of the
/// game, passed to [`Position::outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    size: u8,
    side: Color,
    cars: [u64; 2],
    key: u64,
}

impl Position {
    /// The start position on a `size` x `size` board: Black on file a from
    /// rank 2 up, White on rank 1 from file b right, Black to move.
    ///
    /// # Panics
    /// If `size` is outside `MIN_SIZE..=MAX_SIZE`.
    pub fn start(size: usize) -> Position {
        assert!(
            (MIN_SIZE..=MAX_SIZE).contains(&size),
            "bad board size {size}"
        );
        let mut black = 0;
        let mut white = 0;
        for i in 1..size {
            black |= 1u64 << square(0, i);
            white |= 1u64 << square(i, 0);
        }
        Position::from_parts(size, black, white, Color::Black)
    }

    /// A position from bitboards. The caller guarantees a valid size and
    /// that the cars lie on the board and do not overlap (see `notation`).
    pub(crate) fn from_parts(size: usize, black: u64, white: u64, side: Color) -> Position {
        debug_assert!((MIN_SIZE..=MAX_SIZE).contains(&size));
        debug_assert_eq!(black & white, 0);
        debug_assert_eq!((black | white) & !MASKS[size].board, 0);
        let mut position = Position {
            size: size as u8,
            side,
            cars: [black, white],
            key: 0,
        };
        position.key = position.compute_key();
        position
    }

    pub fn size(&self) -> usize {
        self.size as usize
    }

    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The bitboard masks of this position's board size.
    pub fn masks(&self) -> Masks {
        MASKS[self.size()]
    }

    /// The bitboard of `color`'s cars.
    pub fn cars(&self, color: Color) -> u64 {
        self.cars[color.index()]
    }

    /// Which side's car stands on `sq`, if any.
    pub fn car_at(&self, sq: Square) -> Option<Color> {
        let bit = 1u64 << sq;
        if self.cars[0] & bit != 0 {
            Some(Color::Black)
        } else if self.cars[1] & bit != 0 {
            Some(Color::White)
        } else {
            None
        }
    }

    /// Number of `color`'s cars already driven off the board.
    pub fn cars_off(&self, color: Color) -> usize {
        self.size() - 1 - self.cars(color).count_ones() as usize
    }

    /// The Zobrist key (see `zobrist`), kept up to date by [`Position::play`].
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Recomputes the Zobrist key from scratch (tests check it against the
    /// incremental one).
    pub fn compute_key(&self) -> u64 {
        let mut key = zobrist::size_key(self.size());
        for color in [Color::Black, Color::White] {
            let mut cars = self.cars(color);
            while cars != 0 {
                key ^= zobrist::car_key(color, cars.trailing_zeros() as Square);
                cars &= cars - 1;
            }
        }
        if self.side == Color::White {
            key ^= zobrist::side_key();
        }
        key
    }

    fn empty(&self) -> u64 {
        MASKS[self.size()].board & !(self.cars[0] | self.cars[1])
    }

    /// Every legal move: exits first, then forward moves,
    /// then sideways moves (a useful order for the search). A finished game
    /// (either side has no cars) has no moves.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        if self.cars[0] == 0 || self.cars[1] == 0 {
            return list;
        }
        let masks = MASKS[self.size()];
        let empty = self.empty();
        let own = self.cars(self.side);
        let push_all = |list: &mut MoveList, mut froms: u64, dir: Direction| {
            while froms != 0 {
                list.push(Move::new(froms.trailing_zeros() as Square, dir));
                froms &= froms - 1;
            }
        };
        match self.side {
            Color::Black => {
                push_all(&mut list, own & masks.last_file, Direction::East);
                push_all(
                    &mut list,
                    own & !masks.last_file & (empty >> 1),
                    Direction::East,
                );
                push_all(&mut list, own & (empty >> RANK_STRIDE), Direction::North);
                push_all(&mut list, own & (empty << RANK_STRIDE), Direction::South);
            }
            Color::White => {
                push_all(&mut list, own & masks.last_rank, Direction::North);
                push_all(
                    &mut list,
                    own & !masks.last_rank & (empty >> RANK_STRIDE),
                    Direction::North,
                );
                push_all(
                    &mut list,
                    own & !masks.last_file & (empty >> 1),
                    Direction::East,
                );
                push_all(
                    &mut list,
                    own & !masks.first_file & (empty << 1),
                    Direction::West,
                );
            }
        }
        list
    }

    /// The number of legal moves, without listing them.
    pub fn count_moves(&self) -> u32 {
        if self.cars[0] == 0 || self.cars[1] == 0 {
            return 0;
        }
        let masks = MASKS[self.size()];
        let empty = self.empty();
        let own = self.cars(self.side);
        match self.side {
            Color::Black => {
                (own & masks.last_file).count_ones()
                    + (own & !masks.last_file & (empty >> 1)).count_ones()
                    + (own & (empty >> RANK_STRIDE)).count_ones()
                    + (own & (empty << RANK_STRIDE)).count_ones()
            }
            Color::White => {
                (own & masks.last_rank).count_ones()
                    + (own & !masks.last_rank & (empty >> RANK_STRIDE)).count_ones()
                    + (own & !masks.last_file & (empty >> 1)).count_ones()
                    + (own & !masks.first_file & (empty << 1)).count_ones()
            }
        }
    }

    /// Whether the side to move has one car left and it stands on its exit
    /// line: it wins by driving off, a move that is always legal.
    pub fn can_win_next_move(&self) -> bool {
        let own = self.cars(self.side);
        let exit_line = match self.side {
            Color::Black => MASKS[self.size()].last_file,
            Color::White => MASKS[self.size()].last_rank,
        };
        own.count_ones() == 1 && own & exit_line != 0 && self.cars(self.side.other()) != 0
    }

    /// Whether `mv` is legal here.
    pub fn is_legal(&self, mv: Move) -> bool {
        self.legal_moves().contains(mv)
    }

    /// The position after `mv`, which must be legal (checked in debug builds).
    pub fn play(&self, mv: Move) -> Position {
        debug_assert!(self.is_legal(mv), "illegal move {mv:?}");
        let color = self.side;
        let mut next = *self;
        let from_bit = 1u64 << mv.from;
        next.cars[color.index()] ^= from_bit;
        next.key ^= zobrist::car_key(color, mv.from) ^ zobrist::side_key();
        if !mv.is_exit(self.size()) {
            let to = match mv.dir {
                Direction::East => mv.from + 1,
                Direction::North => mv.from + RANK_STRIDE as Square,
                Direction::South => mv.from - RANK_STRIDE as Square,
                Direction::West => mv.from - 1,
            };
            next.cars[color.index()] |= 1u64 << to;
            next.key ^= zobrist::car_key(color, to);
        }
        next.side = color.other();
        next
    }

    /// The position with the other side to move (for analysis only; not a
    /// legal Dodgem move).
    pub fn with_side_to_move(&self, side: Color) -> Position {
        Position::from_parts(self.size(), self.cars[0], self.cars[1], side)
    }

    /// Whether the game is over here under `rules`, and how; repetition is
    /// a property of the game's history and is judged by the caller.
    pub fn outcome(&self, rules: Rules) -> Option<Outcome> {
        let side = self.side;
        if self.cars(side.other()) == 0 {
            return Some(Outcome::Win(side.other(), WinReason::AllCarsOff));
        }
        if self.cars(side) == 0 {
            return Some(Outcome::Win(side, WinReason::AllCarsOff));
        }
        if self.count_moves() == 0 {
            let winner = match rules {
                Rules::Textbook => side.other(),
                Rules::Classic => side,
            };
            return Some(Outcome::Win(winner, WinReason::Blocked(side)));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_side_names_in_any_case() {
        for color in [Color::Black, Color::White] {
            assert_eq!(Color::from_name(color.name()), Some(color));
            assert_eq!(Color::from_name(color.key()), Some(color));
            assert_eq!(color.key(), color.name().to_lowercase());
        }
        assert_eq!(Color::from_name("red"), None);
    }

    #[test]
    fn reads_rules_and_checks_sizes() {
        assert_eq!("Classic".parse(), Ok(Rules::Classic));
        assert_eq!("textbook".parse(), Ok(Rules::Textbook));
        let error = "house".parse::<Rules>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown rules 'house' (expected textbook or classic)"
        );
        assert_eq!(check_size(MIN_SIZE), Ok(MIN_SIZE));
        assert_eq!(check_size(MAX_SIZE), Ok(MAX_SIZE));
        assert_eq!(
            check_size(9).unwrap_err().to_string(),
            "board size 9 is outside 3..8"
        );
        assert!(check_size(2).is_err());
    }
}
