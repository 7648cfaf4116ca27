//! What a file stores for a slot: 0, 1 or 2 for win/draw/loss, the
//! distance of a won or lost position in a distance file, the contexts
//! of a file's runs, and the codes back ([`wdl_of`], [`code_of`]).

use crate::solver::index::value::{Dtz, Wdl, decode};

use super::directory::Content;

/// The contexts of a file's code: a win/draw/loss run is coded with the
/// value of the run before it in mind (about 12% smaller on 6 x 6),
/// a distance run without.
pub(super) fn contexts_of(content: Content) -> u32 {
    match content {
        Content::Wdl => 4,
        Content::Distance(_) => 1,
    }
}

/// What a file stores for a slot of `values`, if it matters: for the
/// win/draw/loss file 0, 1 or 2; for a distance file the distance of a
/// won or lost position (a draw's does not matter).
pub(super) fn stored(content: Content, code: u16) -> Option<u16> {
    match (content, decode(code)) {
        (Content::Wdl, Dtz::Draw) => Some(0),
        (Content::Wdl, Dtz::Win(_)) => Some(1),
        (Content::Wdl, Dtz::Loss(_)) => Some(2),
        (Content::Distance(_), Dtz::Draw) => None,
        (Content::Distance(_), Dtz::Win(d) | Dtz::Loss(d)) => Some(d as u16),
    }
}

/// The win, draw or loss a `.wdl` file's value stands for (its code has
/// no other values: checked at open).
pub fn wdl_of(value: u16) -> Wdl {
    match value {
        1 => Wdl::Win,
        2 => Wdl::Loss,
        _ => Wdl::Draw,
    }
}

/// What a `.wdl` file stores for `wdl`: the inverse of [`wdl_of`].
pub fn wdl_value(wdl: Wdl) -> u16 {
    match wdl {
        Wdl::Draw => 0,
        Wdl::Win => 1,
        Wdl::Loss => 2,
    }
}

/// The code ([`crate::solver::index::value::encode`]) of a slot whose `.wdl` value is
/// `sign` and whose distance file holds `distance` (a draw's distance is
/// free and ignored).
pub fn code_of(sign: u16, distance: u16) -> u16 {
    match sign {
        0 => 0,
        sign => 2 * distance + sign,
    }
}
