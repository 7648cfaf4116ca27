//! Practical chances in a drawn position: of the moves that hold the
//! draw, prefer those that leave the opponent the most ways to go wrong.
//!
//! Against perfect play every drawing move is as good as another, but an
//! opponent that is not perfect may still lose. After some drawing moves
//! many of its replies lose (the table then has a winning move for us),
//! after others every reply holds. The table tells which, one ply deeper
//! than the root's own ranking: the moves that leave the largest share of
//! losing replies are searched, the others are left out; when no drawing
//! move sets a trap, all of them are searched as before.
//!
//! The lookups are win/draw/loss probes ([`Layered::probe_wdl`]): layers
//! already in memory, or small enough to read at once. When a layer
//! would have to be read in the background (a large one, the first time)
//! or not at all (`TablebaseCache 0`), the chances are unknown and every
//! drawing move is searched: the root never waits on a large file.

use std::cmp::Ordering;

use super::Request;
use crate::board::{Move, Position};
use crate::solver::{Reading, Wdl, WdlReader};
use crate::tablebase::Layered;

/// Whether `mv` from `root` makes a threefold repetition.
pub(super) fn repeats(request: &Request, root: &Position, mv: Move) -> bool {
    if mv.is_irreversible(root.side_to_move()) {
        return false;
    }
    let key = root.play(mv).key();
    request.history.iter().filter(|&&k| k == key).count() >= 2
}

/// What a drawing move leaves the opponent: its replies that lose (each
/// then has a winning answer in the table) and those that hold the draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Chances {
    pub(super) losing: u32,
    pub(super) holding: u32,
}

impl Chances {
    /// Orders chances, the better for us greater: the larger share of
    /// losing replies (the chance a reply picked blindly loses), then
    /// more losing replies.
    pub(super) fn compare(self, other: Chances) -> Ordering {
        let total = |c: Chances| u64::from(c.losing + c.holding).max(1);
        let share = |c: Chances, of: Chances| u64::from(c.losing) * total(of);
        share(self, other)
            .cmp(&share(other, self))
            .then(self.losing.cmp(&other.losing))
    }
}

/// The drawing `moves` of the root worth searching, from the one that
/// leaves the opponent the most losing replies: those whose chances equal
/// the best, and more in order of chances until `MultiPV` lines are
/// filled. Ties keep the order of `moves`. All of `moves`, in their
/// order, when no move sets a trap or a lookup cannot be made at once.
/// Each lookup is counted in `probes`.
pub(super) fn prefer(
    request: &Request,
    layered: &Layered,
    moves: Vec<Move>,
    probes: &mut u64,
) -> Vec<Move> {
    let mut reader = WdlReader::default();
    let mut ranked = Vec::with_capacity(moves.len());
    for &mv in &moves {
        match chances(request, layered, &mut reader, mv, probes) {
            Some(chances) => ranked.push((mv, chances)),
            None => return moves,
        }
    }
    ranked.sort_by(|a, b| b.1.compare(a.1));
    let Some(&(_, best)) = ranked.first() else {
        return moves;
    };
    if best.losing == 0 {
        return moves;
    }
    let lines = request.settings.multipv.max(1);
    ranked
        .iter()
        .enumerate()
        .take_while(|&(index, &(_, c))| index < lines || c.compare(best) == Ordering::Equal)
        .map(|(_, &(mv, _))| mv)
        .collect()
}

/// The opponent's losing and holding replies after the drawing root move
/// `mv`; `None` when a reply's value is not to be had at once.
fn chances(
    request: &Request,
    layered: &Layered,
    reader: &mut WdlReader,
    mv: Move,
    probes: &mut u64,
) -> Option<Chances> {
    let root = request.position;
    let us = root.side_to_move();
    let child = root.play(mv);
    let mut chances = Chances::default();
    // The game ends in a draw by repetition: nothing left to go wrong.
    if repeats(request, &root, mv) {
        return Some(chances);
    }
    for &reply in child.legal_moves().as_slice() {
        let next = child.play(reply);
        let loses = if next.cars(us.other()) == 0 || reply_repeats(request, &root, mv, reply) {
            false
        } else if !layered.covers(&next, request.settings.rules) {
            // Not met from a covered root (a reply adds no car), but a
            // reply the table cannot judge sets no trap.
            false
        } else {
            *probes += 1;
            layered.probe_wdl(reader, &next, Reading::Decode)? == Wdl::Win
        };
        if loses {
            chances.losing += 1;
        } else {
            chances.holding += 1;
        }
    }
    Some(chances)
}

