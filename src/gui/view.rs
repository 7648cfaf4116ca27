//! What the page is shown: the [`State`] as JSON (the game, the position on
//! show with its hints and the engine's view of it, the evaluation graph),
//! and the game as a record for export. Everything here is read from the
//! [`Session`]; nothing changes it.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::knowledge::{Purpose, Report};
use super::session::{EngineSide, Link, Session};
use super::strength::Strength;
use crate::board::{Color, Outcome, Position, Rules, WinReason};
use crate::client::{Info, Score, Solved};
use crate::game::Game;
use crate::notation;
use crate::referee::pgn::{self, RecordMove};
use crate::referee::record::{GameResult as RecordResult, Termination};

/// A score `s` (evaluation units, side to move) counts as an expected
/// result of `1 / (1 + e^(-s / SCORE_SCALE))` where the engine gives no
/// win/draw/loss figures (a guess: what a score means depends on the
/// engine and its evaluation; this engine gives its chances).
const SCORE_SCALE: f64 = 60.0;

/// This server's run, so the page can tell a restarted server (whose
/// versions count from zero again) from an old answer.
fn server_id() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        // Within what JavaScript numbers hold exactly.
        (nanos ^ u64::from(std::process::id())) & ((1 << 53) - 1)
    })
}

/// The whole state the page shows, as JSON.
#[derive(Debug, Serialize)]
pub struct State {
    /// This server's run (see [`server_id`]).
    pub server: u64,
    pub version: u64,
    pub size: usize,
    pub rules: &'static str,
    pub engine_side: EngineSide,
    /// Engine time per move, in ms.
    pub movetime: u64,
    /// The level of the engine's moves (`null`: full strength).
    pub level: Option<i64>,
    /// How the engine can be made weaker (`null`: it cannot).
    pub strength: Option<StrengthState>,
    /// Move values are shown.
    pub hints: bool,
    /// The position string the game started from.
    pub start: String,
    /// The current position.
    #[serde(flatten)]
    pub board: BoardState,
    pub moves: Vec<String>,
    /// `human`, `engine` or `over`.
    pub turn: &'static str,
    pub engine: EngineState,
    /// The engine's latest search for its own move.
    pub analysis: Option<AnalysisState>,
    /// What the last import read, while its game is on.
    pub imported: Option<String>,
    /// The ply under review (`null`: the live game is on show).
    pub review: Option<usize>,
    /// The position on show: the one under review, else the live one.
    pub view: ViewState,
    /// One point per position of the game (ply 0 to the last), `null`
    /// where nothing is known yet.
    pub graph: Vec<Option<GraphPoint>>,
}

/// A position of the game as the page draws it: the live one in
/// [`State`], the one on show in [`ViewState`] (its fields stand in
/// theirs).
#[derive(Debug, Serialize)]
pub struct BoardState {
    /// The position string.
    pub position: String,
    pub side_to_move: &'static str,
    /// Squares of the cars on the board.
    pub black: Vec<String>,
    pub white: Vec<String>,
    /// Cars driven off the board.
    pub black_off: usize,
    pub white_off: usize,
    /// Sorted; empty once the game is over.
    pub legal_moves: Vec<String>,
    /// How the game ended, if it has.
    pub result: Option<GameResult>,
}

impl BoardState {
    /// The position `game` has reached, under `rules`.
    fn new(game: &Game, rules: Rules) -> BoardState {
        let position = game.position();
        BoardState {
            position: notation::format_position(position),
            side_to_move: position.side_to_move().key(),
            black: cars(position, Color::Black),
            white: cars(position, Color::White),
            black_off: position.cars_off(Color::Black),
            white_off: position.cars_off(Color::White),
            legal_moves: game.legal_moves(rules),
            result: game.outcome(rules).map(GameResult::new),
        }
    }
}

