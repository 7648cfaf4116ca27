//! Weaker play for people: `Skill Level` 0 (a beginner) to 20 (full
//! strength).
//!
//! Below 20, the engine plays like a player who looks a little way ahead
//! and misjudges what it sees:
//!
//! - it searches every root move (MultiPV over all of them) within a node
//!   budget that grows with the level, from 24 nodes at level 0 (about
//!   two plies) to some 28,000 at level 19;
//! - to each move's score it adds a random error, normally distributed,
//!   whose spread shrinks with the level (60 evaluation units, two cars'
//!   moves, at level 0; under 3 at level 19), and plays the move that then
//!   looks best. Close calls go wrong often, clear ones rarely, so the
//!   moves stay natural;
//! - where a solved table decides the root, it knows each move's solved
//!   value only with probability level / 20 (else it goes by its own
//!   search), so a weak level can spoil a solved win.
//!
//! Two small terms make sure a weak level finishes its games: a move that
//! drives a car forward or off the board gets a bonus, and a move back
//! into a position the game has already had a penalty, so a level that is
//! ahead drives on instead of going round in circles.
//!
//! The levels' measured strength is in docs/skill.md.

use super::TableUse;
use super::tablebase::move_score;
use super::{Info, MAX_PLY, Request, SearchResult, Signals, Tables, search};
use crate::board::{MAX_MOVES, Move, Position};
use crate::score::TABLE_WIN_BOUND;
use crate::score::{MATE, Score};
use crate::wdl::Wdl;

/// A level and the seed of its random errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skill {
    level: u8,
    seed: u64,
}

/// Tunables of the levels.
mod params {
    /// Node budget at level 0, and its growth per level.
    pub const NODES_AT_0: f64 = 24.0;
    pub const NODE_GROWTH: f64 = 1.45;
    /// Spread (standard deviation) of the error at level 0, in
    /// evaluation units, and its shrinking per level.
    pub const SPREAD_AT_0: f64 = 60.0;
    pub const SPREAD_DECAY: f64 = 0.85;
    /// What a proven win is worth to the move picker: above any score the
    /// search can give a position that is not decided (those are clipped
    /// 50 units below).
    pub const DECIDED: f64 = 400.0;
    /// Bonus of a move that makes progress (a car forward or off).
    pub const PROGRESS_BONUS: f64 = 8.0;
    /// Penalty of a move into a position the game has had, per earlier
    /// occurrence.
    pub const REPEAT_PENALTY: f64 = 40.0;
}

impl Skill {
    /// Full strength.
    pub const MAX_LEVEL: u8 = 20;

    /// Level `level` (at most [`Skill::MAX_LEVEL`]), seed 0.
    pub fn new(level: u8) -> Skill {
        Skill {
            level: level.min(Skill::MAX_LEVEL),
            seed: 0,
        }
    }

    /// The same level with its errors drawn from `seed`.
    pub fn with_seed(self, seed: u64) -> Skill {
        Skill { seed, ..self }
    }

    pub fn level(self) -> u8 {
        self.level
    }

    /// Whether this is full strength (no weakening at all).
    pub fn is_full(self) -> bool {
        self.level >= Skill::MAX_LEVEL
    }

    /// The node budget of one move.
    pub fn nodes(self) -> u64 {
        (params::NODES_AT_0 * params::NODE_GROWTH.powi(i32::from(self.level))).round() as u64
    }

    /// The spread of the error added to each move's score.
    fn spread(self) -> f64 {
        params::SPREAD_AT_0 * params::SPREAD_DECAY.powi(i32::from(self.level))
    }

    /// The chance of knowing a move's solved value.
    fn knowledge(self) -> f64 {
        f64::from(self.level) / f64::from(Skill::MAX_LEVEL)
    }
}

impl Default for Skill {
    fn default() -> Self {
        Skill::new(Skill::MAX_LEVEL)
    }
}

/// A root move as the weak level sees it.
struct Candidate {
    mv: Move,
    /// Its score (internal units, the mover's view): the table's where
    /// the level knows it, else its search's.
    score: i32,
    /// The line the search reported for it.
    line: Info,
}

/// Plays one move at a level below full strength (the search's hook for
/// `Skill Level`): a search over every root move within the level's
/// budget, table values where the level knows them, an error on each
/// score, the best-looking move. Reports the search's lines (the first
/// `MultiPV` of them, with the table's exact values where it has them) and,
/// when the move played is not the first line's, that move's line last.
pub(super) fn play(
    request: &Request,
    tables: &mut Tables,
    signals: &Signals,
    report: &mut dyn FnMut(Info),
) -> SearchResult {
    let skill = request.settings.skill;
    let root = request.position;
    let mut rng = Rng::new(skill.seed ^ root.key());
    let solved = solved_scores(request);
    let mut searched = request.clone();
    searched.settings.skill = Skill::default();
    searched.settings.multipv = MAX_MOVES;
    searched.limits.nodes = Some(request.limits.nodes.unwrap_or(u64::MAX).min(skill.nodes()));
    // The level's own search: what it knows of the tables is the
    // `knowledge` share of the root's values above.
    searched.tablebase = TableUse::default();
    let shown = request.settings.multipv.max(1);
    let mut lines: Vec<Info> = Vec::new();
    let exact = |mut info: Info| {
        if let Some(&(_, score, probes)) =
            solved.iter().find(|(mv, ..)| info.pv.first() == Some(mv))
        {
            info.score = Score::from_internal(score);
            info.wdl = Wdl::proven(score).unwrap_or(Wdl::DRAW);
            info.tbhits = probes;
        }
        info
    };
    let result = search(&searched, tables, signals, &mut |info| {
        let info = exact(info);
        // Each completed iteration reports its lines in order, from 1.
        if info.multipv == 1 {
            lines.clear();
        }
        if info.multipv <= shown {
            report(info.clone());
        }
        lines.push(info);
    });
    if lines.is_empty() {
        return result;
    }
    let candidates: Vec<Candidate> = lines
        .into_iter()
        .filter_map(|line| {
            let mv = *line.pv.first()?;
            let searched = internal(line.score);
            let score = match solved.iter().find(|(known, ..)| *known == mv) {
                Some(&(_, score, _)) if rng.chance(skill.knowledge()) => score,
                _ => searched,
            };
            Some(Candidate { mv, score, line })
        })
        .collect();
    let Some(chosen) = pick(request, &candidates, skill, &mut rng) else {
        return result;
    };
    let chosen = &candidates[chosen];
    if Some(chosen.mv) != result.best_move {
        let mut line = chosen.line.clone();
        line.multipv = 1;
        report(line);
    }
    SearchResult {
        best_move: Some(chosen.mv),
        ponder_move: chosen.line.pv.get(1).copied(),
        score: chosen.score,
        ..result
    }
}

