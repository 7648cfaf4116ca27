//! Zobrist keys: one random 64-bit number per (side, square), one for
//! White to move and one per board size, so positions on different boards
//! never share a key by construction; and FNV-1a ([`fnv1a`]) for keys of
//! sequences.
//!
//! The numbers come from a fixed SplitMix64 stream computed at compile
//! time, so keys (and with them `bench` node counts) are the same on every
//! build and every machine.

use crate::board::{Color, MAX_SIZE, SQUARES, Square};

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (state, z ^ (z >> 31))
}

struct Keys {
    cars: [[u64; SQUARES]; 2],
    side: u64,
    size: [u64; MAX_SIZE + 1],
}

const KEYS: Keys = {
    let mut keys = Keys {
        cars: [[0; SQUARES]; 2],
        side: 0,
        size: [0; MAX_SIZE + 1],
    };
    let mut state = 0x00D0_D6E3_u64;
    let mut color = 0;
    while color < 2 {
        let mut sq = 0;
        while sq < SQUARES {
            let (next, value) = splitmix64(state);
            state = next;
            keys.cars[color][sq] = value;
            sq += 1;
        }
        color += 1;
    }
    let (next, value) = splitmix64(state);
    state = next;
    keys.side = value;
    let mut size = 0;
    while size <= MAX_SIZE {
        let (next, value) = splitmix64(state);
        state = next;
        keys.size[size] = value;
        size += 1;
    }
    keys
};

/// Key of a `color` car on `sq`.
pub fn car_key(color: Color, sq: Square) -> u64 {
    KEYS.cars[color.index()][sq as usize]
}

/// Key toggled when White is to move.
pub fn side_key() -> u64 {
    KEYS.side
}

/// Key of the board size.
pub fn size_key(size: usize) -> u64 {
    KEYS.size[size]
}

/// Where an FNV-1a hash starts ([`fnv1a`]).
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a: `hash` with `bytes` folded in. A key of a sequence (a game's
/// moves after its start, a network's numbers) that is the same on every
/// build and machine, as the position keys are.
pub fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(hash, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_distinct() {
        let mut all: Vec<u64> = KEYS.cars.iter().flatten().copied().collect();
        all.push(KEYS.side);
        all.extend_from_slice(&KEYS.size);
        let count = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), count);
        assert!(all.iter().all(|&k| k != 0));
    }
}
