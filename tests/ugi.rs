//! Whole games over UGI between two copies of the engine, through a small
//! driver written to the rules a UGI referee keeps (see protocol.md, "UGI"):
//! the driver knows nothing of Dodgem. It sends the whole move list with
//! every `position`, asks player 1's engine whose turn it is, asks the
//! engine to move whether the game is over (and the other engine too), and
//! sends `go p1time .. p2time .. p1inc .. p2inc ..`; it takes the first
//! line of exactly two words starting `bestmove` as the move and appends
//! it unchecked, charging the time from `go` to that line with no margin.
//! A game ends only when an engine says so, and both engines must then
//! agree on the result. The test checks the result against the rules
//! afterwards. The games hold the `timing` lock: a clock is lost at zero,
//! so no other test may load the machine meanwhile.

use std::time::{Duration, Instant};

use dodgem::game::Game;
use dodgem::notation::parse_position;
use dodgem::{Color, Outcome, Rules};

use crate::common::{Engine, LOAD_SLACK, LONG, timing};

/// A driver's game never runs longer than this (the engines must end
/// every game themselves; this only keeps a broken build from hanging).
const MAX_PLIES: usize = 600;

/// One engine as the driver sees it.
struct Player {
    engine: Engine,
}

impl Player {
    /// Starts an engine and shakes hands in UGI, with `options` set.
    fn start(options: &[(&str, &str)]) -> Player {
        let mut engine = Engine::start();
        engine.send("ugi");
        engine.expect_line(|line| line == "ugiok", LONG);
        // The engine's own time of each move (`info string debug: ... in
        // <t> ms`), beside the driver's.
        engine.send("debug on");
        for (name, value) in options {
            engine.send(&format!("setoption name {name} value {value}"));
        }
        let mut player = Player { engine };
        player.ready();
        player
    }

    fn ready(&mut self) {
        self.engine.send("isready");
        self.engine.expect_line(|line| line == "readyok", LONG);
    }

    /// Sends `position` and a `query`; the answer of its `response` line,
    /// which must be exactly two words.
    fn ask(&mut self, position: &str, question: &str) -> String {
        self.engine.send(position);
        self.engine.send(&format!("query {question}"));
        let (line, _) = self.engine.expect_line(
            |line| line.split_whitespace().next() == Some("response"),
            LONG,
        );
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(words.len(), 2, "not `response <answer>`: {line:?}");
        words[1].to_string()
    }

    fn yes(&mut self, position: &str, question: &str) -> bool {
        match self.ask(position, question).as_str() {
            "true" => true,
            "false" => false,
            other => panic!("query {question} answered {other:?}"),
        }
    }

    /// Sends `go` and waits for exactly `bestmove <move>`; returns the
    /// move, the time from writing `go` to reading that line, and the
    /// engine's own time from reading the `go` to writing it.
    fn go(&mut self, go: &str) -> (String, Duration, Duration) {
        let sent = self.engine.send(go);
        let (lines, at) = self.engine.read_until(
            |line| line.split_whitespace().next() == Some("bestmove"),
            LONG,
        );
        let own = lines
            .iter()
            .find_map(|line| {
                let took = line
                    .strip_prefix("info string debug: ")?
                    .strip_suffix(" ms")?;
                took.rsplit(" in ").next()?.parse().ok()
            })
            .map(Duration::from_millis)
            .unwrap_or_else(|| panic!("no debug line with the engine's time: {lines:#?}"));
        let line = lines.last().unwrap();
        let words: Vec<&str> = line.split(' ').collect();
        assert_eq!(
            words.len(),
            2,
            "a UGI referee waits for exactly `bestmove <move>`, got {line:?}"
        );
        (
            words[1].to_string(),
            at.saturating_duration_since(sent),
            own,
        )
    }
}

/// A game as the driver keeps it: the start and the moves, as text.
struct Record {
    start: String,
    moves: Vec<String>,
}

