//! Plays two evaluation functions against each other in-process, at a
//! fixed node budget per move, from random openings with colours swapped.
//! This is how `race` was chosen over `textbook` (see docs/strength.md).
//!
//! ```text
//! cargo run --release --example evalmatch -- [size] [games] [nodes] [rules] [first] [second] [nodes2]
//! ```
//!
//! `first` and `second` name the evaluations (default `race` and
//! `textbook`); `nodes2`, if given, is the second's node budget (to give
//! a costlier evaluation's opponent the nodes it could search in the same
//! instructions).

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

/// Plays one game; returns the winner's colour, or `None` for a draw.
fn play(
    opening: Position,
    black: (Evaluation, u64),
    white: (Evaluation, u64),
    rules: Rules,
) -> Option<Color> {
    let mut game = Game::new(opening);
    let mut tables = [Tables::new(16), Tables::new(16)];
    for _ply in 0..400 {
        if let Some(outcome) = game.outcome(rules) {
            return match outcome {
                Outcome::Win(color, _) => Some(color),
                Outcome::DrawByRepetition => None,
            };
        }
        let side = game.position().side_to_move();
        let (evaluation, nodes) = if side == Color::Black { black } else { white };
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
    let evaluation = |index: usize, default: Evaluation| {
        args.get(index)
            .map_or(default, |a| Evaluation::from_name(a).expect("evaluation"))
    };
    let first = evaluation(4, Evaluation::Race);
    let second = evaluation(5, Evaluation::Textbook);
    let nodes2: u64 = args.get(6).map_or(nodes, |a| a.parse().expect("nodes2"));
    let mut rng = Rng(0x00D0_D6E3 + size as u64);
    let (mut wins, mut losses, mut draws) = (0, 0, 0);
    for _ in 0..games / 2 {
        let mut opening = Position::start(size);
        for _ in 0..4 {
            let moves = opening.legal_moves();
            opening = opening.play(moves[rng.below(moves.len())]);
        }
        for first_plays in [Color::Black, Color::White] {
            let (black, white) = match first_plays {
                Color::Black => ((first, nodes), (second, nodes2)),
                Color::White => ((second, nodes2), (first, nodes)),
            };
            match play(opening, black, white, rules) {
                Some(winner) if winner == first_plays => wins += 1,
                Some(_) => losses += 1,
                None => draws += 1,
            }
        }
    }
    let played = wins + losses + draws;
    let points = wins as f64 + draws as f64 / 2.0;
    println!(
        "{size}x{size} {} {nodes}/{nodes2} nodes/move: {} {wins} - {} {losses} - draws {draws} ({:.1}% for {}, {played} games)",
        rules.name(),
        first.name(),
        second.name(),
        100.0 * points / played as f64,
        first.name()
    );
}
