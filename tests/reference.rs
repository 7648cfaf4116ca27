//! A reference solver for small boards, written as plainly as possible and
//! sharing nothing with the product's solver but the board's own move
//! generator and rules: every position is listed by placing cars on the
//! board, and values are found by the textbook retrograde analysis, level
//! by level, over lists of successors and predecessors.
//!
//! It finds two things for every position with a car of each side on the
//! board: the distance to the end of the game under best play (the winner
//! hurrying, the loser delaying; checked against the published facts about
//! 3 x 3 and 4 x 4), and the value the product's tables store, win, draw
//! or loss with the plies to the next progress move (a forward move or an
//! exit) that keeps the result.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};

use dodgem::board::{Color, Outcome, Position, Rules, WinReason};
use dodgem::solver::Dtz;

/// A value with the distance to the end of the game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtm {
    Win(u32),
    Draw,
    Loss(u32),
}

/// Every position of one board and rule with its values.
pub struct Reference {
    pub positions: Vec<Position>,
    pub index: HashMap<Position, usize>,
    pub dtm: Vec<Dtm>,
    pub dtz: Vec<Dtz>,
}

/// A decided value at a level of the retrograde: won or lost for the side
/// to move, this many plies from the end (or from progress).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decided {
    Won(u32),
    Lost(u32),
}

impl Reference {
    /// The reference for `size` (3 or 4) under `rules`, solved once per
    /// test run.
    pub fn get(size: usize, rules: Rules) -> Arc<Reference> {
        type Solved = HashMap<(usize, Rules), Arc<Reference>>;
        static SOLVED: OnceLock<Mutex<Solved>> = OnceLock::new();
        let solved = SOLVED.get_or_init(Default::default);
        let mut solved = solved.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(
            solved
                .entry((size, rules))
                .or_insert_with(|| Arc::new(Reference::solve(size, rules))),
        )
    }

    fn solve(size: usize, rules: Rules) -> Reference {
        let positions = all_positions(size);
        let index: HashMap<Position, usize> =
            positions.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        // Successors by move: another position, or the end of the game
        // (the mover took its last car off).
        let mut children: Vec<Vec<(Option<usize>, bool)>> = Vec::new();
        for position in &positions {
            let side = position.side_to_move();
            let mut list = Vec::new();
            for &mv in position.legal_moves().as_slice() {
                let child = position.play(mv);
                let progress = mv.is_irreversible(side);
                if child.cars(side) == 0 {
                    list.push((None, progress));
                } else {
                    list.push((Some(index[&child]), progress));
                }
            }
            children.push(list);
        }
        let blocked = |position: &Position| match position.outcome(rules) {
            Some(Outcome::Win(winner, WinReason::Blocked(_))) => {
                Some(if winner == position.side_to_move() {
                    Decided::Won(0)
                } else {
                    Decided::Lost(0)
                })
            }
            _ => None,
        };

        // Distance to the end: every move counts.
        let mut seeds = Vec::new();
        for (i, position) in positions.iter().enumerate() {
            if let Some(value) = blocked(position) {
                seeds.push((i, value));
            } else if children[i].iter().any(|(child, _)| child.is_none()) {
                seeds.push((i, Decided::Won(1)));
            }
        }
        let every_move: Vec<Vec<usize>> = children
            .iter()
            .map(|list| list.iter().filter_map(|&(child, _)| child).collect())
            .collect();
        let escapes = vec![false; positions.len()];
        let dtm = retrograde(&every_move, &escapes, seeds)
            .into_iter()
            .map(|value| match value {
                Some(Decided::Won(d)) => Dtm::Win(d),
                Some(Decided::Lost(d)) => Dtm::Loss(d),
                None => Dtm::Draw,
            })
            .collect::<Vec<_>>();

        // Distance to progress: a progress move ends the count, with the
        // value of the position it reaches; only sideways moves are
        // followed.
        let mut seeds = Vec::new();
        let mut sideways = Vec::new();
        let mut escapes = Vec::new();
        for (i, position) in positions.iter().enumerate() {
            let mut wins_by_progress = false;
            let mut escape = false;
            let mut moves_sideways = Vec::new();
            for &(child, progress) in &children[i] {
                match (child, progress) {
                    (None, _) => wins_by_progress = true,
                    (Some(c), true) => match dtm[c] {
                        Dtm::Loss(_) => wins_by_progress = true,
                        Dtm::Draw => escape = true,
                        Dtm::Win(_) => {}
                    },
                    (Some(c), false) => moves_sideways.push(c),
                }
            }
            if let Some(value) = blocked(position) {
                seeds.push((i, value));
            } else if wins_by_progress {
                seeds.push((i, Decided::Won(1)));
            } else if moves_sideways.is_empty() && !escape {
                // Every move is progress into a position the opponent wins.
                seeds.push((i, Decided::Lost(1)));
            }
            sideways.push(moves_sideways);
            escapes.push(escape);
        }
        let dtz = retrograde(&sideways, &escapes, seeds)
            .into_iter()
            .map(|value| match value {
                Some(Decided::Won(d)) => Dtz::Win(d),
                Some(Decided::Lost(d)) => Dtz::Loss(d),
                None => Dtz::Draw,
            })
            .collect::<Vec<_>>();
        Reference {
            positions,
            index,
            dtm,
            dtz,
        }
    }

