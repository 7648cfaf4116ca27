//! The values a table stores: win, draw or loss for the side to move with
//! a distance in plies ([`Dtz`]), their one-number codes ([`encode`]), a
//! layer's values in memory ([`Values`], [`WdlBits`]) and their counts
//! ([`Tally`]). Nothing here reads or writes files.

use crate::memory::zeroed_vec;

/// A stored value: win, draw or loss for the side to move, with the plies
/// to the next progress move (a forward move, an exit, or the end of the
/// game) under best play that keeps the result. The winner plays towards
/// the smallest distance, the loser towards the largest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtz {
    Win(u32),
    Draw,
    Loss(u32),
}

/// Win, draw or loss alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wdl {
    Win,
    Draw,
    Loss,
}

impl Dtz {
    /// The value a move gives the side that made it, from the value of the
    /// position it leads to (for the opponent): a progress move is itself
    /// the progress the distance counts to.
    pub fn through(self, progress: bool) -> Dtz {
        let plies = |d: u32| if progress { 1 } else { d + 1 };
        match self {
            Dtz::Win(d) => Dtz::Loss(plies(d)),
            Dtz::Loss(d) => Dtz::Win(plies(d)),
            Dtz::Draw => Dtz::Draw,
        }
    }

    /// Orders values from the side to move's view: larger is better
    /// (nearer wins, then draws, then farther losses).
    pub fn preference(self) -> i64 {
        match self {
            Dtz::Win(d) => i64::from(u32::MAX) - i64::from(d),
            Dtz::Draw => 0,
            Dtz::Loss(d) => i64::from(d) - i64::from(u32::MAX),
        }
    }

    pub fn wdl(self) -> Wdl {
        match self {
            Dtz::Win(_) => Wdl::Win,
            Dtz::Draw => Wdl::Draw,
            Dtz::Loss(_) => Wdl::Loss,
        }
    }
}

/// A slot's value in a file: 0 a draw (or no position), `2d + 1` a win
/// and `2d + 2` a loss with distance `d`; one byte a slot while every
/// distance of the layer is at most [`MAX_NARROW_DTZ`], two otherwise.
#[inline]
pub fn encode(value: Dtz) -> u16 {
    match value {
        Dtz::Draw => 0,
        Dtz::Win(d) => (2 * d + 1) as u16,
        Dtz::Loss(d) => (2 * d + 2) as u16,
    }
}

/// Inverse of [`encode`].
#[inline]
pub fn decode(code: u16) -> Dtz {
    match code {
        0 => Dtz::Draw,
        c if c % 2 == 1 => Dtz::Win(u32::from(c / 2)),
        c => Dtz::Loss(u32::from(c / 2 - 1)),
    }
}

/// Longest distance a one-byte value holds.
pub const MAX_NARROW_DTZ: u32 = 126;

/// Longest distance a [`Values::Packed`] value holds (codes below 512).
pub const MAX_PACKED_DTZ: u32 = 254;

