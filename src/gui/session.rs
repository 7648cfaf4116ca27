//! The GUI's controller: the game, the settings, and the conversation with
//! the engine process.
//!
//! One [`Session`] lives behind a mutex shared by the HTTP workers, the
//! engine's reader thread and a ticker that enforces timeouts. Every method
//! runs to completion under the lock and never waits for the engine:
//! commands go out through the process's writer thread and replies come
//! back as calls to [`Session::on_engine_output`].
//!
//! The conversation follows protocol.md: `uci` / `uciok` once, then for each
//! new game `setoption name Rules`, `ucinewgame`, `isready` / `readyok`, and
//! for each engine move `position fen <start> moves ...` and
//! `go movetime <ms>`, answered by `info` lines and one `bestmove`. When the
//! game changes under a running search the GUI sends `stop` and discards
//! that search's `bestmove`; nothing else is sent to the engine until it
//! has arrived, since a second `go` during a search is an error.

use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::board::{self, Color, MIN_SIZE, Outcome, Position, Rules, UnknownRules, WinReason};
use crate::client::{
    EngineCommand, EngineProcess, Info, OptionSpec, Reply, Score, Stderr, parse_reply,
    setoption_line,
};
use crate::game::{Game, PlayError};
use crate::notation;

/// How long the engine gets to answer `uci` with `uciok`.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the engine gets to answer `isready` (after `ucinewgame`).
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// Added to the move time before a missing `bestmove` counts as a hang.
const BESTMOVE_MARGIN: Duration = Duration::from_secs(3);
/// How long the engine gets to answer `stop` with `bestmove`.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);
/// Time per engine move the page may choose, in ms.
pub const MOVETIME_RANGE: std::ops::RangeInclusive<u64> = 10..=60_000;
/// The default time per engine move, in ms.
pub const DEFAULT_MOVETIME: u64 = 1000;

/// A request the session refused: an HTTP status and a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl ApiError {
    /// 400: the request itself is wrong (bad value, illegal move).
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            message: message.into(),
        }
    }

    /// 409: the request is well-formed but not possible now.
    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError {
            status: 409,
            message: message.into(),
        }
    }
}

/// Which sides the engine plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineSide {
    Black,
    White,
    Both,
    #[serde(rename = "none")]
    Neither,
}

impl EngineSide {
    fn plays(self, color: Color) -> bool {
        match self {
            EngineSide::Black => color == Color::Black,
            EngineSide::White => color == Color::White,
            EngineSide::Both => true,
            EngineSide::Neither => false,
        }
    }
}

/// `POST /api/new`: a new game from the start position. Fields left out
/// keep their current values.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGame {
    pub size: Option<usize>,
    pub rules: Option<String>,
    pub engine: Option<EngineSide>,
    pub movetime: Option<u64>,
}

/// `POST /api/config`: who the engine plays and how long it thinks, for
/// the game in progress.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub engine: Option<EngineSide>,
    pub movetime: Option<u64>,
}

/// Where the conversation with the engine stands.
#[derive(Clone, Debug)]
enum Link {
    /// `uci` sent, waiting for `uciok`.
    Starting { deadline: Instant },
    /// Nothing outstanding.
    Idle,
    /// `isready` sent, waiting for `readyok`.
    Syncing { deadline: Instant },
    /// `go` sent, waiting for `bestmove`. A `stale` search was stopped
    /// because the game changed: its move is discarded.
    Searching { deadline: Instant, stale: bool },
    /// The engine exited, misbehaved or stopped answering.
    Dead { message: String },
}

/// The engine's latest report on the search for one position.
#[derive(Clone, Debug)]
struct Analysis {
    /// The number of moves played before the searched position.
    ply: usize,
    side: Color,
    info: Info,
    done: bool,
}

/// The GUI's state; see the module docs.
pub struct Session {
    /// Handed to the engine's reader thread, which reports through it.
    this: Weak<Mutex<Session>>,
    command: EngineCommand,
    /// `--option` settings, `(name, value)`, sent after each `uciok`.
    settings: Vec<(String, Option<String>)>,
    /// The options the current engine process advertised.
    advertised: Vec<OptionSpec>,
    process: Option<EngineProcess>,
    /// Which engine process the current output belongs to: output from a
    /// process that has been replaced is ignored.
    generation: u64,
    link: Link,
    engine_name: Option<String>,
    /// The last `info string` the engine printed.
    engine_message: Option<String>,
    game: Game,
    /// The rules the game is judged by (and the engine is told).
    rules: Rules,
    engine_side: EngineSide,
    movetime: u64,
    /// The engine needs `setoption`/`ucinewgame`/`isready` before it next
    /// searches.
    needs_new_game: bool,
    analysis: Option<Analysis>,
    /// Counts changes, so the page can tell whether anything happened.
    version: u64,
}

