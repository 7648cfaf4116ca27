//! Play from a solved table at the root: perfect moves, exact scores.
//!
//! A decided root (won or lost) needs no search: the table ranks every
//! move and the line of best play follows from it. A drawn root keeps
//! the search, but only over the moves that keep the draw and set the
//! opponent the most traps, so the engine still tries to set the opponent
//! problems without ever risking a loss.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::{Info, MATE, MAX_PLY, Request, Score, SearchResult};
use crate::board::{Color, Move, Position, Rules};
use crate::solver::{Dtz, Reading, Wdl, WdlReader};
use crate::tablebase::Layered;
use crate::wdl;

/// The solved tables a search uses.
#[derive(Clone, Debug, Default)]
pub struct TableUse {
    /// Tables that cover the root: play follows them.
    pub root: Option<Arc<Layered>>,
    /// Tables of the board and rule probed inside the search, the most
    /// cars first.
    pub probes: Vec<Arc<Layered>>,
}

/// Score of a win found by a probe inside the search, at the root: a
/// covered position `ply` plies from the root scores `TB_WIN - ply` when
/// won for its side to move. Beyond any evaluation, below the root's
/// table scores and any mate: the tables know the result there, not the
/// distance to the end.
pub(super) const TB_WIN: i32 = 28_000;
const _: () = assert!(TB_WIN - MAX_PLY as i32 >= crate::score::TABLE_WIN_BOUND);

/// Probes inside one search thread's search: the tables of the board, the
/// most cars first, each with this thread's view of its win/draw/loss
/// cache, and the number of probes answered.
pub(super) struct Prober {
    tables: Vec<(Arc<Layered>, WdlReader)>,
    rules: Rules,
    /// Most cars a side any of the tables covers.
    max_cars: u32,
    pub(super) hits: u64,
}

impl Prober {
    /// The prober for `request`; `None` when it has no tables to probe.
    pub(super) fn new(request: &Request) -> Option<Prober> {
        let probes = &request.tablebase.probes;
        let max_cars = probes.iter().map(|t| t.kind().max_cars).max()?;
        Some(Prober {
            tables: probes
                .iter()
                .map(|t| (Arc::clone(t), WdlReader::default()))
                .collect(),
            rules: request.settings.rules,
            max_cars,
            hits: 0,
        })
    }

    /// The exact score of `position`, `ply` plies from the root, for its
    /// side to move, when a table covers it and has its layer in memory:
    /// from a built-in table, a win or loss `p` plies from the root (its
    /// distance to the end plus `ply`) scores as the search scores a mate
    /// that far ([`end_score`]); from a directory, a win `TB_WIN - ply`
    /// (nearer wins score higher), a loss the negation; a draw 0. `None`
    /// otherwise (the search goes on). With no `depth` left (the
    /// horizon, where a node costs an evaluation) a block is read only if
    /// it is in memory: a cold one costs a hundred nodes or more.
    pub(super) fn probe(&mut self, position: &Position, ply: usize, depth: i32) -> Option<i32> {
        let cars = |color| position.cars(color).count_ones();
        if cars(Color::Black).max(cars(Color::White)) > self.max_cars {
            return None;
        }
        for (table, reader) in &mut self.tables {
            if !table.covers(position, self.rules) {
                continue;
            }
            // Tables held in memory know the distance to the end, and with
            // it the win, draw or loss: one lookup gives the score of a mate
            // that far, as the search itself gives it (or a draw).
            let end = table.probe_end_built_in(position);
            if let Some(score) = end.and_then(|end| end_score(end, ply)) {
                self.hits += 1;
                return Some(score);
            }
            let wdl = end.map(Dtz::wdl).or_else(|| {
                let reading = if depth > 0 {
                    Reading::Decode
                } else {
                    Reading::Cached
                };
                table.probe_wdl(reader, position, reading)
            });
            if let Some(wdl) = wdl {
                self.hits += 1;
                return Some(match wdl {
                    Wdl::Win => TB_WIN - ply as i32,
                    Wdl::Draw => 0,
                    Wdl::Loss => -(TB_WIN - ply as i32),
                });
            }
        }
        None
    }
}