/// Whether `reply` to the root move `mv` makes a threefold repetition,
/// counting the game before the root.
fn reply_repeats(request: &Request, root: &Position, mv: Move, reply: Move) -> bool {
    let us = root.side_to_move();
    if mv.is_irreversible(us) || reply.is_irreversible(us.other()) {
        return false;
    }
    let key = root.play(mv).play(reply).key();
    let earlier = request.history.iter().copied().chain([root.key()]);
    earlier.filter(|&k| k == key).count() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::notation::parse_position;
    use crate::search::{Limits, Settings, Signals, TableUse, Tables, search};
    use crate::solver::Dtz;
    use crate::tablebase;

    fn c(losing: u32, holding: u32) -> Chances {
        Chances { losing, holding }
    }

    /// The opponent's losing and holding replies after `mv`, counted
    /// from the table's ranking of the position it leads to (not by the
    /// code under test).
    fn counted(table: &Layered, position: &Position, mv: Move) -> Chances {
        let ranked = table.rank_moves(&position.play(mv));
        let losing = ranked.iter().filter(|(_, v)| v.wdl() == Wdl::Loss).count() as u32;
        c(losing, ranked.len() as u32 - losing)
    }

    /// A drawn 4 x 4 position (textbook rule, White to move) where the
    /// search alone prefers a drawing move that leaves Black no losing
    /// reply, while another drawing move leaves Black 3 losing replies of 7.
    const TRAP: &str = "B3/2W1/BB1W/1W2 w";

    fn trap_request(multipv: usize) -> (Request, std::sync::Arc<Layered>) {
        let table = tablebase::builtin(4, Rules::Textbook).unwrap();
        let request = Request {
            position: parse_position(TRAP).unwrap(),
            history: Vec::new(),
            limits: Limits {
                depth: Some(6),
                ..Limits::default()
            },
            settings: Settings {
                rules: Rules::Textbook,
                multipv,
                ..Settings::default()
            },
            tablebase: TableUse {
                root: Some(table.clone()),
                probes: vec![table.clone()],
            },
        };
        (request, table)
    }

    fn best(request: &Request) -> (Move, i32) {
        let result = search(
            request,
            &mut Tables::new(1),
            &Signals::default(),
            &mut |_| {},
        );
        (result.best_move.unwrap(), result.score)
    }

    #[test]
    fn the_engine_sets_the_trap_in_a_drawn_position() {
        let (request, table) = trap_request(1);
        let position = request.position;
        let drawing: Vec<Move> = (table.rank_moves(&position).into_iter())
            .filter(|(_, v)| *v == Dtz::Draw)
            .map(|(mv, _)| mv)
            .collect();
        let chances: Vec<Chances> = drawing
            .iter()
            .map(|&mv| counted(&table, &position, mv))
            .collect();
        let most = *chances.iter().max_by(|a, b| a.compare(**b)).unwrap();
        assert!(chances.iter().any(|c| c.losing == 0), "{chances:?}");
        assert_eq!(most, c(3, 4));

        // The search alone, over the drawing moves, picks a move without traps...
        let mut alone = request.clone();
        alone.limits.searchmoves = drawing.clone();
        alone.tablebase = TableUse::default();
        assert_eq!(counted(&table, &position, best(&alone).0).losing, 0);
        // ...the engine one with the most, still an exact draw.
        let (chosen, score) = best(&request);
        assert_eq!(score, 0);
        assert!(drawing.contains(&chosen));
        assert_eq!(counted(&table, &position, chosen), most);
    }

    #[test]
    fn multipv_lines_are_filled_from_the_next_best_chances() {
        let (request, table) = trap_request(3);
        let mut probes = 0;
        let drawing: Vec<Move> = (table.rank_moves(&request.position).into_iter())
            .filter(|(_, v)| *v == Dtz::Draw)
            .map(|(mv, _)| mv)
            .collect();
        let preferred = prefer(&request, &table, drawing.clone(), &mut probes);
        assert_eq!(preferred.len(), 3);
        let chances = |mv| counted(&table, &request.position, mv);
        // In order of chances, and none left out beats one kept.
        for pair in preferred.windows(2) {
            assert_ne!(chances(pair[0]).compare(chances(pair[1])), Ordering::Less);
        }
        for mv in drawing.iter().filter(|mv| !preferred.contains(mv)) {
            assert_ne!(
                chances(*mv).compare(chances(preferred[2])),
                Ordering::Greater
            );
        }
        assert!(probes > 0);
    }

    #[test]
    fn a_reply_that_repeats_a_third_time_holds() {
        // Each side shuffles one car back and forth: the reply that
        // brings the root's position back a third time ends the game drawn.
        let (mut request, table) = trap_request(1);
        let position = request.position;
        let mv = (table.rank_moves(&position).into_iter())
            .find(|&(mv, v)| v == Dtz::Draw && !mv.is_irreversible(position.side_to_move()))
            .unwrap()
            .0;
        let child = position.play(mv);
        let Some(&reply) = (child.legal_moves().as_slice().iter())
            .find(|r| !r.is_irreversible(child.side_to_move()))
        else {
            panic!("no sideways reply");
        };
        let again = child.play(reply);
        assert!(!reply_repeats(&request, &position, mv, reply));
        request.history = vec![again.key(), position.key(), again.key()];
        assert!(reply_repeats(&request, &position, mv, reply));
    }

    #[test]
    fn a_larger_share_of_losing_replies_is_better() {
        assert_eq!(c(2, 1).compare(c(5, 5)), Ordering::Greater);
        assert_eq!(c(1, 1).compare(c(2, 2)), Ordering::Less);
        assert_eq!(c(3, 3).compare(c(3, 3)), Ordering::Equal);
        assert_eq!(c(0, 4).compare(c(0, 0)), Ordering::Equal);
        assert_eq!(c(1, 9).compare(c(0, 1)), Ordering::Greater);
    }
}
