//! Perft against the reference numbers in `tests/data/perft.txt`.

use crate::common::shared;
use dodgem::notation::parse_position;
use dodgem::perft::{divide, perft};

struct Case {
    position: String,
    depth: u32,
    nodes: u64,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/perft.txt");
    let mut position = None;
    let mut cases = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(fen) = line.strip_prefix("position ") {
            position = Some(fen.to_string());
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut fields = rest.split_whitespace().map(|f| f.parse::<u64>().unwrap());
            cases.push(Case {
                position: position.clone().expect("perft line before any position"),
                depth: fields.next().unwrap() as u32,
                nodes: fields.next().unwrap(),
            });
        } else {
            panic!("perft.txt line {}: cannot read {line:?}", number + 1);
        }
    }
    cases
}

#[test]
fn perft_matches_reference_numbers() {
    let _cpu = shared();
    let cases = cases();
    assert!(cases.len() >= 20);
    for case in cases {
        let position = parse_position(&case.position).unwrap();
        assert_eq!(
            perft(&position, case.depth),
            case.nodes,
            "perft {} of {}",
            case.depth,
            case.position
        );
    }
}

#[test]
fn divide_sums_to_perft() {
    let _cpu = shared();
    for case in cases().iter().filter(|c| c.depth >= 2 && c.nodes < 100_000) {
        let position = parse_position(&case.position).unwrap();
        let split = divide(&position, case.depth);
        assert_eq!(split.len(), position.legal_moves().len());
        assert_eq!(split.iter().map(|&(_, n)| n).sum::<u64>(), case.nodes);
    }
}