/// A shared session.
pub type SharedSession = Arc<Mutex<Session>>;

impl Session {
    /// Starts the engine and returns a session on the 3 x 3 start position
    /// with the engine playing White.
    ///
    /// # Errors
    /// When the engine program cannot be started.
    pub fn start(
        command: EngineCommand,
        settings: Vec<(String, Option<String>)>,
    ) -> std::io::Result<SharedSession> {
        let shared = Arc::new_cyclic(|this| {
            Mutex::new(Session {
                this: this.clone(),
                command,
                settings,
                advertised: Vec::new(),
                process: None,
                generation: 0,
                link: Link::Idle,
                engine_name: None,
                engine_message: None,
                game: Game::new(Position::start(MIN_SIZE)),
                rules: Rules::default(),
                engine_side: EngineSide::White,
                movetime: DEFAULT_MOVETIME,
                needs_new_game: true,
                analysis: None,
                version: 0,
            })
        });
        shared.lock().spawn_engine()?;
        Ok(shared)
    }

    /// Starts a fresh engine process in place of the current one.
    fn spawn_engine(&mut self) -> std::io::Result<()> {
        self.process = None;
        self.generation += 1;
        self.engine_name = None;
        self.engine_message = None;
        self.advertised.clear();
        self.changed();
        let generation = self.generation;
        let this = self.this.clone();
        let spawned =
            EngineProcess::spawn_with_handler(&self.command, Stderr::Inherit, move |line| {
                if line.is_none() {
                    // Give the process a moment to exit, so its status can be
                    // reported.
                    thread::sleep(Duration::from_millis(50));
                }
                if let Some(session) = this.upgrade() {
                    session.lock().on_engine_output(generation, line);
                }
            });
        match spawned {
            Ok(process) => {
                process.send("uci");
                self.process = Some(process);
                self.link = Link::Starting {
                    deadline: Instant::now() + HANDSHAKE_TIMEOUT,
                };
                self.needs_new_game = true;
                Ok(())
            }
            Err(error) => {
                self.link = Link::Dead {
                    message: format!("cannot start the engine `{}`: {error}", self.command),
                };
                Err(error)
            }
        }
    }

    /// Gives up on the engine: it is told to quit and killed.
    fn fault(&mut self, message: String) {
        log::warn!("engine fault: {message}");
        self.process = None;
        self.link = Link::Dead { message };
        if let Some(analysis) = &mut self.analysis {
            analysis.done = true;
        }
        self.changed();
    }

    fn changed(&mut self) {
        self.version += 1;
    }

    fn send(&self, line: &str) {
        if let Some(process) = &self.process {
            process.send(line);
        }
    }

    /// Whether the engine is to move in the current game.
    fn engine_to_move(&self) -> bool {
        self.game.outcome(self.rules).is_none()
            && self.engine_side.plays(self.game.position().side_to_move())
    }

    /// Sends the engine what it needs next, if it is free: the new game's
    /// setup, or a search when it is to move.
    fn pump(&mut self) {
        if !matches!(self.link, Link::Idle) || self.process.is_none() {
            return;
        }
        let now = Instant::now();
        if self.needs_new_game {
            self.needs_new_game = false;
            self.send(&format!("setoption name Rules value {}", self.rules.name()));
            self.send("ucinewgame");
            self.send("isready");
            self.link = Link::Syncing {
                deadline: now + READY_TIMEOUT,
            };
        } else if self.engine_to_move() {
            self.send(&self.game.position_command());
            self.send(&format!("go movetime {}", self.movetime));
            self.link = Link::Searching {
                deadline: now + Duration::from_millis(self.movetime) + BESTMOVE_MARGIN,
                stale: false,
            };
            self.analysis = Some(Analysis {
                ply: self.game.moves().len(),
                side: self.game.position().side_to_move(),
                info: Info::default(),
                done: false,
            });
        } else {
            return;
        }
        self.changed();
    }