/// What the table says about the root.
pub(super) enum RootProbe {
    /// Won or lost: the result is final (after reporting these lines).
    Decided(SearchResult, Vec<Info>),
    /// Drawn: search these moves (the ones that hold the draw and leave
    /// the opponent the most ways to lose, see [`super::traps`]); `probes`
    /// table lookups were made.
    Drawn { moves: Vec<Move>, probes: u64 },
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
            wdl: wdl::Wdl::proven(score).unwrap_or(wdl::Wdl::DRAW),
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

/// Internal score of a table's value with its distance to the end, for
/// the side to move `ply` plies from the root: the score the search gives
/// a mate that far (a win `p` plies from the root is `MATE - p`, a loss
/// the negation), so that the two compare and the transposition table
/// adjusts both alike; `None` beyond the range of mate scores.
pub(super) fn end_score(value: Dtz, ply: usize) -> Option<i32> {
    let mate = |d: u32| {
        let plies = ply as u32 + d;
        (plies <= 2 * MAX_PLY as u32).then(|| MATE - plies as i32)
    };
    match value {
        Dtz::Win(d) => mate(d),
        Dtz::Loss(d) => mate(d).map(|score| -score),
        Dtz::Draw => Some(0),
    }
}

/// Internal score of the root move `mv` whose table value is `value` (a
/// draw where the move repeats a position): the mate score of its
/// distance to the end where the tables have it ([`end_score`]), else
/// [`layered_score`] of its distance to progress.
pub(super) fn move_score(layered: &Layered, root: &Position, mv: Move, value: Dtz) -> i32 {
    layered
        .end_after(root, mv)
        .filter(|end| value != Dtz::Draw && end.wdl() == value.wdl())
        .and_then(|end| end_score(end, 0))
        .unwrap_or_else(|| layered_score(value))
}

/// Score of a layered-table win at distance 0.
pub(super) const TABLE_WIN: i32 = 30_000;
/// Distances beyond this score as this one.
const MAX_TABLE_DISTANCE: u32 = 1_000;
const _: () =
    assert!(TABLE_WIN - MAX_TABLE_DISTANCE as i32 > TB_WIN && TABLE_WIN < crate::score::MATE_BOUND);

/// Ranks the root moves with tables that cover the root: a decided root
/// is played at once (the winner never cycles, the loser delays), a drawn
/// one searched over the drawing moves. `None` when the tables have
/// nothing to say (no legal move among those asked for, or a layer that
/// cannot be read).
pub(super) fn probe_root(
    request: &Request,
    layered: &Arc<Layered>,
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
            let value = if super::traps::repeats(request, &root, mv) {
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
    ranked.sort_by_key(|&(_, value)| std::cmp::Reverse(value.preference()));
    // Where the tables know every move's distance to the end, a decided
    // root plays by it (the winner to the quickest end, the loser to the
    // slowest), so the line shown is as long as the mate reported.
    let ends: Option<Vec<Dtz>> = ranked
        .iter()
        .map(|&(mv, value)| match value {
            Dtz::Draw => Some(Dtz::Draw),
            _ => layered
                .end_after(&root, mv)
                .filter(|end| end.wdl() == value.wdl()),
        })
        .collect();
    if let Some(ends) = ends {
        let mut by_end: Vec<((Move, Dtz), Dtz)> = ranked.into_iter().zip(ends).collect();
        by_end.sort_by_key(|&(_, end)| std::cmp::Reverse(end.preference()));
        ranked = by_end.into_iter().map(|(ranked, _)| ranked).collect();
    }
    if ranked[0].1 == Dtz::Draw {
        let moves = ranked
            .iter()
            .take_while(|(_, value)| *value == Dtz::Draw)
            .map(|&(mv, _)| mv)
            .collect();
        let moves = super::traps::prefer(request, layered, moves, &mut probes);
        return Some(RootProbe::Drawn { moves, probes });
    }
    // The lines go on while the move's time allows.
    let reads_until = request.budget().map(|budget| started + budget.soft);
    let mut lines = Vec::new();
    for (index, &(mv, value)) in ranked
        .iter()
        .take(request.settings.multipv.max(1))
        .enumerate()
    {
        let mut pv = vec![mv];
        pv.extend(layered_line(
            layered,
            root.play(mv),
            &mut probes,
            stop,
            reads_until,
        ));
        lines.push((index + 1, move_score(layered, &root, mv, value), pv));
    }
    let best = lines[0].1;
    Some(decided(lines, probes, started, best))
}

/// The line of best play by layered tables from `position` (the winner
/// hurrying to the end, the loser delaying it, where the tables know the
/// distance to the end; else the winner making progress or nearing it,
/// the loser delaying) until the game ends,
/// the position is drawn, `stop` is set, [`MAX_PLY`] moves are made (a
/// damaged table cannot make it endless), a value cannot be read, or
/// `reads_until` (if given) has passed: the line is for show, and each
/// move of it reads a block or two a legal move.
fn layered_line(
    layered: &Layered,
    mut position: Position,
    probes: &mut u64,
    stop: &AtomicBool,
    reads_until: Option<Instant>,
) -> Vec<Move> {
    let mut line = Vec::new();
    while !stop.load(Ordering::Relaxed) && line.len() < MAX_PLY {
        if reads_until.is_some_and(|until| Instant::now() >= until) {
            break;
        }
        let ranked = layered
            .rank_ends(&position)
            .unwrap_or_else(|| layered.rank_moves(&position));
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
    use crate::tablebase;

    #[test]
    fn stop_ends_the_line_at_once() {
        let table = tablebase::builtin(3, Rules::Textbook).unwrap();
        let mut probes = 0;
        let line = layered_line(
            &table,
            Position::start(3),
            &mut probes,
            &AtomicBool::new(true),
            None,
        );
        assert!(line.is_empty());
        assert_eq!(probes, 0);
    }

    #[test]
    fn the_line_goes_on_only_while_the_move_has_time() {
        let dir = crate::solver::solve_4x4_in_temp("line-read", Rules::Classic);
        let table = Layered::open(&dir).unwrap();
        // White wins the 4 x 4 classic game after a2a1.
        let start = Position::start(4);
        let root = start.play(crate::notation::parse_move("a2a1", &start).unwrap());
        let line = |reads_until| {
            let stop = AtomicBool::new(false);
            layered_line(&table, root, &mut 0, &stop, reads_until)
        };
        // Out of time: no line.
        assert!(line(Some(Instant::now())).is_empty());
        // With time, the whole game.
        let whole = line(None);
        let end = whole.iter().fold(root, |position, &mv| position.play(mv));
        assert_eq!(
            end.outcome(Rules::Classic).and_then(|o| o.winner()),
            Some(crate::board::Color::White)
        );
        let far = Instant::now() + std::time::Duration::from_secs(3600);
        assert_eq!(line(Some(far)), whole);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sound_table_gives_a_whole_line_to_the_end() {
        let table = tablebase::builtin(3, Rules::Textbook).unwrap();
        let start = Position::start(3);
        let mut probes = 0;
        let line = layered_line(&table, start, &mut probes, &AtomicBool::new(false), None);
        let mut position = start;
        for &mv in &line {
            position = position.play(mv);
        }
        // Black wins the 3 x 3 start: the line ends with its last car off.
        assert_eq!(
            position.outcome(Rules::Textbook).and_then(|o| o.winner()),
            Some(crate::board::Color::Black)
        );
    }
}