/// A layer's values in index order ([`encode`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Values {
    Narrow(Vec<u8>),
    /// Codes below 512, as read from a two-byte file whose distances
    /// reach at most [`MAX_PACKED_DTZ`]: each code's low byte, and a bit
    /// a slot for its ninth bit (9 bits a value in memory, not 16).
    Packed {
        low: Vec<u8>,
        ninth: Vec<u64>,
    },
    Wide(Vec<u16>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Narrow(v) => v.len(),
            Values::Packed { low, .. } => low.len(),
            Values::Wide(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The encoded value of `slot`.
    #[inline]
    pub fn code(&self, slot: u64) -> u16 {
        match self {
            Values::Narrow(v) => u16::from(v[slot as usize]),
            Values::Packed { low, ninth } => packed_code(low, ninth, slot as usize),
            Values::Wide(v) => v[slot as usize],
        }
    }

    /// The value of `slot`.
    #[inline]
    pub fn get(&self, slot: u64) -> Dtz {
        decode(self.code(slot))
    }

    /// The longest win and the longest loss among the values (0 where
    /// there is none).
    pub fn longest_win_and_loss(&self) -> (u32, u32) {
        // Codes grow with the distance: a win's are odd, a loss's even.
        let (mut win, mut loss) = (0u16, 0u16);
        let mut see = |code: u16| {
            if code % 2 == 1 {
                win = win.max(code);
            } else {
                loss = loss.max(code);
            }
        };
        match self {
            Values::Narrow(codes) => codes.iter().for_each(|&code| see(u16::from(code))),
            _ => (0..self.len() as u64).for_each(|slot| see(self.code(slot))),
        }
        let distance = |code: u16| match decode(code) {
            Dtz::Win(d) | Dtz::Loss(d) => d,
            Dtz::Draw => 0,
        };
        (distance(win), distance(loss))
    }

    /// `slots` draws in the narrowest form that holds distances of up to
    /// `longest` plies: one byte a value, nine bits, or two bytes.
    pub fn draws(slots: usize, longest: u32) -> Values {
        if longest <= MAX_NARROW_DTZ {
            Values::Narrow(zeroed_vec(slots))
        } else if longest <= MAX_PACKED_DTZ {
            Values::Packed {
                low: zeroed_vec(slots),
                ninth: zeroed_vec(slots.div_ceil(64)),
            }
        } else {
            Values::Wide(zeroed_vec(slots))
        }
    }

    /// Sets the code of `slot` (one that its form holds: see
    /// [`Values::draws`]).
    pub fn set(&mut self, slot: u64, code: u16) {
        let i = slot as usize;
        match self {
            Values::Narrow(v) => v[i] = code as u8,
            Values::Packed { low, ninth } => set_packed(low, ninth, i, code),
            Values::Wide(v) => v[i] = code,
        }
    }

    /// The values cut into parts of `slots_each` slots (the last may be
    /// shorter), in order, for threads to fill side by side.
    ///
    /// # Panics
    /// If `slots_each` is not a positive multiple of 64 (a word of the
    /// ninth bits).
    pub fn parts_mut(&mut self, slots_each: usize) -> Vec<Part<'_>> {
        assert!(
            slots_each > 0 && slots_each.is_multiple_of(64),
            "parts of whole words"
        );
        match self {
            Values::Narrow(v) => v.chunks_mut(slots_each).map(Part::Narrow).collect(),
            Values::Packed { low, ninth } => low
                .chunks_mut(slots_each)
                .zip(ninth.chunks_mut(slots_each / 64))
                .map(|(low, ninth)| Part::Packed { low, ninth })
                .collect(),
            Values::Wide(v) => v.chunks_mut(slots_each).map(Part::Wide).collect(),
        }
    }

    /// Values from their codes ([`encode`]), one byte a slot when the
    /// longest distance among them (`longest`) allows.
    pub fn from_codes(codes: Vec<u16>, longest: u32) -> Values {
        if longest <= MAX_NARROW_DTZ {
            Values::Narrow(codes.into_iter().map(|v| v as u8).collect())
        } else {
            Values::Wide(codes)
        }
    }

    /// Bytes a value takes in the file.
    pub fn width(&self) -> usize {
        match self {
            Values::Narrow(_) => 1,
            Values::Packed { .. } | Values::Wide(_) => 2,
        }
    }

    /// Bytes held in memory.
    pub fn bytes(&self) -> usize {
        match self {
            Values::Narrow(v) => v.len(),
            Values::Packed { low, ninth } => low.len() + ninth.len() * 8,
            Values::Wide(v) => v.len() * 2,
        }
    }
}

/// The code of slot `i` of values of nine bits: its low byte, and its
/// bit of `ninth`.
#[inline]
fn packed_code(low: &[u8], ninth: &[u64], i: usize) -> u16 {
    let high = (ninth[i / 64] >> (i % 64)) & 1;
    u16::from(low[i]) | (high as u16) << 8
}

#[inline]
fn set_packed(low: &mut [u8], ninth: &mut [u64], i: usize, code: u16) {
    low[i] = code as u8;
    let bit = 1u64 << (i % 64);
    if code >> 8 & 1 == 1 {
        ninth[i / 64] |= bit;
    } else {
        ninth[i / 64] &= !bit;
    }
}