    /// Stops a search whose position is about to change; its `bestmove`
    /// will be discarded.
    fn interrupt(&mut self) {
        if let Link::Searching { deadline, stale } = &mut self.link
            && !*stale
        {
            *stale = true;
            *deadline = (*deadline).min(Instant::now() + STOP_TIMEOUT);
            self.send("stop");
            if let Some(analysis) = &mut self.analysis {
                analysis.done = true;
            }
        }
    }

    /// A line from the engine (`None`: it closed its output). Output from
    /// an engine process that has since been replaced is ignored.
    pub fn on_engine_output(&mut self, generation: u64, line: Option<String>) {
        if generation != self.generation || matches!(self.link, Link::Dead { .. }) {
            return;
        }
        let Some(line) = line else {
            let status = self
                .process
                .as_mut()
                .and_then(EngineProcess::exit_status)
                .map(|status| status.to_string())
                .unwrap_or_else(|| "it closed its output".to_string());
            self.fault(format!("the engine exited ({status})"));
            return;
        };
        match parse_reply(&line) {
            Some(Reply::IdName(name)) => self.engine_name = Some(name),
            Some(Reply::Option(spec)) if matches!(self.link, Link::Starting { .. }) => {
                self.advertised.push(spec);
            }
            Some(Reply::UciOk) if matches!(self.link, Link::Starting { .. }) => {
                // The `--option` settings, checked against what this engine
                // offers; one that does not fit is a fault of the setup.
                let lines: Result<Vec<String>, String> = self
                    .settings
                    .iter()
                    .map(|(name, value)| setoption_line(&self.advertised, name, value.as_deref()))
                    .collect();
                match lines {
                    Ok(lines) => {
                        for line in lines {
                            self.send(&line);
                        }
                        self.link = Link::Idle;
                    }
                    Err(message) => {
                        self.fault(format!("--option: {message}"));
                        return;
                    }
                }
            }
            Some(Reply::ReadyOk) if matches!(self.link, Link::Syncing { .. }) => {
                self.link = Link::Idle;
            }
            Some(Reply::InfoString(text)) => {
                log::info!("engine says: {text}");
                self.engine_message = Some(text);
            }
            Some(Reply::Info(info)) => self.on_info(info),
            Some(Reply::BestMove { mv, .. }) => self.on_bestmove(&mv),
            _ => {
                log::debug!("ignored engine output: {line}");
                return;
            }
        }
        self.changed();
        self.pump();
    }

    fn on_info(&mut self, info: Info) {
        if !matches!(self.link, Link::Searching { stale: false, .. })
            || info.multipv.is_some_and(|rank| rank != 1)
        {
            return;
        }
        if let Some(analysis) = &mut self.analysis {
            analysis.info = info;
        }
    }

    /// `bestmove <text>`.
    fn on_bestmove(&mut self, text: &str) {
        let Link::Searching { stale, .. } = self.link else {
            log::warn!("the engine sent a bestmove without a search: {text}");
            return;
        };
        self.link = Link::Idle;
        if let Some(analysis) = &mut self.analysis {
            analysis.done = true;
        }
        if stale {
            return;
        }
        if let Err(error) = self.game.play_text(text, self.rules) {
            let shown = if text.is_empty() { "nothing" } else { text };
            self.fault(format!(
                "the engine answered `bestmove {shown}` in {}: {error}",
                notation::format_position(self.game.position())
            ));
        }
    }

    /// Enforces the timeouts; called periodically.
    pub fn tick(&mut self, now: Instant) {
        let overdue = match &self.link {
            Link::Starting { deadline } if now >= *deadline => Some(format!(
                "the engine did not answer `uci` within {} s",
                HANDSHAKE_TIMEOUT.as_secs()
            )),
            Link::Syncing { deadline } if now >= *deadline => Some(format!(
                "the engine did not answer `isready` within {} s",
                READY_TIMEOUT.as_secs()
            )),
            Link::Searching { deadline, stale } if now >= *deadline => Some(if *stale {
                "the engine did not answer `stop` with a bestmove".to_string()
            } else {
                format!(
                    "the engine did not answer `go movetime {}` within {} ms",
                    self.movetime,
                    self.movetime + BESTMOVE_MARGIN.as_millis() as u64
                )
            }),
            _ => None,
        };
        if let Some(message) = overdue {
            self.fault(message);
        }
    }