/// How a game ended.
#[derive(Debug, Serialize)]
pub struct GameResult {
    /// `black`, `white`, or `None` for a draw.
    pub winner: Option<&'static str>,
    /// `cars_off`, `blocked` or `repetition`.
    pub reason: &'static str,
    /// A sentence for people.
    pub text: String,
}

impl GameResult {
    fn new(outcome: Outcome) -> GameResult {
        let reason = match outcome {
            Outcome::Win(_, WinReason::AllCarsOff) => "cars_off",
            Outcome::Win(_, WinReason::Blocked(_)) => "blocked",
            Outcome::DrawByRepetition => "repetition",
        };
        GameResult {
            winner: outcome.winner().map(Color::key),
            reason,
            text: outcome.to_string(),
        }
    }
}

/// The engine's levels, for the page's selector.
#[derive(Debug, Serialize)]
pub struct StrengthState {
    /// `skill` (`Skill Level`) or `elo` (`UCI_LimitStrength` and
    /// `UCI_Elo`).
    pub kind: &'static str,
    pub min: i64,
    /// Full strength for `skill`.
    pub max: i64,
}

/// The engine process as the page sees it.
#[derive(Debug, Serialize)]
pub struct EngineState {
    pub command: String,
    /// From its `id name` line.
    pub name: Option<String>,
    /// `starting`, `ready`, `thinking` (its own move), `analysing` (a
    /// question of the page), `stopping` or `dead`.
    pub status: &'static str,
    /// Why the engine is `dead`.
    pub message: Option<String>,
    /// Settings the running engine refused (`setoption` errors: a
    /// `TablebasePath` it could not load, say), each as the engine gave
    /// it after `setoption `, for as long as this engine process runs:
    /// the engine plays on without them.
    pub refused: Vec<String>,
    pub last_info_string: Option<String>,
    pub pid: Option<u32>,
    /// It reports win/draw/loss figures (`UCI_ShowWDL`).
    pub wdl: bool,
}

/// A search report.
#[derive(Debug, Serialize)]
pub struct AnalysisState {
    /// Moves played before the searched position.
    pub ply: usize,
    /// The side to move in the searched position: the score's point of view.
    pub side: &'static str,
    /// The search has finished (or was stopped).
    pub done: bool,
    pub depth: Option<u32>,
    pub seldepth: Option<u32>,
    pub score: Option<ScoreState>,
    /// Win, draw and loss chances in permille, the searched side's view.
    pub wdl: Option<[u32; 3]>,
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    /// Milliseconds since `go`.
    pub time: Option<u64>,
    pub pv: Vec<String>,
}

impl AnalysisState {
    fn new(report: &Report) -> AnalysisState {
        let empty = Info::default();
        let info = report.principal().unwrap_or(&empty);
        AnalysisState {
            ply: report.ply,
            side: report.side.key(),
            done: report.done,
            depth: info.depth,
            seldepth: info.seldepth,
            score: info.score.map(ScoreState::new),
            wdl: info.wdl,
            nodes: info.nodes,
            nps: info.nps,
            time: info.time,
            pv: info.pv.clone(),
        }
    }
}

/// A score from the searched side's point of view: `cp` units or `mate`
/// in moves of its own (negative: it loses).
#[derive(Debug, Serialize)]
pub struct ScoreState {
    pub kind: &'static str,
    pub value: i64,
}

impl ScoreState {
    fn new(score: Score) -> ScoreState {
        match score {
            Score::Cp(value) => ScoreState { kind: "cp", value },
            Score::Mate(value) => ScoreState {
                kind: "mate",
                value,
            },
        }
    }
}

/// The position on show.
#[derive(Debug, Serialize)]
pub struct ViewState {
    pub ply: usize,
    #[serde(flatten)]
    pub board: BoardState,
    /// The move that led here.
    pub last_move: Option<String>,
    /// The engine's latest search of this position.
    pub analysis: Option<AnalysisState>,
    /// The exact value from the tables, when the engine was asked.
    pub solved: Option<String>,
    pub hints: Option<HintsState>,
    pub best: Option<BestState>,
}

