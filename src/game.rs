//! A game: where it started, the moves since, and how it ended.
//!
//! The engine, the referee and the GUI server all keep their game in a
//! [`Game`], so the end of a game (all cars off, a blocked side to move,
//! the third occurrence of a position) is judged in one place, and a game
//! is sent to an engine as one `position fen ... moves ...` line.
//!
//! ```
//! use dodgem::game::Game;
//! use dodgem::{Position, Rules};
//! let mut game = Game::new(Position::start(3));
//! game.play_text("a3b3", Rules::Textbook).unwrap();
//! assert_eq!(game.position_command(), "position fen B2/B2/1WW b moves a3b3");
//! assert_eq!(game.outcome(Rules::Textbook), None);
//! ```

use std::fmt;

use crate::board::{Move, Outcome, Position, Rules};
use crate::notation::{self, MoveError};

/// Why a move given as text was not played.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayError {
    /// The game has already ended.
    GameOver(Outcome),
    /// The move is malformed or illegal.
    Move(MoveError),
}

impl fmt::Display for PlayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayError::GameOver(outcome) => write!(f, "the game is over ({outcome})"),
            PlayError::Move(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for PlayError {}

/// A start position and the moves played from it.
///
/// The rules are not part of the game: a blocked side to move loses or
/// wins by the [`Rules`] given to [`Game::outcome`], which an engine may
/// change between two searches of the same game.
#[derive(Clone, Debug)]
pub struct Game {
    /// `positions[0]` is the start; `positions[i]` follows `moves[i - 1]`.
    positions: Vec<Position>,
    moves: Vec<Move>,
    /// The index in `positions` of the first position after the last
    /// irreversible move: positions before it cannot occur again.
    reversible_from: usize,
}

impl Game {
    pub fn new(start: Position) -> Game {
        Game {
            positions: vec![start],
            moves: Vec::new(),
            reversible_from: 0,
        }
    }

    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions.last().unwrap_or(&self.positions[0])
    }

    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// Plays `mv`, which must be legal in the current position.
    pub fn play(&mut self, mv: Move) {
        let current = *self.position();
        debug_assert!(current.legal_moves().contains(mv), "illegal move {mv:?}");
        if mv.is_irreversible(current.side_to_move()) {
            self.reversible_from = self.positions.len();
        }
        self.positions.push(current.play(mv));
        self.moves.push(mv);
    }

    /// Plays a move given in protocol notation, unless the game is over
    /// under `rules`.
    ///
    /// # Errors
    /// [`PlayError::GameOver`] after the end of the game, [`PlayError::Move`]
    /// for a malformed or illegal move; the game is unchanged.
    pub fn play_text(&mut self, text: &str, rules: Rules) -> Result<Move, PlayError> {
        if let Some(outcome) = self.outcome(rules) {
            return Err(PlayError::GameOver(outcome));
        }
        let mv = notation::parse_move(text, self.position()).map_err(PlayError::Move)?;
        self.play(mv);
        Ok(mv)
    }

    /// Takes back the last move, if there is one.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        if self.reversible_from >= self.positions.len() {
            // The undone move was the last irreversible one: find the one
            // before it.
            self.reversible_from = (0..self.moves.len())
                .rev()
                .find(|&i| self.moves[i].is_irreversible(self.positions[i].side_to_move()))
                .map_or(0, |i| i + 1);
        }
        Some(mv)
    }

    /// The positions that can still occur again, the current one last.
    fn repeatable(&self) -> &[Position] {
        &self.positions[self.reversible_from..]
    }

    /// How often the current position has occurred (1 = the first time):
    /// the same cars with the same side to move.
    pub fn occurrences(&self) -> usize {
        let current = self.position().key();
        self.repeatable()
            .iter()
            .filter(|p| p.key() == current)
            .count()
    }

    /// How the game ended, if it has: all cars off, a blocked side to move
    /// (which loses or wins by `rules`), or the current position occurring
    /// for the third time.
    pub fn outcome(&self, rules: Rules) -> Option<Outcome> {
        self.position()
            .outcome(rules)
            .or_else(|| (self.occurrences() >= 3).then_some(Outcome::DrawByRepetition))
    }

    /// The keys of the positions before the current one that can still
    /// occur again (since the last irreversible move), oldest first: what
    /// a search needs to count repetitions across the game.
    pub fn history(&self) -> Vec<u64> {
        let repeatable = self.repeatable();
        repeatable[..repeatable.len() - 1]
            .iter()
            .map(Position::key)
            .collect()
    }

    /// The legal moves in protocol notation, sorted; none once the game is
    /// over under `rules`.
    pub fn legal_moves(&self, rules: Rules) -> Vec<String> {
        if self.outcome(rules).is_some() {
            return Vec::new();
        }
        notation::format_moves_sorted(&self.position().legal_moves())
    }

    /// The protocol.md command that sets up this game in an engine:
    /// `position fen <start> [moves <move>...]`. The whole game is sent,
    /// not just the current position, so the engine knows which positions
    /// have occurred (threefold repetition).
    pub fn position_command(&self) -> String {
        let mut command = format!("position fen {}", notation::format_position(self.start()));
        if !self.moves.is_empty() {
            command.push_str(" moves");
            for &mv in &self.moves {
                command.push(' ');
                command.push_str(&notation::format_move(Some(mv)));
            }
        }
        command
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{Color, WinReason};

    fn game(start: &str) -> Game {
        Game::new(notation::parse_position(start).unwrap())
    }

    const TEXTBOOK: Rules = Rules::Textbook;

    #[test]
    fn plays_undoes_and_describes_itself_as_a_position_command() {
        let mut game = game("B2/B2/1WW b");
        assert_eq!(game.position_command(), "position fen B2/B2/1WW b");
        assert_eq!(game.legal_moves(TEXTBOOK), ["a2a1", "a2b2", "a3b3"]);
        game.play_text("a3b3", TEXTBOOK).unwrap();
        game.play_text("b1b2", TEXTBOOK).unwrap();
        assert_eq!(
            game.position_command(),
            "position fen B2/B2/1WW b moves a3b3 b1b2"
        );
        assert_eq!(notation::format_position(game.position()), "1B1/BW1/2W b");
        assert_eq!(
            game.undo().map(|mv| notation::format_move(Some(mv))),
            Some("b1b2".into())
        );
        assert!(game.undo().is_some());
        assert_eq!(game.undo(), None);
        assert_eq!(game.position(), &Position::start(3));
    }

    #[test]
    fn refuses_bad_moves_and_leaves_the_game_unchanged() {
        let mut game = game("B2/B2/1WW b");
        assert!(matches!(
            game.play_text("b1b2", TEXTBOOK),
            Err(PlayError::Move(MoveError::Illegal(_)))
        ));
        assert!(matches!(
            game.play_text("zz", TEXTBOOK),
            Err(PlayError::Move(MoveError::Syntax(_)))
        ));
        assert!(game.moves().is_empty());
    }

    #[test]
    fn ends_when_the_cars_are_off() {
        let mut game = game("2B/3/W2 b");
        game.play_text("c3d3", TEXTBOOK).unwrap();
        let outcome = Outcome::Win(Color::Black, WinReason::AllCarsOff);
        assert_eq!(game.outcome(TEXTBOOK), Some(outcome));
        assert!(game.legal_moves(TEXTBOOK).is_empty());
        assert_eq!(
            game.play_text("a1a2", TEXTBOOK),
            Err(PlayError::GameOver(outcome))
        );
    }

    #[test]
    fn a_blocked_side_loses_or_wins_by_the_rules() {
        // White to move, its only car boxed in by Black's.
        let game = game("3/B2/WB1 w");
        let blocked = WinReason::Blocked(Color::White);
        assert_eq!(
            game.outcome(Rules::Textbook),
            Some(Outcome::Win(Color::Black, blocked))
        );
        assert_eq!(
            game.outcome(Rules::Classic),
            Some(Outcome::Win(Color::White, blocked))
        );
    }

    #[test]
    fn the_third_occurrence_is_a_draw() {
        let mut game = game("3/B2/2W b");
        for (ply, mv) in ["a2a3", "c1b1", "a3a2", "b1c1", "a2a3", "c1b1", "a3a2"]
            .into_iter()
            .enumerate()
        {
            assert_eq!(game.outcome(TEXTBOOK), None);
            assert_eq!(game.occurrences(), if ply < 4 { 1 } else { 2 });
            game.play_text(mv, TEXTBOOK).unwrap();
        }
        assert_eq!(game.outcome(TEXTBOOK), None, "the start has occurred twice");
        assert_eq!(game.history().len(), 7);
        game.play_text("b1c1", TEXTBOOK).unwrap();
        assert_eq!(game.occurrences(), 3);
        assert_eq!(game.outcome(TEXTBOOK), Some(Outcome::DrawByRepetition));
        // Taking the move back takes the draw back.
        game.undo();
        assert_eq!(game.outcome(TEXTBOOK), None);
    }

    #[test]
    fn an_irreversible_move_starts_the_count_afresh() {
        // Black shuffles, then drives forward: nothing before can recur.
        let mut game = game("3/B2/2W b");
        for mv in ["a2a3", "c1b1", "a3a2", "b1c1"] {
            game.play_text(mv, TEXTBOOK).unwrap();
        }
        assert_eq!(game.occurrences(), 2);
        assert_eq!(game.history().len(), 4);
        game.play_text("a2b2", TEXTBOOK).unwrap();
        assert_eq!(game.occurrences(), 1);
        assert!(game.history().is_empty());
        game.play_text("c1b1", TEXTBOOK).unwrap();
        assert_eq!(game.history(), [game.positions[5].key()]);
        // Undoing past the forward move restores the earlier window.
        game.undo();
        game.undo();
        assert_eq!(game.occurrences(), 2);
        assert_eq!(game.history().len(), 4);
    }
}
