//! Plays the two evaluation functions against each other in-process, at a
//! fixed node budget per move, from random openings with colours swapped.
//! This is how the default `Evaluation` was chosen (see README).
//!
//! ```text
//! cargo run --release --example evalmatch -- [size] [games] [nodes] [rules]
//! ```

use dodgem::board::{Color, Rules};
use dodgem::eval::Evaluation;
use dodgem::game::Game;
use dodgem::search::{Limits, Request, Settings, Signals, Tables, search};
use dodgem::{Outcome, Position};

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

/// Plays one game; returns the winner's evaluation, or `None` for a draw.
fn play(
    opening: Position,
    black: Evaluation,
    white: Evaluation,
    rules: Rules,
    nodes: u64,
) -> Option<Evaluation> {
    let mut game = Game::new(opening);
    let mut tables = [Tables::new(16), Tables::new(16)];
    for _ply in 0..400 {
        if let Some(outcome) = game.outcome(rules) {
            return match outcome {
                Outcome::Win(Color::Black, _) => Some(black),
                Outcome::Win(Color::White, _) => Some(white),
                Outcome::DrawByRepetition => None,
            };
        }
        let side = game.position().side_to_move();
        let evaluation = if side == Color::Black { black } else { white };
        let request = Request {
            position: *game.position(),
            history: game.history(),
            limits: Limits {
                nodes: Some(nodes),
                ..Limits::default()
            },
            settings: Settings {
                rules,
                evaluation,
                ..Settings::default()
            },
            tablebase: Default::default(),
        };
        let outcome = search(
            &request,
            &mut tables[side.index()],
            &Signals::default(),
            &mut |_| {},
        );
        let mv = outcome.best_move.expect("a move in an unfinished game");
        game.play(mv);
    }
    None
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let size: usize = args.first().map_or(5, |a| a.parse().expect("size"));
    let games: usize = args.get(1).map_or(100, |a| a.parse().expect("games"));
    let nodes: u64 = args.get(2).map_or(20_000, |a| a.parse().expect("nodes"));
    let rules = args
        .get(3)
        .map_or(Rules::Textbook, |a| Rules::from_name(a).expect("rules"));
    let mut rng = Rng(0x00D0_D6E3 + size as u64);
    let (mut race, mut textbook, mut draws) = (0, 0, 0);
    for _ in 0..games / 2 {
        let mut opening = Position::start(size);
        for _ in 0..4 {
            let moves = opening.legal_moves();
            opening = opening.play(moves[rng.below(moves.len())]);
        }
        for (black, white) in [
            (Evaluation::Race, Evaluation::Textbook),
            (Evaluation::Textbook, Evaluation::Race),
        ] {
            match play(opening, black, white, rules, nodes) {
                Some(Evaluation::Race) => race += 1,
                Some(Evaluation::Textbook) => textbook += 1,
                None => draws += 1,
            }
        }
    }
    let played = race + textbook + draws;
    let points = race as f64 + draws as f64 / 2.0;
    println!(
        "{size}x{size} {} {nodes} nodes/move: race {race} - textbook {textbook} - draws {draws} ({:.1}% for race, {played} games)",
        rules.name(),
        100.0 * points / played as f64
    );
}