/// The values of the moves of the position on show.
#[derive(Debug, Serialize)]
pub struct HintsState {
    /// `table` (exact, from `solve`), `engine` (its `MultiPV` analysis),
    /// `waiting` (nothing known yet) or `unavailable` (no engine).
    pub source: &'static str,
    /// Every move's value is in.
    pub done: bool,
    pub message: Option<String>,
    /// Every legal move, sorted by name.
    pub moves: Vec<MoveHint>,
}

/// One move's value, for the side making it.
#[derive(Debug, Serialize)]
pub struct MoveHint {
    #[serde(rename = "move")]
    pub mv: String,
    /// `win`, `draw` or `loss` where it is known exactly (a table, or a
    /// forced result the search found).
    pub value: Option<&'static str>,
    /// Plies to the end of the game (or, with `dtz`, to the next forward
    /// move or exit) under best play.
    pub plies: Option<u32>,
    pub dtz: bool,
    /// The engine's score after the move, the mover's view, and its rank
    /// among the moves (1 = best).
    pub score: Option<ScoreState>,
    pub wdl: Option<[u32; 3]>,
    pub rank: Option<usize>,
    /// The value in words.
    pub text: String,
}

impl MoveHint {
    /// A move whose value is not known: `note` says why.
    fn unknown(text: &str, note: &str) -> MoveHint {
        MoveHint {
            mv: text.to_string(),
            value: None,
            plies: None,
            dtz: false,
            score: None,
            wdl: None,
            rank: None,
            text: format!("{text}: {note}"),
        }
    }
}

/// The engine's best move in the position on show, as asked.
#[derive(Debug, Serialize)]
pub struct BestState {
    #[serde(rename = "move")]
    pub mv: Option<String>,
    pub done: bool,
    pub text: String,
}

/// One point of the evaluation graph.
#[derive(Debug, Serialize)]
pub struct GraphPoint {
    pub ply: usize,
    /// Black's expected result from 0 (White wins) to 1 (Black wins).
    pub black: f64,
    /// `end` (the game is over), `table` (exact) or `engine` (its search).
    pub source: &'static str,
    pub text: String,
}

/// The squares of one side's cars.
fn cars(position: &Position, color: Color) -> Vec<String> {
    let bits = position.cars(color);
    (0..64u8)
        .filter(|&sq| bits & (1u64 << sq) != 0)
        .map(notation::format_square)
        .collect()
}

/// `GET /api/state`.
pub fn state(session: &Session) -> State {
    let game = &session.game;
    let position = game.position();
    let rules = session.rules;
    let outcome = game.outcome(rules);
    let turn = match outcome {
        Some(_) => "over",
        None if session.engine_to_move() => "engine",
        None => "human",
    };
    let (status, message) = match &session.link {
        Link::Starting { .. } | Link::Syncing { .. } => ("starting", None),
        Link::Idle => ("ready", None),
        Link::Searching {
            stale: false,
            purpose: Purpose::Play,
            ..
        } => ("thinking", None),
        Link::Searching { stale: false, .. } | Link::Solving { .. } => ("analysing", None),
        Link::Searching { stale: true, .. } => ("stopping", None),
        Link::Dead { message } => ("dead", Some(message.clone())),
    };
    let strength = session.strength().map(|strength| {
        let (min, max) = strength.range();
        StrengthState {
            kind: match strength {
                Strength::Skill { .. } => "skill",
                Strength::Elo { .. } => "elo",
            },
            min,
            max,
        }
    });
    let wdl = session
        .advertised
        .iter()
        .any(|option| option.name.eq_ignore_ascii_case("UCI_ShowWDL"));
    State {
        server: server_id(),
        version: session.version,
        size: position.size(),
        rules: rules.name(),
        engine_side: session.engine_side,
        movetime: session.movetime,
        level: session.level,
        strength,
        hints: session.hints,
        start: notation::format_position(game.start()),
        board: BoardState::new(game, rules),
        moves: game
            .moves()
            .iter()
            .map(|&mv| notation::format_move(Some(mv)))
            .collect(),
        turn,
        engine: EngineState {
            command: session.command_text(),
            name: session.engine_name.clone(),
            status,
            message,
            refused: session.refused.clone(),
            last_info_string: session.engine_message.clone(),
            pid: session.pid(),
            wdl,
        },
        analysis: session
            .latest_play
            .and_then(|key| session.knowledge.report(key))
            .map(AnalysisState::new),
        imported: session.imported.clone(),
        review: session.review,
        view: view_state(session),
        graph: graph(session),
    }
}

