//! Moves and un-moves on dense car masks (square = `rank * size + file`),
//! the solver's own fast move generator. Tests check it against
//! [`crate::Position::legal_moves`].

use crate::board::Color;

/// Masks of the board edges for one size.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    size: u32,
    full: u32,
    first_file: u32,
    last_file: u32,
    last_rank: u32,
}

/// A position on dense masks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cars {
    pub black: u32,
    pub white: u32,
}

impl Cars {
    pub fn of(self, color: Color) -> u32 {
        match color {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }

    fn with(self, color: Color, set: u32) -> Cars {
        match color {
            Color::Black => Cars { black: set, ..self },
            Color::White => Cars { white: set, ..self },
        }
    }

    fn occupied(self) -> u32 {
        self.black | self.white
    }
}

/// What the side to move can do, in summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveSummary {
    /// Number of legal moves.
    pub count: u32,
    /// Some move takes the mover's last car off the board.
    pub wins_at_once: bool,
}

impl Geometry {
    pub fn new(size: usize) -> Geometry {
        let size = size as u32;
        let mut first_file = 0;
        let mut last_file = 0;
        for rank in 0..size {
            first_file |= 1 << (rank * size);
            last_file |= 1 << (rank * size + size - 1);
        }
        let full = if size * size == 32 {
            u32::MAX
        } else {
            (1 << (size * size)) - 1
        };
        let last_rank = ((1 << size) - 1) << (size * (size - 1));
        Geometry {
            size,
            full,
            first_file,
            last_file,
            last_rank,
        }
    }

    /// Squares from which `color`'s cars leave the board.
    fn exit_edge(&self, color: Color) -> u32 {
        match color {
            Color::Black => self.last_file,
            Color::White => self.last_rank,
        }
    }

    /// Empty squares that cars of `color` on `from` can reach in one step,
    /// one mask per direction the colour may drive (exits excluded).
    fn targets(&self, color: Color, from: u32, empty: u32) -> [u32; 3] {
        let n = self.size;
        let east = ((from & !self.last_file) << 1) & empty;
        let north = ((from & !self.last_rank) << n) & empty;
        match color {
            Color::Black => [east, north, (from >> n) & empty],
            Color::White => [north, east, ((from & !self.first_file) >> 1) & empty],
        }
    }

    /// Counts the moves of `side`.
    pub fn summary(&self, cars: Cars, side: Color) -> MoveSummary {
        let own = cars.of(side);
        let empty = self.full & !cars.occupied();
        let exits = own & self.exit_edge(side);
        let steps: u32 = self
            .targets(side, own, empty)
            .iter()
            .map(|t| t.count_ones())
            .sum();
        MoveSummary {
            count: steps + exits.count_ones(),
            wins_at_once: exits != 0 && own.count_ones() == 1,
        }
    }

    /// Calls `visit` with every position reachable by one move of `side`
    /// that leaves both sides with a car on the board; returns whether some
    /// move takes `side`'s last car off instead (a finished game).
    pub fn successors(&self, cars: Cars, side: Color, mut visit: impl FnMut(Cars)) -> bool {
        let own = cars.of(side);
        let empty = self.full & !cars.occupied();
        for car in squares(own) {
            let without = own & !car;
            for target in self.targets(side, car, empty) {
                if target != 0 {
                    visit(cars.with(side, without | target));
                }
            }
        }
        let exits = own & self.exit_edge(side);
        if own.count_ones() == 1 {
            return exits != 0;
        }
        for car in squares(exits) {
            visit(cars.with(side, own & !car));
        }
        false
    }

    /// Calls `visit` with every position from which one move of `mover`
    /// leads to `cars`. `max_cars` is the number of cars a side starts with.
    pub fn predecessors(
        &self,
        cars: Cars,
        mover: Color,
        max_cars: u32,
        mut visit: impl FnMut(Cars),
    ) {
        let n = self.size;
        let own = cars.of(mover);
        let empty = self.full & !cars.occupied();
        for car in squares(own) {
            let without = own & !car;
            // Origins one step back along each direction the mover drives.
            let from_west = (car & !self.first_file) >> 1;
            let from_south = car >> n;
            let origins = match mover {
                Color::Black => {
                    let from_north = ((car & !self.last_rank) << n) & self.full;
                    [from_west, from_south, from_north]
                }
                Color::White => {
                    let from_east = (car & !self.last_file) << 1;
                    [from_south, from_west, from_east]
                }
            };
            for origin in origins {
                if origin & empty != 0 {
                    visit(cars.with(mover, without | origin));
                }
            }
        }
        if own.count_ones() < max_cars {
            for square in squares(self.exit_edge(mover) & empty) {
                visit(cars.with(mover, own | square));
            }
        }
    }
}

/// The squares of `mask`, each as a one-bit mask, lowest first.
fn squares(mut mask: u32) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        let square = mask & mask.wrapping_neg();
        mask &= mask.wrapping_sub(1);
        (square != 0).then_some(square)
    })
}
