//! `Skill Level`: weaker play that still plays Dodgem properly. Games are
//! played in-process through the library's search (the engine's `go`
//! does no more than this), on small boards with node limits, so they are
//! fast: a weak level must lose most games to full strength, beat a
//! random mover, and every level must finish its games.

use dodgem::board::{Color, Rules};
use dodgem::eval::Evaluation;
use dodgem::game::Game;
use dodgem::notation::format_move;
use dodgem::search::{Limits, Request, Settings, Signals, Skill, TableUse, Tables, search};
use dodgem::{Outcome, Position, tablebase};

use crate::common::{Rng, shared};

/// The longest game allowed: a level that cannot finish fails the test.
const MAX_PLIES: usize = 400;

/// Who moves for a side.
#[derive(Clone, Copy, Debug)]
enum Player {
    /// A uniformly random legal move.
    Random,
    /// `Skill Level` 0..=20 (20 is full strength), at most `nodes` a move.
    Level(u8, u64),
    /// `Skill Level` 0..=20 with `Evaluation race`, at whatever budget the
    /// level gives itself.
    RaceLevel(u8),
}

/// How a game went: the outcome and its length.
struct Played {
    outcome: Outcome,
    plies: usize,
}

/// Plays one game from `start`; tables where the board has built-in ones.
fn play(start: Position, players: [Player; 2], rules: Rules, seed: u64) -> Played {
    let mut game = Game::new(start);
    let mut rng = Rng(seed | 1);
    let mut tables = [Tables::new(1), Tables::new(1)];
    let table = tablebase::builtin(start.size(), rules);
    loop {
        if let Some(outcome) = game.outcome(rules) {
            return Played {
                outcome,
                plies: game.moves().len(),
            };
        }
        assert!(
            game.moves().len() < MAX_PLIES,
            "{players:?}: no end after {MAX_PLIES} plies: {}",
            game.position_command()
        );
        let side = game.position().side_to_move();
        let index = usize::from(side == Color::White);
        let mv = match players[index] {
            Player::Random => *rng.pick(game.position().legal_moves().as_slice()),
            Player::Level(..) | Player::RaceLevel(_) => {
                let (level, nodes, evaluation) = match players[index] {
                    Player::RaceLevel(level) => (level, u64::MAX, Evaluation::Race),
                    Player::Level(level, nodes) => (level, nodes, Evaluation::default()),
                    Player::Random => unreachable!("a random mover does not search"),
                };
                let request = Request {
                    position: *game.position(),
                    history: game.history(),
                    limits: Limits {
                        nodes: Some(nodes),
                        ..Limits::default()
                    },
                    settings: Settings {
                        rules,
                        skill: Skill::new(level).with_seed(rng.next()),
                        evaluation,
                        ..Settings::default()
                    },
                    tablebase: TableUse {
                        root: table.clone(),
                        probes: Vec::new(),
                    },
                };
                let result = search(
                    &request,
                    &mut tables[index],
                    &Signals::default(),
                    &mut |_| {},
                );
                result.best_move.expect("a move in a live game")
            }
        };
        assert!(
            game.position().legal_moves().contains(mv),
            "illegal {}",
            format_move(Some(mv))
        );
        game.play(mv);
    }
}

/// Points of `hero` over `games` games from the start of `size`, colours
/// alternating: (wins, draws, losses) and the longest game.
fn score(
    hero: Player,
    villain: Player,
    size: usize,
    rules: Rules,
    games: u64,
) -> (u32, u32, u32, usize) {
    let (mut wins, mut draws, mut losses, mut longest) = (0, 0, 0, 0);
    for game in 0..games {
        let hero_black = game % 2 == 0;
        let players = if hero_black {
            [hero, villain]
        } else {
            [villain, hero]
        };
        let played = play(Position::start(size), players, rules, 0x5EED + game * 7919);
        longest = longest.max(played.plies);
        let hero_color = if hero_black {
            Color::Black
        } else {
            Color::White
        };
        match played.outcome.winner() {
            Some(color) if color == hero_color => wins += 1,
            Some(_) => losses += 1,
            None => draws += 1,
        }
    }
    (wins, draws, losses, longest)
}

/// Full strength at a small node budget (the 3 x 3 and 4 x 4 boards are
/// played from the tables).
const FULL: Player = Player::Level(Skill::MAX_LEVEL, 4000);

/// A level at whatever budget it gives itself.
fn level(level: u8) -> Player {
    Player::Level(level, u64::MAX)
}

#[test]
fn a_weak_level_loses_to_full_strength_and_beats_a_random_mover() {
    let _cpu = shared();
    let (wins, draws, losses, _) = score(level(2), FULL, 5, Rules::Textbook, 12);
    assert!(
        losses >= 10,
        "level 2 vs full strength: +{wins} ={draws} -{losses}"
    );
    let (wins, draws, losses, _) = score(level(2), Player::Random, 5, Rules::Textbook, 12);
    assert!(
        wins >= 10,
        "level 2 vs a random mover: +{wins} ={draws} -{losses}"
    );
    let (wins, draws, losses, _) = score(level(0), Player::Random, 5, Rules::Classic, 12);
    assert!(
        wins >= 10,
        "level 0 vs a random mover: +{wins} ={draws} -{losses}"
    );
}

#[test]
fn every_level_finishes_its_games() {
    let _cpu = shared();
    // Against a random mover a level is far ahead: it must drive home
    // (`play` fails a game that goes on past MAX_PLIES), and win, not
    // shuffle into a repetition. Against itself it must finish too.
    for skill in 0..Skill::MAX_LEVEL {
        let mut won = 0;
        for (size, rules) in [(4, Rules::Textbook), (5, Rules::Classic)] {
            let (wins, _, _, longest) = score(level(skill), Player::Random, size, rules, 2);
            assert!(
                longest < 200,
                "level {skill} on {size}x{size}: {longest} plies"
            );
            won += wins;
        }
        assert!(
            won >= 3,
            "level {skill} won {won} of 4 games against a random mover"
        );
        let played = play(
            Position::start(5),
            [level(skill), level(skill)],
            Rules::Textbook,
            u64::from(skill) + 1,
        );
        assert!(
            played.plies < 200,
            "level {skill} against itself: {} plies",
            played.plies
        );
    }
}

#[test]
fn a_weak_level_can_spoil_a_solved_win() {
    let _cpu = shared();
    // Black wins the 3 x 3 start with perfect play, and full strength
    // always does; level 0, which goes by its own short search, does not
    // always. With `Evaluation learned` (the default) even level 0's tiny
    // searches find the 3 x 3 win, so level 0 plays with `race` here,
    // which misjudges it.
    let black_wins = |player: Player| {
        (0..20)
            .filter(|&game| {
                let played = play(
                    Position::start(3),
                    [player, FULL],
                    Rules::Textbook,
                    game * 31 + 7,
                );
                played.outcome.winner() == Some(Color::Black)
            })
            .count()
    };
    assert_eq!(black_wins(FULL), 20);
    let weak = black_wins(Player::RaceLevel(0));
    assert!(
        (1..20).contains(&weak),
        "level 0 won {weak} of 20 won games"
    );
}