/// The index of the move the level plays: the best score once each has
/// its error, bonus and penalty.
fn pick(request: &Request, candidates: &[Candidate], skill: Skill, rng: &mut Rng) -> Option<usize> {
    let root = request.position;
    let looks = |candidate: &Candidate, rng: &mut Rng| {
        let mut looks = worth(candidate.score) + skill.spread() * rng.normal();
        if candidate.mv.is_irreversible(root.side_to_move()) {
            looks += params::PROGRESS_BONUS;
        }
        looks - params::REPEAT_PENALTY * earlier(request, &root.play(candidate.mv)) as f64
    };
    let mut best: Option<(usize, f64)> = None;
    for (index, candidate) in candidates.iter().enumerate() {
        let value = looks(candidate, rng);
        if best.is_none_or(|(_, top)| value > top) {
            best = Some((index, value));
        }
    }
    best.map(|(index, _)| index)
}

/// What a score is worth to the picker: a proven win (loss) is worth
/// [`params::DECIDED`] (its negation) and a little more the faster it
/// comes (the slower, for a loss); other scores are clipped below that.
fn worth(score: i32) -> f64 {
    if let Some(wdl) = Wdl::proven(score) {
        let speed = f64::from(score.abs() - TABLE_WIN_BOUND) / 10.0;
        let decided = params::DECIDED + speed;
        return if wdl == Wdl::WIN { decided } else { -decided };
    }
    let clip = params::DECIDED - 50.0;
    f64::from(score).clamp(-clip, clip)
}

/// How many times the game has had `position` (since the last progress
/// move, the only positions that can recur), the root included.
fn earlier(request: &Request, position: &Position) -> usize {
    let key = position.key();
    let root = usize::from(request.position.key() == key);
    request.history.iter().filter(|&&k| k == key).count() + root
}

/// The solved value of each root move, as an internal score from the
/// mover's view with the table lookups it took; empty where no table
/// decides the root. A move into a position the game has had twice is a
/// draw, whatever the table says.
fn solved_scores(request: &Request) -> Vec<(Move, i32, u64)> {
    let root = request.position;
    let ranked: Vec<(Move, i32)> = match &request.tablebase.root {
        Some(table) => table
            .rank_moves(&root)
            .into_iter()
            .map(|(mv, value)| (mv, move_score(table, &root, mv, value)))
            .collect(),
        None => Vec::new(),
    };
    let probes = ranked.len() as u64;
    ranked
        .into_iter()
        .map(|(mv, score)| {
            let repeats = earlier(request, &root.play(mv)) >= 2;
            (mv, if repeats { 0 } else { score }, probes)
        })
        .collect()
}

/// An internal score back from its reported form (a mate in `n` moves is
/// `MATE - (2n - 1)` plies for a win, `-(MATE - 2n)` for a loss).
fn internal(score: Score) -> i32 {
    match score {
        Score::Cp(cp) => cp,
        Score::Mate(n) if n > 0 => MATE - (2 * n - 1).min(MAX_PLY as i32),
        Score::Mate(n) => -(MATE - (-2 * n).min(MAX_PLY as i32)),
    }
}

/// A small random source (xorshift64*), seeded per move.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // Any seed works; zero would stay zero.
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        self.unit() <= p
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grow_in_budget_and_shrink_in_error() {
        let mut last = (0, f64::INFINITY);
        for level in 0..Skill::MAX_LEVEL {
            let skill = Skill::new(level);
            assert!(!skill.is_full());
            assert!(skill.nodes() > last.0 && skill.spread() < last.1);
            last = (skill.nodes(), skill.spread());
        }
        assert_eq!(Skill::new(0).nodes(), 24);
        assert!(Skill::new(19).nodes() < 40_000);
        assert!(Skill::new(200).is_full());
        assert!(Skill::default().is_full());
    }

    #[test]
    fn proven_results_outweigh_any_evaluation() {
        assert!(worth(MATE - 40) > worth(20_000));
        assert!(worth(MATE - 3) > worth(MATE - 5));
        assert!(worth(-(MATE - 5)) < worth(-(MATE - 40)));
        assert!(worth(30_000 - 2) > worth(TABLE_WIN_BOUND - 1));
        assert_eq!(worth(-30), -30.0);
    }

    #[test]
    fn reported_mates_read_back() {
        for score in [MATE - 1, MATE - 9, -(MATE - 2), -(MATE - 18), 0, 77, -5] {
            assert_eq!(internal(Score::from_internal(score)), score);
        }
    }

    #[test]
    fn the_error_is_centred_and_spread() {
        let mut rng = Rng::new(7);
        let draws: Vec<f64> = (0..20_000).map(|_| rng.normal()).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let var = draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }
}