impl Record {
    fn position(&self) -> String {
        let mut command = format!("position fen {}", self.start);
        if !self.moves.is_empty() {
            command.push_str(" moves ");
            command.push_str(&self.moves.join(" "));
        }
        command
    }
}

/// What a driven game gave: the result both engines agreed on, the moves,
/// and the least time left on a clock after a move.
struct Played {
    result: String,
    record: Record,
    least_left: i64,
}

/// Plays one game from `start` with clocks of `base` ms plus `inc` ms a
/// move; `tamper` may replace the move an engine chose (by ply), to play
/// a move the rules forbid.
fn play(
    options: &[(&str, &str)],
    start: &str,
    base: i64,
    inc: i64,
    tamper: &dyn Fn(usize, String) -> String,
) -> Played {
    let mut players = [Player::start(options), Player::start(options)];
    let mut record = Record {
        start: start.to_string(),
        moves: Vec::new(),
    };
    let mut clocks = [base, base];
    let mut least_left = base;
    for player in &mut players {
        player.ready();
    }
    for player in &mut players {
        player.engine.send("uginewgame");
    }
    let p1_first = players[0].yes(&record.position(), "p1turn");
    assert!(p1_first, "Black moves first from {start}");
    loop {
        assert!(
            record.moves.len() < MAX_PLIES,
            "no end after {MAX_PLIES} plies: {}",
            record.position()
        );
        let position = record.position();
        let p1 = players[0].yes(&position, "p1turn");
        let (us, them) = if p1 { (0, 1) } else { (1, 0) };
        players[us].ready();
        players[us].engine.send(&position);
        if players[us].yes(&position, "gameover") || players[them].yes(&position, "gameover") {
            break;
        }
        let go = format!(
            "go p1time {} p2time {} p1inc {inc} p2inc {inc}",
            clocks[0].max(0),
            clocks[1].max(0)
        );
        let (mv, took, own) = players[us].go(&go);
        // The engine's own time must stay inside its clock; the driver's
        // figure adds pipes and a busy machine's scheduling, which no
        // engine controls: it may pass the clock by LOAD_SLACK at most.
        let had = clocks[us];
        // Below 100 ms the clock is inside the engine's reserve and UGI
        // overhead (50 + 30 ms): it plays a first iteration only, whose
        // few milliseconds a busy machine can stretch.
        assert!(
            (own.as_millis() as i64) < had.max(100),
            "player {} ran out of its own time at ply {} ({own:?} with {had} ms left): {position}",
            us + 1,
            record.moves.len() + 1,
        );
        clocks[us] -= took.as_millis() as i64;
        assert!(
            clocks[us] > -(LOAD_SLACK.as_millis() as i64),
            "player {} lost on time at ply {} ({took:?}, {own:?} by its own clock, with {had} ms left): {position}",
            us + 1,
            record.moves.len() + 1,
        );
        least_left = least_left.min(clocks[us]);
        clocks[us] += inc;
        record.moves.push(tamper(record.moves.len(), mv));
    }
    // Both engines are asked, as a referee does, and must agree.
    let position = record.position();
    let mut answers = Vec::new();
    for player in &mut players {
        player.ready();
        let over = player.yes(&position, "gameover");
        let result = player.ask(&position, "result");
        answers.push((over, result));
    }
    assert_eq!(answers[0], answers[1], "the engines disagree: {position}");
    assert!(answers[0].0, "the game was over for one engine only");
    for player in &mut players {
        player.engine.quit();
    }
    Played {
        result: answers[0].1.clone(),
        record,
        least_left,
    }
}

/// The UGI result the rules give a finished game.
fn result_by_the_rules(game: &Game, rules: Rules) -> &'static str {
    match game.outcome(rules) {
        Some(Outcome::Win(Color::Black, _)) => "p1win",
        Some(Outcome::Win(Color::White, _)) => "p2win",
        Some(Outcome::DrawByRepetition) => "draw",
        None => panic!("the game is not over"),
    }
}