/// A run of slots of [`Values`] ([`Values::parts_mut`]), its slots
/// counted from the part's first.
pub enum Part<'a> {
    Narrow(&'a mut [u8]),
    Packed {
        low: &'a mut [u8],
        ninth: &'a mut [u64],
    },
    Wide(&'a mut [u16]),
}

impl Part<'_> {
    /// Replaces each code of the slots `range` by `new(code)` (which the
    /// part's form holds).
    #[inline]
    pub fn update(&mut self, range: std::ops::Range<usize>, new: impl Fn(u16) -> u16) {
        match self {
            Part::Narrow(v) => v[range]
                .iter_mut()
                .for_each(|x| *x = new(u16::from(*x)) as u8),
            Part::Packed { low, ninth } => {
                for i in range {
                    set_packed(low, ninth, i, new(packed_code(low, ninth, i)));
                }
            }
            Part::Wide(v) => v[range].iter_mut().for_each(|x| *x = new(*x)),
        }
    }
}

/// A finished layer's win/draw/loss, two bits a slot: what the layer
/// behind it reads while it is solved.
#[derive(Clone)]
pub struct WdlBits {
    words: Vec<u64>,
}

impl WdlBits {
    pub fn from_values(values: &Values) -> WdlBits {
        let mut bits = WdlBits {
            words: zeroed_vec(values.len().div_ceil(32)),
        };
        bits.fill(0, values);
        bits
    }

    /// No slots yet: `slots` draws, to be set by [`WdlBits::set_run`].
    pub fn draws(slots: u64) -> WdlBits {
        WdlBits {
            words: zeroed_vec(slots.div_ceil(32) as usize),
        }
    }

    /// Sets slots `first..first + length` to `value`.
    pub fn set_run(&mut self, first: u64, length: u64, value: Wdl) {
        let bits: u64 = match value {
            Wdl::Draw => 0,
            Wdl::Win => 1,
            Wdl::Loss => 2,
        };
        let pattern = bits * 0x5555_5555_5555_5555;
        let (mut slot, end) = (first, first + length);
        while slot < end {
            let word = (slot / 32) as usize;
            let low = slot % 32;
            let high = (end - slot + low).min(32);
            let mask = if high - low == 32 {
                u64::MAX
            } else {
                ((1u64 << (2 * (high - low))) - 1) << (2 * low)
            };
            self.words[word] = self.words[word] & !mask | pattern & mask;
            slot += high - low;
        }
    }

    /// Sets the win/draw/loss of slots `first..` from `values` (`first` a
    /// multiple of 32).
    pub fn fill(&mut self, first: u64, values: &Values) {
        // 0 a draw, 1 a win (odd codes), 2 a loss (even codes but 0).
        fn bits(code: u16) -> u64 {
            match code {
                0 => 0,
                c if c % 2 == 1 => 1,
                _ => 2,
            }
        }
        fn pack(codes: impl Iterator<Item = u64>) -> u64 {
            codes
                .enumerate()
                .fold(0, |word, (i, code)| word | code << (2 * i))
        }
        debug_assert_eq!(first % 32, 0);
        let table: [u64; 256] = std::array::from_fn(|b| bits(b as u16));
        let words = &mut self.words[(first / 32) as usize..];
        match values {
            Values::Narrow(v) => {
                for (word, chunk) in words.iter_mut().zip(v.chunks(32)) {
                    *word = pack(chunk.iter().map(|&b| table[usize::from(b)]));
                }
            }
            Values::Packed { .. } | Values::Wide(_) => {
                let slots = values.len() as u64;
                for (k, word) in words.iter_mut().enumerate() {
                    let start = k as u64 * 32;
                    if start >= slots {
                        break;
                    }
                    let end = (start + 32).min(slots);
                    *word = pack((start..end).map(|slot| bits(values.code(slot))));
                }
            }
        }
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    pub fn get(&self, slot: u64) -> Wdl {
        match (self.words[(slot / 32) as usize] >> (2 * (slot % 32))) & 3 {
            0 => Wdl::Draw,
            1 => Wdl::Win,
            _ => Wdl::Loss,
        }
    }
}

/// Win/draw/loss counts of a layer's positions (Black to move) and the
/// longest distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub longest: u32,
}

impl Tally {
    pub fn add(&mut self, value: Dtz) {
        self.add_many(value, 1);
    }

