//! The bitboard move generator, Zobrist keys and position strings checked
//! against simple, independent code on random games of every board size.

use crate::common::{Rng, shared};
use dodgem::board::{Color, Direction, Move, Position, square};
use dodgem::notation::{
    format_move, format_moves_sorted, format_position, parse_move, parse_position,
};

/// Legal moves worked out square by square from the rules
/// of the game (as README.md states them), as move strings, sorted.
fn naive_moves(position: &Position) -> Vec<String> {
    let size = position.size() as i32;
    let side = position.side_to_move();
    if position.cars(Color::Black) == 0 || position.cars(Color::White) == 0 {
        return Vec::new();
    }
    let steps: [(i32, i32); 3] = match side {
        Color::Black => [(1, 0), (0, 1), (0, -1)],
        Color::White => [(0, 1), (-1, 0), (1, 0)],
    };
    let mut moves = Vec::new();
    for rank in 0..size {
        for file in 0..size {
            if position.car_at(square(file as usize, rank as usize)) != Some(side) {
                continue;
            }
            for (df, dr) in steps {
                let (f, r) = (file + df, rank + dr);
                let exits = match side {
                    Color::Black => f == size && r == rank,
                    Color::White => r == size && f == file,
                };
                let inside = (0..size).contains(&f) && (0..size).contains(&r);
                let empty = inside && position.car_at(square(f as usize, r as usize)).is_none();
                if exits || empty {
                    let name = |f: i32, r: i32| format!("{}{}", (b'a' + f as u8) as char, r + 1);
                    moves.push(format!("{}{}", name(file, rank), name(f, r)));
                }
            }
        }
    }
    moves.sort();
    moves
}

/// Plays random games on every size and checks each position on the way.
#[test]
fn random_games_agree_with_simple_code() {
    let _cpu = shared();
    let mut rng = Rng(0x5EED_D0D6);
    let mut positions = 0;
    for size in 3..=8 {
        for _game in 0..150 {
            let mut position = Position::start(size);
            for _ply in 0..400 {
                positions += 1;
                let moves = position.legal_moves();
                assert_eq!(
                    format_moves_sorted(&moves),
                    naive_moves(&position),
                    "{}",
                    format_position(&position)
                );
                assert_eq!(position.count_moves() as usize, moves.len());
                assert_eq!(position.key(), position.compute_key(), "incremental key");
                let text = format_position(&position);
                assert_eq!(
                    parse_position(&text).unwrap(),
                    position,
                    "round trip of {text}"
                );
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.below(moves.len())];
                let text = format_move(Some(mv));
                assert_eq!(
                    parse_move(&text, &position).unwrap(),
                    mv,
                    "move round trip {text}"
                );
                position = position.play(mv);
            }
        }
    }
    assert!(positions > 50_000);
}

#[test]
fn move_codes_round_trip() {
    let _cpu = shared();
    for from in 0..64u8 {
        for dir in [
            Direction::East,
            Direction::North,
            Direction::South,
            Direction::West,
        ] {
            let mv = Move::new(from, dir);
            assert_eq!(Move::from_code(mv.code()), Some(mv));
        }
    }
    assert_eq!(Move::from_code(0), None);
}

#[test]
fn keys_differ_by_side_and_size() {
    let _cpu = shared();
    let start = Position::start(3);
    assert_ne!(start.key(), start.with_side_to_move(Color::White).key());
    // The same cars on a bigger board are a different position.
    let small = parse_position("B2/B2/1WW b").unwrap();
    let big = parse_position("4/B3/B3/1WW1 b").unwrap();
    assert_ne!(small.key(), big.key());
}