    /// `POST /api/new`.
    ///
    /// # Errors
    /// 400 for a size, rules, side or move time out of range; nothing
    /// changes then.
    pub fn new_game(&mut self, request: NewGame) -> Result<(), ApiError> {
        let size = request.size.unwrap_or(self.game.start().size());
        board::check_size(size).map_err(|error| ApiError::bad_request(error.to_string()))?;
        let rules = match &request.rules {
            None => self.rules,
            Some(name) => parse_rules(name)?,
        };
        let movetime = check_movetime(request.movetime.unwrap_or(self.movetime))?;
        self.interrupt();
        self.game = Game::new(Position::start(size));
        self.rules = rules;
        self.engine_side = request.engine.unwrap_or(self.engine_side);
        self.movetime = movetime;
        self.new_game_started();
        Ok(())
    }

    /// `POST /api/position`: a new game from a position string.
    ///
    /// # Errors
    /// 400 for a bad position string or rules; nothing changes then.
    pub fn set_position(&mut self, text: &str, rules: Option<&str>) -> Result<(), ApiError> {
        let start = notation::parse_position(text)
            .map_err(|error| ApiError::bad_request(format!("bad position string: {error}")))?;
        let rules = match rules {
            None => self.rules,
            Some(name) => parse_rules(name)?,
        };
        self.interrupt();
        self.game = Game::new(start);
        self.rules = rules;
        self.new_game_started();
        Ok(())
    }

    fn new_game_started(&mut self) {
        self.analysis = None;
        self.needs_new_game = true;
        self.changed();
        self.pump();
    }

    /// `POST /api/config`.
    ///
    /// # Errors
    /// 400 for a move time out of range; nothing changes then.
    pub fn configure(&mut self, request: Config) -> Result<(), ApiError> {
        let movetime = check_movetime(request.movetime.unwrap_or(self.movetime))?;
        self.movetime = movetime;
        if let Some(side) = request.engine {
            self.engine_side = side;
            if !self.engine_to_move() {
                self.interrupt();
            }
        }
        self.changed();
        self.pump();
        Ok(())
    }

    /// `POST /api/move`: a move by a person.
    ///
    /// # Errors
    /// 409 when the game is over or the engine is to move; 400 for a
    /// malformed or illegal move.
    pub fn play(&mut self, text: &str) -> Result<(), ApiError> {
        if self.engine_to_move() {
            return Err(ApiError::conflict(format!(
                "it is the engine's turn ({} to move)",
                self.game.position().side_to_move().name()
            )));
        }
        self.game
            .play_text(text, self.rules)
            .map_err(|error| match error {
                PlayError::GameOver(_) => ApiError::conflict(error.to_string()),
                PlayError::Move(_) => ApiError::bad_request(error.to_string()),
            })?;
        self.changed();
        self.pump();
        Ok(())
    }

    /// `POST /api/undo`: takes back moves up to and including the last move
    /// of a side the engine does not play (one move when the engine plays
    /// both sides), stopping the engine if it is thinking.
    ///
    /// # Errors
    /// 409 when no move has been played.
    pub fn undo(&mut self) -> Result<(), ApiError> {
        if self.game.moves().is_empty() {
            return Err(ApiError::conflict("there is no move to take back"));
        }
        self.interrupt();
        while self.game.undo().is_some() {
            let mover = self.game.position().side_to_move();
            if self.engine_side == EngineSide::Both || !self.engine_side.plays(mover) {
                break;
            }
        }
        self.analysis = None;
        self.changed();
        self.pump();
        Ok(())
    }

    /// `POST /api/restart`: a fresh engine process (the game goes on).
    ///
    /// # Errors
    /// 503 when the engine cannot be started.
    pub fn restart(&mut self) -> Result<(), ApiError> {
        self.analysis = None;
        self.spawn_engine().map_err(|error| ApiError {
            status: 503,
            message: format!("cannot start the engine `{}`: {error}", self.command),
        })
    }

