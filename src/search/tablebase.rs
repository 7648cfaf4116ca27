//! Play from a solved table at the root: perfect moves, exact scores.
//!
//! A decided root (won or lost) needs no search: the table ranks every
//! move and the line of best play follows from it. A drawn root keeps
//! the search, but only over the moves that keep the draw, so the engine
//! still tries to set the opponent problems without ever risking a loss.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Info, MATE, MAX_PLY, Request, Score, SearchResult};
use crate::board::{Move, Position};
use crate::solver::Dtz;
use crate::tablebase::{Layered, Table, Value, dtz_preference};
use crate::wdl::Wdl;

/// What the table says about the root.
pub(super) enum RootProbe {
    /// Won or lost: the result is final (after reporting these lines).
    Decided(SearchResult, Vec<Info>),
    /// Drawn: search these moves (the ones that hold the draw); `probes`
    /// table lookups were made.
    Drawn { moves: Vec<Move>, probes: u64 },
}

/// Internal score of a value for the side to move.
pub(super) fn score_of(value: Value) -> i32 {
    match value {
        Value::Win(plies) => MATE - plies as i32,
        Value::Loss(plies) => -(MATE - plies as i32),
        Value::Draw => 0,
    }
}

/// Ranks the root moves with `table`; `None` when the table has nothing
/// to say (no legal move among the ones asked for). A set `stop` cuts the
/// lines of best play short.
pub(super) fn probe_root(request: &Request, table: &Table, stop: &AtomicBool) -> Option<RootProbe> {
    let started = Instant::now();
    let root = request.position;
    let searchmoves = &request.limits.searchmoves;
    let mut probes = 0;
    let mut ranked: Vec<(Move, Value)> = table
        .rank_moves(&root)
        .into_iter()
        .inspect(|_| probes += 1)
        .filter(|(mv, _)| searchmoves.is_empty() || searchmoves.contains(mv))
        .map(|(mv, value)| (mv, repetition_adjusted(request, &root, mv, value)))
        .collect();
    if ranked.is_empty() {
        return None;
    }
    ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(value.preference()));
    let best = ranked[0].1;
    if best == Value::Draw {
        let moves = ranked
            .iter()
            .take_while(|(_, value)| *value == Value::Draw)
            .map(|&(mv, _)| mv)
            .collect();
        return Some(RootProbe::Drawn { moves, probes });
    }
    let mut lines = Vec::new();
    for (index, &(mv, value)) in ranked
        .iter()
        .take(request.settings.multipv.max(1))
        .enumerate()
    {
        let mut pv = vec![mv];
        pv.extend(best_line(table, root.play(mv), &mut probes, stop));
        lines.push((index + 1, score_of(value), pv));
    }
    Some(decided(lines, probes, started, score_of(best)))
}

/// The result and info lines of a decided root: `lines` of (multipv,
/// internal score, pv), the best first, found with `probes` lookups.
fn decided(
    lines: Vec<(usize, i32, Vec<Move>)>,
    probes: u64,
    started: Instant,
    best: i32,
) -> RootProbe {
    let time = started.elapsed();
    let nps = probes.saturating_mul(1_000_000) / (time.as_micros().max(1) as u64);
    let infos: Vec<Info> = lines
        .into_iter()
        .map(|(multipv, score, pv)| Info {
            depth: pv.len().max(1) as i32,
            seldepth: pv.len(),
            multipv,
            score: Score::from_internal(score),
            nodes: probes,
            nps,
            hashfull: 0,
            tbhits: probes,
            time,
            pv,
            // A decided root is a proven win or loss.
            wdl: Wdl::proven(score).unwrap_or(Wdl::DRAW),
        })
        .collect();
    let main = &infos[0];
    let result = SearchResult {
        best_move: Some(main.pv[0]),
        ponder_move: main.pv.get(1).copied(),
        score: best,
        depth: main.depth,
        nodes: probes,
    };
    RootProbe::Decided(result, infos)
}

/// The line of best play from a decided `position` to the end of the
/// game (the winner hurrying, the loser delaying), counting table probes.
/// Each move must bring the end one ply nearer: a damaged table whose
/// values cycle ends the line there, as does `stop`.
fn best_line(
    table: &Table,
    mut position: Position,
    probes: &mut u64,
    stop: &AtomicBool,
) -> Vec<Move> {
    let mut line = Vec::new();
    let mut plies_left = u32::MAX;
    while !stop.load(Ordering::Relaxed) {
        let ranked = table.rank_moves(&position);
        *probes += ranked.len() as u64;
        let plies = match ranked.first() {
            Some(&(_, Value::Win(plies) | Value::Loss(plies))) => plies,
            _ => break,
        };
        if plies >= plies_left {
            break;
        }
        plies_left = plies;
        line.push(ranked[0].0);
        position = position.play(ranked[0].0);
    }
    line
}

/// A move into a position seen twice before draws by threefold repetition,
/// whatever the table says.
fn repetition_adjusted(request: &Request, root: &Position, mv: Move, value: Value) -> Value {
    if repeats(request, root, mv) {
        Value::Draw
    } else {
        value
    }
}