fn view_state(session: &Session) -> ViewState {
    let ply = session.view_ply();
    let game = session.game_at(ply);
    let position = game.position();
    let rules = session.rules;
    let key = session.prefix_key(ply);
    let solved = session.solved(position);
    let best = session
        .best_asked
        .contains(&key)
        .then(|| best_state(session, key));
    ViewState {
        ply,
        board: BoardState::new(&game, rules),
        last_move: game
            .moves()
            .last()
            .map(|&mv| notation::format_move(Some(mv))),
        analysis: session.knowledge.report(key).map(AnalysisState::new),
        // Exact values only where the person asked for them (hints, a
        // look back, the end of the game).
        solved: solved
            .filter(|&solved| solved != Solved::Unknown && session.graph_wanted())
            .map(|solved| solved_words(solved, position.side_to_move())),
        hints: (session.hints_apply() && game.outcome(rules).is_none())
            .then(|| hints_state(session, &game, key)),
        best,
    }
}

/// A `solve` answer in words, for `side` (to move).
fn solved_words(solved: Solved, side: Color) -> String {
    let (mover, other) = (side.name(), side.other().name());
    match solved {
        Solved::Win { plies, dtz: false } => format!("{mover} wins in {}", plies_text(plies)),
        Solved::Loss { plies, dtz: false } => format!("{other} wins in {}", plies_text(plies)),
        Solved::Win { plies, dtz: true } => format!(
            "{mover} wins ({} to the next forward move or exit)",
            plies_text(plies)
        ),
        Solved::Loss { plies, dtz: true } => format!(
            "{other} wins ({} to the next forward move or exit)",
            plies_text(plies)
        ),
        Solved::Draw => "a draw with best play".into(),
        Solved::Unknown => "not in the tables".into(),
    }
}

fn plies_text(plies: u32) -> String {
    if plies == 1 {
        "1 ply".into()
    } else {
        format!("{plies} plies")
    }
}

fn hints_state(session: &Session, game: &Game, key: u64) -> HintsState {
    let position = game.position();
    let mover = position.side_to_move();
    let moves = notation::format_moves_sorted(&position.legal_moves());
    let dead = match &session.link {
        Link::Dead { message } => Some(message.clone()),
        _ => None,
    };
    let table = session
        .solved(position)
        .filter(|&solved| solved != Solved::Unknown);
    if table.is_some() {
        let hints: Vec<MoveHint> = moves
            .iter()
            .map(|text| table_hint(session, game, text))
            .collect();
        let done = hints.iter().all(|hint| hint.value.is_some());
        return HintsState {
            source: "table",
            done,
            message: None,
            moves: hints,
        };
    }
    let report = session
        .knowledge
        .report(key)
        .filter(|report| report.full_strength && report.purpose == Purpose::Hints);
    match report {
        Some(report) => {
            let hints = moves
                .iter()
                .map(|text| engine_hint(report, mover, text))
                .collect::<Vec<_>>();
            HintsState {
                source: "engine",
                done: report.done,
                message: None,
                moves: hints,
            }
        }
        None => HintsState {
            source: if dead.is_some() {
                "unavailable"
            } else {
                "waiting"
            },
            done: false,
            message: dead.map(|message| format!("the engine is not running ({message})")),
            moves: moves
                .iter()
                .map(|text| MoveHint::unknown(text, "not known yet"))
                .collect(),
        },
    }
}