    /// `GET /api/state`.
    pub fn state(&self) -> State {
        let game = &self.game;
        let position = game.position();
        let outcome = game.outcome(self.rules);
        let turn = match outcome {
            Some(_) => "over",
            None if self.engine_to_move() => "engine",
            None => "human",
        };
        let (status, message) = match &self.link {
            Link::Starting { .. } | Link::Syncing { .. } => ("starting", None),
            Link::Idle => ("ready", None),
            Link::Searching { stale: false, .. } => ("thinking", None),
            Link::Searching { stale: true, .. } => ("stopping", None),
            Link::Dead { message } => ("dead", Some(message.clone())),
        };
        State {
            version: self.version,
            size: position.size(),
            rules: self.rules.name(),
            engine_side: self.engine_side,
            movetime: self.movetime,
            start: notation::format_position(game.start()),
            position: notation::format_position(position),
            side_to_move: color_name(position.side_to_move()),
            black: cars(position, Color::Black),
            white: cars(position, Color::White),
            black_off: position.cars_off(Color::Black),
            white_off: position.cars_off(Color::White),
            moves: game
                .moves()
                .iter()
                .map(|&mv| notation::format_move(Some(mv)))
                .collect(),
            legal_moves: game.legal_moves(self.rules),
            turn,
            result: outcome.map(GameResult::new),
            engine: EngineState {
                command: self.command.to_string(),
                name: self.engine_name.clone(),
                status,
                message,
                last_info_string: self.engine_message.clone(),
                pid: self.process.as_ref().map(EngineProcess::id),
            },
            analysis: self.analysis.as_ref().map(AnalysisState::new),
        }
    }
}

fn parse_rules(name: &str) -> Result<Rules, ApiError> {
    name.parse()
        .map_err(|error: UnknownRules| ApiError::bad_request(error.to_string()))
}

fn check_movetime(movetime: u64) -> Result<u64, ApiError> {
    if MOVETIME_RANGE.contains(&movetime) {
        Ok(movetime)
    } else {
        Err(ApiError::bad_request(format!(
            "movetime {movetime} ms is outside {}..{} ms",
            MOVETIME_RANGE.start(),
            MOVETIME_RANGE.end()
        )))
    }
}

fn color_name(color: Color) -> &'static str {
    match color {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// The squares of one side's cars.
fn cars(position: &Position, color: Color) -> Vec<String> {
    let bits = position.cars(color);
    (0..64u8)
        .filter(|&sq| bits & (1u64 << sq) != 0)
        .map(notation::format_square)
        .collect()
}

/// The whole state the page shows, as JSON.
#[derive(Debug, Serialize)]
pub struct State {
    pub version: u64,
    pub size: usize,
    pub rules: &'static str,
    pub engine_side: EngineSide,
    /// Engine time per move, in ms.
    pub movetime: u64,
    /// The position string the game started from.
    pub start: String,
    /// The current position string.
    pub position: String,
    pub side_to_move: &'static str,
    /// Squares of the cars on the board.
    pub black: Vec<String>,
    pub white: Vec<String>,
    /// Cars driven off the board.
    pub black_off: usize,
    pub white_off: usize,
    pub moves: Vec<String>,
    /// Sorted; empty once the game is over.
    pub legal_moves: Vec<String>,
    /// `human`, `engine` or `over`.
    pub turn: &'static str,
    pub result: Option<GameResult>,
    pub engine: EngineState,
    pub analysis: Option<AnalysisState>,
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
            winner: outcome.winner().map(color_name),
            reason,
            text: outcome.to_string(),
        }
    }
}

/// The engine process as the page sees it.
#[derive(Debug, Serialize)]
pub struct EngineState {
    pub command: String,
    /// From its `id name` line.
    pub name: Option<String>,
    /// `starting`, `ready`, `thinking`, `stopping` or `dead`.
    pub status: &'static str,
    /// Why the engine is `dead`.
    pub message: Option<String>,
    pub last_info_string: Option<String>,
    pub pid: Option<u32>,
}

/// The engine's latest search report.
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
    pub nodes: Option<u64>,
    pub nps: Option<u64>,
    /// Milliseconds since `go`.
    pub time: Option<u64>,
    pub pv: Vec<String>,
}

impl AnalysisState {
    fn new(analysis: &Analysis) -> AnalysisState {
        let info = &analysis.info;
        AnalysisState {
            ply: analysis.ply,
            side: color_name(analysis.side),
            done: analysis.done,
            depth: info.depth,
            seldepth: info.seldepth,
            score: info.score.map(|score| match score {
                Score::Cp(value) => ScoreState { kind: "cp", value },
                Score::Mate(value) => ScoreState {
                    kind: "mate",
                    value,
                },
            }),
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