    /// The values of `position` (with a car of each side on the board).
    pub fn dtm(&self, position: &Position) -> Dtm {
        self.dtm[self.index[position]]
    }

    pub fn dtz(&self, position: &Position) -> Dtz {
        self.dtz[self.index[position]]
    }

    /// Win, draw and loss counts (for the side to move) of every position
    /// reachable from the start, finished games counted as lost for their
    /// side to move.
    pub fn reachable_counts(&self) -> (u64, u64, u64) {
        let start = Position::start(self.positions[0].size());
        let mut seen = std::collections::HashSet::from([start]);
        let mut queue = VecDeque::from([start]);
        let (mut wins, mut draws, mut losses) = (0, 0, 0);
        while let Some(position) = queue.pop_front() {
            if position.cars(Color::Black) == 0 || position.cars(Color::White) == 0 {
                losses += 1;
                continue;
            }
            match self.dtm(&position) {
                Dtm::Win(_) => wins += 1,
                Dtm::Draw => draws += 1,
                Dtm::Loss(_) => losses += 1,
            }
            for &mv in position.legal_moves().as_slice() {
                let next = position.play(mv);
                if seen.insert(next) {
                    queue.push_back(next);
                }
            }
        }
        (wins, draws, losses)
    }
}

/// The retrograde analysis over `moves` (each position's successors
/// followed), from `seeds` (positions decided without looking further);
/// `escapes` marks positions with a drawn way out not in `moves`. Levels
/// go in order, so a win takes the fewest plies and a loss the most.
fn retrograde(
    moves: &[Vec<usize>],
    escapes: &[bool],
    seeds: Vec<(usize, Decided)>,
) -> Vec<Option<Decided>> {
    let mut predecessors = vec![Vec::new(); moves.len()];
    for (parent, list) in moves.iter().enumerate() {
        for &child in list {
            predecessors[child].push(parent);
        }
    }
    let mut left: Vec<usize> = moves.iter().map(Vec::len).collect();
    let mut value: Vec<Option<Decided>> = vec![None; moves.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    for (i, decided) in seeds {
        let level = match decided {
            Decided::Won(d) | Decided::Lost(d) => d as usize,
        };
        value[i] = Some(decided);
        if levels.len() <= level {
            levels.resize(level + 1, Vec::new());
        }
        levels[level].push(i);
    }
    let mut level = 0;
    while level < levels.len() {
        let current = std::mem::take(&mut levels[level]);
        let next = level as u32 + 1;
        let mut found = Vec::new();
        for child in current {
            let child_lost = matches!(value[child], Some(Decided::Lost(_)));
            for &parent in &predecessors[child] {
                if value[parent].is_some() {
                    continue;
                }
                if child_lost {
                    value[parent] = Some(Decided::Won(next));
                    found.push(parent);
                } else {
                    left[parent] -= 1;
                    if left[parent] == 0 && !escapes[parent] {
                        value[parent] = Some(Decided::Lost(next));
                        found.push(parent);
                    }
                }
            }
        }
        if !found.is_empty() {
            if levels.len() <= level + 1 {
                levels.resize(level + 2, Vec::new());
            }
            levels[level + 1].extend(found);
        }
        level += 1;
    }
    value
}

/// Every position of `size` x `size` with 1 to `size - 1` cars a side on
/// the board, each side to move: every way to place them, written as a
/// position string and read by the board's own parser.
fn all_positions(size: usize) -> Vec<Position> {
    let cells = size * size;
    let sets: Vec<u32> = (1u32..1 << cells)
        .filter(|set| (1..size as u32).contains(&set.count_ones()))
        .collect();
    let mut positions = Vec::new();
    for &black in &sets {
        for &white in &sets {
            if black & white != 0 {
                continue;
            }
            let rows: Vec<String> = (0..size)
                .map(|row| {
                    let mut text = String::new();
                    let mut gap = 0;
                    for column in 0..size {
                        let bit = 1 << (row * size + column);
                        let car = if black & bit != 0 {
                            'B'
                        } else if white & bit != 0 {
                            'W'
                        } else {
                            gap += 1;
                            continue;
                        };
                        if gap > 0 {
                            text.push_str(&gap.to_string());
                            gap = 0;
                        }
                        text.push(car);
                    }
                    if gap > 0 {
                        text.push_str(&gap.to_string());
                    }
                    text
                })
                .collect();
            for side in ["b", "w"] {
                let text = format!("{} {side}", rows.join("/"));
                positions.push(dodgem::notation::parse_position(&text).unwrap());
            }
        }
    }
    positions
}