/// Replays the moves under the rules: every move is legal and the result
/// is the one the rules give.
fn check_by_the_rules(played: &Played, rules: Rules) {
    let mut game = Game::new(parse_position(&played.record.start).unwrap());
    for (ply, mv) in played.record.moves.iter().enumerate() {
        game.play_text(mv, rules)
            .unwrap_or_else(|e| panic!("ply {}: {mv}: {e}", ply + 1));
    }
    assert_eq!(played.result, result_by_the_rules(&game, rules));
}

fn untouched(_ply: usize, mv: String) -> String {
    mv
}

#[test]
fn two_engines_play_a_whole_game_over_ugi_and_agree_on_the_result() {
    // The clocks are charged with no margin: no other test of this
    // binary runs beside these games.
    let _cpu = timing();
    let started = Instant::now();
    let played = play(
        &[("BoardSize", "5")],
        "B4/B4/B4/B4/1WWWW b",
        2000,
        20,
        &untouched,
    );
    check_by_the_rules(&played, Rules::Textbook);
    assert!(
        played.record.moves.len() >= 8,
        "{}",
        played.record.position()
    );
    // (Below zero only by what the machine added outside the engine.)
    assert!(
        played.least_left > -(LOAD_SLACK.as_millis() as i64),
        "a clock reached {} ms",
        played.least_left
    );
    eprintln!(
        "5x5 textbook: {} after {} plies in {:?}; least time left {} ms",
        played.result,
        played.record.moves.len(),
        started.elapsed(),
        played.least_left
    );
}

#[test]
fn a_game_on_a_short_clock_over_ugi_never_runs_out_of_time() {
    // The clocks are charged with no margin: no other test of this
    // binary runs beside these games.
    let _cpu = timing();
    // Half a second for the whole game, no increment: the engine must
    // keep its clock above zero however little is left (the driver fails
    // the game at once if a clock reaches zero).
    let played = play(
        &[("BoardSize", "5")],
        "B4/B4/B4/B4/1WWWW b",
        500,
        0,
        &untouched,
    );
    check_by_the_rules(&played, Rules::Textbook);
    eprintln!(
        "5x5 on 0.5 s a game: {} after {} plies; least time left {} ms",
        played.result,
        played.record.moves.len(),
        played.least_left
    );
}

#[test]
fn a_drawn_4x4_game_under_classic_rules_ends_by_repetition_over_ugi() {
    // The clocks are charged with no margin: no other test of this
    // binary runs beside these games.
    let _cpu = timing();
    // Both engines play perfectly from the solved 4 x 4 table; the start
    // is a draw, so the game can only end by threefold repetition, which
    // the engines must see themselves.
    let played = play(
        &[("Rules", "classic")],
        "B3/B3/B3/1WWW b",
        1000,
        10,
        &untouched,
    );
    check_by_the_rules(&played, Rules::Classic);
    assert_eq!(played.result, "draw", "{}", played.record.position());
    eprintln!(
        "4x4 classic: a draw after {} plies; least time left {} ms",
        played.record.moves.len(),
        played.least_left
    );
}

#[test]
fn an_illegal_move_ends_the_game_over_ugi_for_both_engines() {
    // The clocks are charged with no margin: no other test of this
    // binary runs beside these games.
    let _cpu = timing();
    // Player 2's third move is replaced by a move south, which White may
    // never make: the driver appends it unchecked, and both engines must
    // end the game there, won by player 1.
    let tamper = |ply: usize, mv: String| if ply == 5 { "c3c2".to_string() } else { mv };
    let played = play(
        &[("BoardSize", "5")],
        "B4/B4/B4/B4/1WWWW b",
        2000,
        20,
        &tamper,
    );
    assert_eq!(played.record.moves.len(), 6, "{}", played.record.position());
    assert_eq!(played.result, "p1win");
    let mut game = Game::new(parse_position(&played.record.start).unwrap());
    for mv in &played.record.moves[..5] {
        game.play_text(mv, Rules::Textbook).unwrap();
    }
    assert!(game.play_text("c3c2", Rules::Textbook).is_err());
}