/// Whether `mv` from `root` makes a threefold repetition.
fn repeats(request: &Request, root: &Position, mv: Move) -> bool {
    if mv.is_irreversible(root.side_to_move()) {
        return false;
    }
    let key = root.play(mv).key();
    request.history.iter().filter(|&&k| k == key).count() >= 2
}

/// Internal score of a layered-table result for the side to move: a win
/// at distance `d` to progress scores `TABLE_WIN - d`, beyond any
/// evaluation but below the mate scores (the distance is not to the end of
/// the game, so it cannot be reported as a mate).
pub(super) fn layered_score(value: Dtz) -> i32 {
    let near = |d: u32| TABLE_WIN - d.min(MAX_TABLE_DISTANCE) as i32;
    match value {
        Dtz::Win(d) => near(d),
        Dtz::Loss(d) => -near(d),
        Dtz::Draw => 0,
    }
}

/// Score of a layered-table win at distance 0.
pub(super) const TABLE_WIN: i32 = 30_000;
/// Distances beyond this score as this one.
const MAX_TABLE_DISTANCE: u32 = 1_000;

/// Ranks the root moves with layered tables that cover the root, as
/// [`probe_root`] does with a dense table: a decided root is played at
/// once (the winner never cycles, the loser delays), a drawn one searched
/// over the drawing moves. `None` when the tables have nothing to say.
pub(super) fn probe_layered_root(
    request: &Request,
    layered: &Layered,
    stop: &AtomicBool,
) -> Option<RootProbe> {
    let started = Instant::now();
    let root = request.position;
    let searchmoves = &request.limits.searchmoves;
    let all = layered.rank_moves(&root);
    let mut probes = all.len() as u64;
    let mut ranked: Vec<(Move, Dtz)> = all
        .into_iter()
        .filter(|(mv, _)| searchmoves.is_empty() || searchmoves.contains(mv))
        .map(|(mv, value)| {
            let value = if repeats(request, &root, mv) {
                Dtz::Draw
            } else {
                value
            };
            (mv, value)
        })
        .collect();
    if ranked.is_empty() {
        return None;
    }
    ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(dtz_preference(value)));
    let best = ranked[0].1;
    if best == Dtz::Draw {
        let moves = ranked
            .iter()
            .take_while(|(_, value)| *value == Dtz::Draw)
            .map(|&(mv, _)| mv)
            .collect();
        return Some(RootProbe::Drawn { moves, probes });
    }
    let mut lines = Vec::new();
    for (index, &(mv, value)) in ranked
        .iter()
        .take(request.settings.multipv.max(1))
        .enumerate()
    {
        let mut pv = vec![mv];
        pv.extend(layered_line(layered, root.play(mv), &mut probes, stop));
        lines.push((index + 1, layered_score(value), pv));
    }
    Some(decided(lines, probes, started, layered_score(best)))
}

/// The line of best play by layered tables from `position` (the winner
/// making progress or nearing it, the loser delaying) until the game ends,
/// the position is drawn, `stop` is set or [`MAX_PLY`] moves are made (a
/// damaged table cannot make it endless).
fn layered_line(
    layered: &Layered,
    mut position: Position,
    probes: &mut u64,
    stop: &AtomicBool,
) -> Vec<Move> {
    let mut line = Vec::new();
    while !stop.load(Ordering::Relaxed) && line.len() < MAX_PLY {
        let ranked = layered.rank_moves(&position);
        *probes += ranked.len() as u64;
        match ranked.first() {
            Some(&(mv, Dtz::Win(_) | Dtz::Loss(_))) => {
                line.push(mv);
                position = position.play(mv);
            }
            _ => break,
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Rules;
    use crate::solver::{self, Value};

    /// A 3 x 3 table that says every position is won in one ply: every
    /// move then looks like a loss in two, and best play goes round in
    /// circles.
    fn cycling_table() -> Table {
        let mut solution = solver::solve(3, Rules::Textbook, 1, &|_| {}).unwrap();
        solution.values.fill(solver::encode(Value::Win(1)));
        Table::from(solution)
    }

    #[test]
    fn a_cycling_table_gives_a_short_line() {
        let table = cycling_table();
        let position = crate::notation::parse_position("3/B2/2W b").unwrap();
        let mut probes = 0;
        let line = best_line(&table, position, &mut probes, &AtomicBool::new(false));
        assert!(line.len() <= 1, "{line:?}");
    }

    #[test]
    fn stop_ends_the_line_at_once() {
        let table = sound_table();
        let position = Position::start(3);
        let mut probes = 0;
        let line = best_line(&table, position, &mut probes, &AtomicBool::new(true));
        assert!(line.is_empty());
        assert_eq!(probes, 0);
    }

    fn sound_table() -> std::sync::Arc<Table> {
        crate::tablebase::builtin(3, Rules::Textbook).unwrap()
    }

    #[test]
    fn a_sound_table_gives_the_whole_line() {
        let table = sound_table();
        let start = Position::start(3);
        let Some(Value::Win(plies)) = table.probe(&start) else {
            panic!("the 3x3 start is a win");
        };
        let (mv, _) = table.rank_moves(&start)[0];
        let mut probes = 0;
        let line = best_line(&table, start.play(mv), &mut probes, &AtomicBool::new(false));
        assert_eq!(line.len() as u32 + 1, plies);
    }
}
