//! Distances to the end of the game derived from the solved tables: the
//! built-in tables and solved directories against the reference solver
//! on every 3 x 3 and 4 x 4 position, `dodgem solve --dte` resuming layer
//! by layer, 5 x 5 endgame tables against their own moves, and what
//! `solve` and `go` report from them.

use crate::common::shared;
use crate::reference::{Dtm, Reference};
use dodgem::board::{Position, Rules};
use dodgem::notation::format_position;
use dodgem::solver::Dtz;
use dodgem::tablebase;

/// The reference's distance to the end as a stored value.
fn as_stored(dtm: Dtm) -> Dtz {
    match dtm {
        Dtm::Win(d) => Dtz::Win(d),
        Dtm::Draw => Dtz::Draw,
        Dtm::Loss(d) => Dtz::Loss(d),
    }
}

/// Checks `probe` against the reference's distance to the end on every
/// position of `size` under `rules`.
fn check_everywhere(size: usize, rules: Rules, probe: impl Fn(&Position) -> Option<Dtz>) {
    let reference = Reference::get(size, rules);
    for (position, &expected) in reference.positions.iter().zip(&reference.dtm) {
        assert_eq!(
            probe(position),
            Some(as_stored(expected)),
            "{} ({rules:?})",
            format_position(position)
        );
    }
}

#[test]
fn built_in_distances_to_the_end_agree_with_the_reference_on_every_position() {
    let _cpu = shared();
    for size in tablebase::BUILTIN_SIZES {
        for rules in Rules::ALL {
            let table = tablebase::builtin(size, rules).unwrap();
            assert!(table.has_dte());
            check_everywhere(size, rules, |position| table.probe_end(position));
        }
    }
    // The 3 x 3 start: Black wins in 19 plies, by a3b3 alone.
    for rules in Rules::ALL {
        let table = tablebase::builtin(3, rules).unwrap();
        let start = Position::start(3);
        assert_eq!(table.probe_end(&start), Some(Dtz::Win(19)));
        let winning: Vec<String> = start
            .legal_moves()
            .as_slice()
            .iter()
            .filter(|&&mv| matches!(table.end_after(&start, mv), Some(Dtz::Win(_))))
            .map(|&mv| dodgem::notation::format_move(Some(mv)))
            .collect();
        assert_eq!(winning, ["a3b3"]);
    }
}
