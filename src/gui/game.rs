//! The game the GUI shows: its start, the moves since, and how it ended.
//!
//! The server judges every move and the end of the game here, with the
//! library's rules; the engine only suggests moves.

use std::fmt;

use crate::board::{Move, Outcome, Position, Rules};
use crate::notation::{self, MoveError};

/// Why a move was not played.
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

/// A game: a start position, the rules, and the moves played.
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    /// `positions[0]` is the start; `positions[i]` follows `moves[i - 1]`.
    positions: Vec<Position>,
    moves: Vec<Move>,
}

impl Game {
    pub fn new(start: Position, rules: Rules) -> Game {
        Game {
            rules,
            positions: vec![start],
            moves: Vec::new(),
        }
    }

    pub fn rules(&self) -> Rules {
        self.rules
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

    /// How the game ended, if it has: all cars off, a blocked side to move
    /// (judged under the game's rules), or the current position occurring
    /// for the third time.
    pub fn outcome(&self) -> Option<Outcome> {
        let current = self.position();
        current.outcome(self.rules).or_else(|| {
            // Positions before an irreversible move cannot recur, so
            // counting over the whole game is the same as counting since
            // the last one.
            let seen = self.positions.iter().filter(|&p| p == current).count();
            (seen >= 3).then_some(Outcome::DrawByRepetition)
        })
    }

    /// The legal moves in protocol notation, sorted; none once the game is
    /// over.
    pub fn legal_moves(&self) -> Vec<String> {
        if self.outcome().is_some() {
            return Vec::new();
        }
        notation::format_moves_sorted(&self.position().legal_moves())
    }

    /// Plays a move given in protocol notation.
    ///
    /// # Errors
    /// [`PlayError::GameOver`] after the end of the game, [`PlayError::Move`]
    /// for a malformed or illegal move; the game is unchanged.
    pub fn play(&mut self, text: &str) -> Result<Move, PlayError> {
        if let Some(outcome) = self.outcome() {
            return Err(PlayError::GameOver(outcome));
        }
        let mv = notation::parse_move(text, self.position()).map_err(PlayError::Move)?;
        let next = self.position().play(mv);
        self.positions.push(next);
        self.moves.push(mv);
        Ok(mv)
    }

    /// Takes back the last move, if there is one.
    pub fn undo(&mut self) -> Option<Move> {
        let mv = self.moves.pop()?;
        self.positions.pop();
        Some(mv)
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

    fn game(start: &str, rules: Rules) -> Game {
        Game::new(notation::parse_position(start).unwrap(), rules)
    }

    #[test]
    fn plays_undoes_and_describes_itself_as_a_position_command() {
        let mut game = game("B2/B2/1WW b", Rules::Textbook);
        assert_eq!(game.position_command(), "position fen B2/B2/1WW b");
        assert_eq!(game.legal_moves(), ["a2a1", "a2b2", "a3b3"]);
        game.play("a3b3").unwrap();
        game.play("b1b2").unwrap();
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
        let mut game = game("B2/B2/1WW b", Rules::Textbook);
        assert!(matches!(
            game.play("b1b2"),
            Err(PlayError::Move(MoveError::Illegal(_)))
        ));
        assert!(matches!(
            game.play("zz"),
            Err(PlayError::Move(MoveError::Syntax(_)))
        ));
        assert!(game.moves().is_empty());
    }

    #[test]
    fn ends_when_the_cars_are_off() {
        let mut game = game("2B/3/W2 b", Rules::Textbook);
        game.play("c3d3").unwrap();
        let outcome = Outcome::Win(Color::Black, WinReason::AllCarsOff);
        assert_eq!(game.outcome(), Some(outcome));
        assert!(game.legal_moves().is_empty());
        assert_eq!(game.play("a1a2"), Err(PlayError::GameOver(outcome)));
    }

    #[test]
    fn a_blocked_side_loses_or_wins_by_the_rules() {
        // White to move, its only car boxed in by Black's.
        let text = "3/B2/WB1 w";
        let blocked = WinReason::Blocked(Color::White);
        assert_eq!(
            game(text, Rules::Textbook).outcome(),
            Some(Outcome::Win(Color::Black, blocked))
        );
        assert_eq!(
            game(text, Rules::Classic).outcome(),
            Some(Outcome::Win(Color::White, blocked))
        );
    }

    #[test]
    fn the_third_occurrence_is_a_draw() {
        let mut game = game("3/B2/2W b", Rules::Textbook);
        for mv in ["a2a3", "c1b1", "a3a2", "b1c1", "a2a3", "c1b1", "a3a2"] {
            assert_eq!(game.outcome(), None);
            game.play(mv).unwrap();
        }
        assert_eq!(game.outcome(), None, "the start has occurred twice");
        game.play("b1c1").unwrap();
        assert_eq!(game.outcome(), Some(Outcome::DrawByRepetition));
    }
}