/// A move's exact value: from the table's value of the position after it
/// (the opponent's view, one ply nearer the end), or a draw when it repeats
/// a position for the third time.
fn table_hint(session: &Session, game: &Game, text: &str) -> MoveHint {
    let mut after = game.clone();
    let mover = game.position().side_to_move();
    let mut hint = MoveHint::unknown(text, "not known yet");
    if after.play_text(text, session.rules).is_err() {
        return hint;
    }
    if after.outcome(session.rules) == Some(Outcome::DrawByRepetition) {
        hint.value = Some("draw");
        hint.text = format!("{text}: draws (the position occurs a third time)");
        return hint;
    }
    // One ply more than the opponent's distance; but a distance to
    // progress counts to the next forward move or exit, so when this move
    // is one, it is itself that progress.
    let progress = crate::notation::parse_move(text, game.position())
        .is_ok_and(|mv| mv.is_irreversible(mover));
    let through = |plies: u32, dtz: bool| if dtz && progress { 1 } else { plies + 1 };
    let (value, plies, dtz) = match session.solved(after.position()) {
        Some(Solved::Win { plies, dtz }) => ("loss", Some(through(plies, dtz)), dtz),
        Some(Solved::Loss { plies, dtz }) => ("win", Some(through(plies, dtz)), dtz),
        Some(Solved::Draw) => ("draw", None, false),
        _ => return hint,
    };
    hint.value = Some(value);
    hint.plies = plies;
    hint.dtz = dtz;
    let name = mover.name();
    hint.text = match (value, plies) {
        ("draw", _) => format!("{text}: a draw with best play"),
        (_, Some(plies)) if dtz => format!(
            "{text}: {name} {} ({} to the next forward move or exit)",
            if value == "win" { "wins" } else { "loses" },
            plies_text(plies)
        ),
        (_, Some(plies)) => format!(
            "{text}: {name} {} in {}",
            if value == "win" { "wins" } else { "loses" },
            plies_text(plies)
        ),
        _ => hint.text,
    };
    hint
}

/// A move's value from the engine's lines (its score after the move, the
/// mover's view).
fn engine_hint(report: &Report, mover: Color, text: &str) -> MoveHint {
    let found = report
        .lines
        .iter()
        .enumerate()
        .find(|(_, info)| info.pv.first().map(String::as_str) == Some(text));
    let Some((index, info)) = found else {
        let note = if report.done {
            "not reported"
        } else {
            "not known yet"
        };
        return MoveHint::unknown(text, note);
    };
    let value = match info.score.and_then(Score::decided) {
        Some(true) => Some("win"),
        Some(false) => Some("loss"),
        None => None,
    };
    MoveHint {
        mv: text.to_string(),
        value,
        plies: None,
        dtz: false,
        score: info.score.map(ScoreState::new),
        wdl: info.wdl,
        rank: Some(index + 1),
        text: format!("{text}: {}", score_words(info, mover)),
    }
}

/// A search line's score in words, for `side` (the searched side).
pub(crate) fn score_words(info: &Info, side: Color) -> String {
    let (name, other) = (side.name(), side.other().name());
    let mut words = match info.score {
        Some(Score::Mate(n)) if n > 0 => format!("{name} wins in {n} move{}", plural(n)),
        Some(Score::Mate(n)) => format!("{name} loses in {} move{}", -n, plural(-n)),
        Some(score @ Score::Cp(_)) if score.decided().is_some() => {
            let winner = if score.decided() == Some(true) {
                name
            } else {
                other
            };
            format!("{winner} wins (solved tables)")
        }
        Some(Score::Cp(cp)) => {
            // How far the expected result leans to one side: the engine's
            // own win/draw/loss chances where it gives them (the meaning
            // of a score depends on the evaluation), else the score.
            let lean = expected(info).map_or(0.0, |e| e - 0.5);
            let ahead = if lean > 0.0 || (lean == 0.0 && cp > 0) {
                name
            } else {
                other
            };
            let lean = lean.abs();
            // The score is the searched side's: say so.
            let score = format!("score {cp} for {name}");
            if lean < 0.05 {
                format!("about even ({score})")
            } else if lean < 0.15 {
                format!("{ahead} is slightly better ({score})")
            } else if lean < 0.3 {
                format!("{ahead} is better ({score})")
            } else {
                format!("{ahead} is much better ({score})")
            }
        }
        None => "no score yet".to_string(),
    };
    if let Some([win, draw, loss]) = info.wdl {
        words.push_str(&format!(
            "; {name}: win {}%, draw {}%, loss {}%",
            (win + 5) / 10,
            (draw + 5) / 10,
            (loss + 5) / 10
        ));
    }
    if let Some(depth) = info.depth {
        words.push_str(&format!(" at depth {depth}"));
    }
    words
}