    /// [`Tally::add`] of `n` positions of one value.
    pub fn add_many(&mut self, value: Dtz, n: u64) {
        match value {
            Dtz::Win(d) => {
                self.wins += n;
                self.longest = self.longest.max(d);
            }
            Dtz::Draw => self.draws += n,
            Dtz::Loss(d) => {
                self.losses += n;
                self.longest = self.longest.max(d);
            }
        }
    }

    pub fn merge(&mut self, other: Tally) {
        self.wins += other.wins;
        self.draws += other.draws;
        self.losses += other.losses;
        self.longest = self.longest.max(other.longest);
    }

    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_win_and_loss_are_found_in_every_width() {
        let values = [
            Dtz::Win(3),
            Dtz::Draw,
            Dtz::Loss(7),
            Dtz::Win(1),
            Dtz::Loss(2),
        ];
        let codes: Vec<u16> = values.iter().map(|&v| encode(v)).collect();
        let narrow = Values::Narrow(codes.iter().map(|&c| c as u8).collect());
        assert_eq!(narrow.longest_win_and_loss(), (3, 7));
        assert_eq!(Values::Wide(codes).longest_win_and_loss(), (3, 7));
        let draws = Values::Narrow(vec![encode(Dtz::Draw) as u8; 4]);
        assert_eq!(draws.longest_win_and_loss(), (0, 0));
    }

    #[test]
    fn encoding_round_trips() {
        for value in [
            Dtz::Draw,
            Dtz::Win(0),
            Dtz::Win(1),
            Dtz::Loss(0),
            Dtz::Loss(126),
            Dtz::Win(127),
            Dtz::Loss(2000),
        ] {
            assert_eq!(decode(encode(value)), value);
        }
    }

    #[test]
    fn win_draw_loss_bits_agree_with_the_values_however_they_are_filled() {
        let codes: Vec<u8> = (0..1000u32).map(|i| (i * 37 % 11) as u8).collect();
        let whole = WdlBits::from_values(&Values::Narrow(codes.clone()));
        let mut chunked = WdlBits::draws(codes.len() as u64);
        for (i, chunk) in codes.chunks(96).enumerate() {
            chunked.fill(96 * i as u64, &Values::Narrow(chunk.to_vec()));
        }
        assert_eq!(chunked.words, whole.words);
        let mut by_runs = WdlBits::draws(codes.len() as u64);
        for (slot, &code) in codes.iter().enumerate() {
            by_runs.set_run(slot as u64, 1, decode(u16::from(code)).wdl());
            assert_eq!(whole.get(slot as u64), decode(u16::from(code)).wdl());
        }
        assert_eq!(by_runs.words, whole.words);
        // Long runs across words, then a short one inside one.
        let mut runs = WdlBits::draws(200);
        runs.set_run(3, 150, Wdl::Loss);
        runs.set_run(40, 5, Wdl::Win);
        assert!((0..200).all(|s| runs.get(s)
            == match s {
                40..45 => Wdl::Win,
                3..153 => Wdl::Loss,
                _ => Wdl::Draw,
            }));
    }

    #[test]
    fn values_hold_codes_in_their_narrowest_form() {
        for (longest, width) in [(126, 1), (254, 2), (400, 2)] {
            let mut values = Values::draws(130, longest);
            assert_eq!(values.width(), width);
            let top = encode(Dtz::Loss(longest));
            for slot in 0..130u64 {
                values.set(slot, (slot as u16 * 7) % (top + 1));
            }
            assert!((0..130u64).all(|s| values.code(s) == (s as u16 * 7) % (top + 1)));
        }
        assert!(matches!(Values::draws(8, 200), Values::Packed { .. }));
    }

    #[test]
    fn a_move_into_a_lost_child_wins() {
        assert_eq!(Dtz::Loss(3).through(false), Dtz::Win(4));
        assert_eq!(Dtz::Loss(3).through(true), Dtz::Win(1));
        assert_eq!(Dtz::Win(0).through(false), Dtz::Loss(1));
        assert_eq!(Dtz::Draw.through(false), Dtz::Draw);
        assert!(Dtz::Win(2).preference() > Dtz::Win(3).preference());
        assert!(Dtz::Loss(3).preference() > Dtz::Loss(2).preference());
    }
}