fn plural(n: i64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn best_state(session: &Session, key: u64) -> BestState {
    let report = session
        .knowledge
        .report(key)
        .filter(|report| report.full_strength);
    match report {
        Some(report) if report.best.is_some() => {
            let mv = report.best.clone();
            let words = report
                .principal()
                .map(|info| score_words(info, report.side))
                .unwrap_or_default();
            BestState {
                text: format!("{}: {words}", mv.as_deref().unwrap_or("no move")),
                mv,
                done: true,
            }
        }
        _ => BestState {
            mv: None,
            done: false,
            text: "the engine is thinking about it".into(),
        },
    }
}

/// An `info` line's expected result for the searched side, 0 to 1.
fn expected(info: &Info) -> Option<f64> {
    if let Some([win, draw, _]) = info.wdl {
        return Some((f64::from(win) + f64::from(draw) / 2.0) / 1000.0);
    }
    match info.score? {
        Score::Mate(n) => Some(if n > 0 { 1.0 } else { 0.0 }),
        Score::Cp(cp) => Some(1.0 / (1.0 + (-(cp as f64) / SCORE_SCALE).exp())),
    }
}

/// The evaluation graph: for each position of the game, the end, the
/// table's value (where the person asked for exact values: see
/// [`Session::graph_wanted`]), or the engine's, turned into Black's
/// expected result.
fn graph(session: &Session) -> Vec<Option<GraphPoint>> {
    let reveal = session.graph_wanted();
    let keys = session.prefix_keys();
    let mut game = Game::new(*session.game.start());
    let mut points = Vec::with_capacity(keys.len());
    for (ply, key) in keys.into_iter().enumerate() {
        if ply > 0 {
            game.play(session.game.moves()[ply - 1]);
        }
        let position = game.position();
        let side = position.side_to_move();
        let for_black = |value: f64| {
            if side == Color::Black {
                value
            } else {
                1.0 - value
            }
        };
        let point = if let Some(outcome) = game.outcome(session.rules) {
            let black = match outcome.winner() {
                Some(Color::Black) => 1.0,
                Some(Color::White) => 0.0,
                None => 0.5,
            };
            Some(GraphPoint {
                ply,
                black,
                source: "end",
                text: outcome.to_string(),
            })
        } else if let Some(solved) = session
            .solved(position)
            .filter(|&solved| solved != Solved::Unknown && reveal)
        {
            let value = match solved {
                Solved::Win { .. } => 1.0,
                Solved::Loss { .. } => 0.0,
                _ => 0.5,
            };
            Some(GraphPoint {
                ply,
                black: for_black(value),
                source: "table",
                text: solved_words(solved, side),
            })
        } else {
            session
                .knowledge
                .report(key)
                .and_then(|report| {
                    let info = report.principal()?;
                    Some((expected(info)?, score_words(info, report.side)))
                })
                .map(|(value, text)| GraphPoint {
                    ply,
                    black: for_black(value),
                    source: "engine",
                    text,
                })
        };
        points.push(point);
    }
    points
}

/// `GET /api/export`: the game as a record in the format of `dodgem match
/// --pgn`: the players by who plays each side now, `*` while the game goes
/// on, and after each move of the engine its score and depth.
pub fn record(session: &Session) -> String {
    let game = &session.game;
    let engine = session
        .engine_name
        .clone()
        .unwrap_or_else(|| session.command_text());
    let player = |color| {
        if session.engine_side.plays(color) {
            engine.clone()
        } else {
            "person".to_string()
        }
    };
    let outcome = game.outcome(session.rules);
    let (result, termination) = match outcome {
        Some(outcome) => (
            RecordResult::of(outcome).pgn(),
            Termination::of(outcome).name(),
        ),
        None => ("*", "unterminated"),
    };
    let header = pgn::Header {
        event: "dodgem gui".to_string(),
        date: pgn::today(),
        time_control: format!("movetime={}ms", session.movetime),
    };
    let (black, white) = (player(Color::Black), player(Color::White));
    let tags = pgn::Tags {
        header: &header,
        round: 1,
        black: &black,
        white: &white,
        result,
        start: game.start(),
        rules: session.rules,
        termination,
    };
    let keys = session.prefix_keys();
    let moves: Vec<RecordMove> = game
        .moves()
        .iter()
        .enumerate()
        .map(|(ply, &mv)| {
            let text = notation::format_move(Some(mv));
            let comment = session
                .knowledge
                .report(keys[ply])
                .filter(|report| {
                    report.purpose == Purpose::Play && report.best.as_deref() == Some(&*text)
                })
                .and_then(Report::principal)
                .and_then(|info| {
                    let score = info.score?;
                    Some(match info.depth {
                        Some(depth) => format!("{score}/{depth}"),
                        None => score.to_string(),
                    })
                });
            RecordMove { mv: text, comment }
        })
        .collect();
    let ending = outcome.map(|outcome| outcome.to_string());
    pgn::write_record(&tags, &moves, ending.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::parse_info;

    #[test]
    fn scores_in_words() {
        let words = |line: &str, side| score_words(&parse_info(line).unwrap(), side);
        assert_eq!(
            words("info depth 3 score cp 20", Color::Black),
            "Black is slightly better (score 20 for Black) at depth 3"
        );
        assert_eq!(
            words("info score cp -200 wdl 50 100 850", Color::White),
            "Black is much better (score -200 for White); White: win 5%, draw 10%, loss 85%"
        );
        // The chances decide, not the size of the score.
        assert_eq!(
            words("info score cp 300 wdl 100 800 100", Color::White),
            "about even (score 300 for White); White: win 10%, draw 80%, loss 10%"
        );
        assert_eq!(
            words("info score mate 1", Color::White),
            "White wins in 1 move"
        );
        assert_eq!(
            words("info score mate -3", Color::White),
            "White loses in 3 moves"
        );
        assert_eq!(
            words("info score cp 3", Color::White),
            "about even (score 3 for White)"
        );
    }

    #[test]
    fn expected_results() {
        let value = |line: &str| expected(&parse_info(line).unwrap()).unwrap();
        assert_eq!(value("info score cp 0"), 0.5);
        assert!(value("info score cp 30") > 0.6 && value("info score cp 30") < 0.65);
        assert_eq!(value("info score mate -2"), 0.0);
        assert_eq!(value("info score cp 500 wdl 200 600 200"), 0.5);
        assert_eq!(expected(&parse_info("info depth 3").unwrap()), None);
    }

    #[test]
    fn solved_values_in_words() {
        assert_eq!(
            solved_words(
                Solved::Win {
                    plies: 19,
                    dtz: false
                },
                Color::Black
            ),
            "Black wins in 19 plies"
        );
        assert_eq!(
            solved_words(
                Solved::Loss {
                    plies: 1,
                    dtz: true
                },
                Color::Black
            ),
            "White wins (1 ply to the next forward move or exit)"
        );
    }
}
