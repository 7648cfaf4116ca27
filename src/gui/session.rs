//! The GUI's controller: the game, the settings, and the conversation with
//! the engine process.
//!
//! One [`Session`] lives behind a mutex shared by the HTTP workers, the
//! engine's reader thread and a ticker that enforces timeouts. Every method
//! runs to completion under the lock and never waits for the engine:
//! commands go out through the process's writer thread and replies come
//! back as calls to [`Session::on_engine_output`].
//!
//! The conversation follows protocol.md: `uci` / `uciok` once (then
//! `UCI_ShowWDL` on, if the engine has it), then for each new game
//! `setoption name Rules`, `ucinewgame`, `isready` / `readyok`, and for
//! each engine move `position fen <start> moves ...` and
//! `go movetime <ms>` (after the level's options), answered by `info`
//! lines and one `bestmove`. When the game changes under a running search
//! the GUI sends `stop` and discards that search's `bestmove`; nothing else
//! is sent to the engine until it has arrived, since a second `go` during
//! a search is an error.
//!
//! When the engine has nothing to play, it answers the page's questions,
//! one at a time, most urgent first ([`Session::next_question`]): the best
//! move asked for, the values of the moves (hints: `solve` after each move
//! where a table covers the position, else a `MultiPV` search over every
//! move), its view of a position under review, and values for the
//! evaluation graph. Each `solve` is followed by `isready`, so an engine
//! without `solve` (its `readyok` comes with no `solve` line) is asked no
//! more. What it answers is kept ([`super::knowledge`]), so stepping
//! through a game asks each question once.

use std::collections::HashSet;
use std::sync::{Arc, Weak};
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::knowledge::{Knowledge, Purpose, Report};
use super::strength::{LevelRequest, Strength, check_level};
use crate::board::{self, Color, MIN_SIZE, Position, Rules, UnknownRules};
use crate::client::{
    EngineCommand, EngineProcess, OptionKind, OptionSpec, Reply, Solved, Stderr, parse_reply,
    setoption_line,
};
use crate::game::{Game, PlayError};
use crate::notation;
use crate::referee::pgn;

/// How long the engine gets to answer `uci` with `uciok`.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the engine gets to answer `isready` (after `ucinewgame`).
const READY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the engine gets to answer `solve` (the first one on a board
/// may build its table or read a layer of a table from disk).
const SOLVE_TIMEOUT: Duration = Duration::from_secs(30);
/// Added to the move time before a missing `bestmove` counts as a hang.
const BESTMOVE_MARGIN: Duration = Duration::from_secs(3);
/// How long the engine gets to answer `stop` with `bestmove`.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);
/// Time per engine move the page may choose, in ms.
pub const MOVETIME_RANGE: std::ops::RangeInclusive<u64> = 10..=60_000;
/// The default time per engine move, in ms.
pub const DEFAULT_MOVETIME: u64 = 1000;
/// The longest search for one point of the evaluation graph, in ms (less
/// when the time per move is shorter).
const GRAPH_MOVETIME: u64 = 300;
/// The most refused settings kept for the page (the engine's own options
/// are fewer than this).
const MAX_REFUSED: usize = 16;

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
    pub(crate) fn plays(self, color: Color) -> bool {
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
    pub level: Option<LevelRequest>,
}

/// `POST /api/config`: who the engine plays, how strong and how long it
/// thinks, and whether the page shows move values, for the game in
/// progress.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub engine: Option<EngineSide>,
    pub movetime: Option<u64>,
    pub level: Option<LevelRequest>,
    pub hints: Option<bool>,
}

/// Where the conversation with the engine stands.
#[derive(Clone, Debug)]
pub(crate) enum Link {
    /// `uci` sent, waiting for `uciok`.
    Starting { deadline: Instant },
    /// Nothing outstanding.
    Idle,
    /// `isready` sent, waiting for `readyok`.
    Syncing { deadline: Instant },
    /// `go` sent, waiting for `bestmove`. A `stale` search was stopped
    /// because what it was for changed: its move is discarded. `key` is
    /// the searched game's prefix (see [`Knowledge`]).
    Searching {
        deadline: Instant,
        stale: bool,
        purpose: Purpose,
        key: u64,
        /// The `go movetime` sent, in ms.
        movetime: u64,
    },
    /// `solve` and `isready` sent for the position with key `position`
    /// (the engine judging by `rules`); `answer` is the `solve` line, once
    /// it has come.
    Solving {
        deadline: Instant,
        position: u64,
        rules: Rules,
        answer: Option<Solved>,
    },
    /// The engine exited, misbehaved or stopped answering.
    Dead { message: String },
}

/// What the engine is asked next, when it has no move to play.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    /// The value of this position (from the tables).
    Solve(Position),
    /// A search of the game's position after `ply` moves.
    Search {
        purpose: Purpose,
        ply: usize,
        lines: usize,
    },
}

/// The GUI's state; see the module docs.
pub struct Session {
    /// Handed to the engine's reader thread, which reports through it.
    this: Weak<Mutex<Session>>,
    command: EngineCommand,
    /// `--option` settings, `(name, value)`, sent after each `uciok`.
    settings: Vec<(String, Option<String>)>,
    /// The options the current engine process advertised.
    pub(crate) advertised: Vec<OptionSpec>,
    /// Option values sent to the current process since it started, by
    /// lowercased name (so each is only sent when it changes).
    sent: Vec<(String, String)>,
    process: Option<EngineProcess>,
    /// Which engine process the current output belongs to: output from a
    /// process that has been replaced is ignored.
    generation: u64,
    pub(crate) link: Link,
    pub(crate) engine_name: Option<String>,
    /// The last `info string` the engine printed.
    pub(crate) engine_message: Option<String>,
    /// The settings the current engine process refused (its `info string
    /// error: setoption ...` lines, a bad `TablebasePath` for one): kept
    /// until the engine is restarted, so the page can say that the engine
    /// plays without them however many messages come after.
    pub(crate) refused: Vec<String>,
    pub(crate) game: Game,
    /// The rules the game is judged by (and the engine is told).
    pub(crate) rules: Rules,
    pub(crate) engine_side: EngineSide,
    pub(crate) movetime: u64,
    /// The level of the engine's moves (`None`: full strength).
    pub(crate) level: Option<i64>,
    /// Show the values of the moves.
    pub(crate) hints: bool,
    /// The ply shown instead of the live game, when reviewing.
    pub(crate) review: Option<usize>,
    /// Prefix keys of positions whose best move was asked for.
    pub(crate) best_asked: HashSet<u64>,
    /// The engine needs `setoption`/`ucinewgame`/`isready` before it next
    /// searches.
    needs_new_game: bool,
    /// The engine answers `solve` (until it shows it does not).
    solve_supported: bool,
    pub(crate) knowledge: Knowledge,
    /// The prefix key of the engine's latest search for its own move.
    pub(crate) latest_play: Option<u64>,
    /// What the last import read, while its game is on (for the page).
    pub(crate) imported: Option<String>,
    /// Counts changes, so the page can tell whether anything happened.
    pub(crate) version: u64,
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
                sent: Vec::new(),
                process: None,
                generation: 0,
                link: Link::Idle,
                engine_name: None,
                engine_message: None,
                refused: Vec::new(),
                game: Game::new(Position::start(MIN_SIZE)),
                rules: Rules::default(),
                engine_side: EngineSide::White,
                movetime: DEFAULT_MOVETIME,
                level: None,
                hints: false,
                review: None,
                best_asked: HashSet::new(),
                needs_new_game: true,
                solve_supported: true,
                knowledge: Knowledge::default(),
                latest_play: None,
                imported: None,
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
        self.refused.clear();
        self.advertised.clear();
        self.sent.clear();
        self.solve_supported = true;
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
        if let Link::Searching { key, .. } = self.link {
            self.knowledge.finish(key, None);
        }
        self.link = Link::Dead { message };
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

    /// Sets an engine option the engine advertised, unless it has that
    /// value already; `false` if the engine has no such option.
    fn set_option(&mut self, name: &str, value: &str) -> bool {
        let Some(option) = self
            .advertised
            .iter()
            .find(|option| option.name.eq_ignore_ascii_case(name))
        else {
            return false;
        };
        let name = option.name.clone();
        let lower = name.to_ascii_lowercase();
        let current = self.sent.iter_mut().find(|(n, _)| *n == lower);
        match current {
            Some((_, sent)) if sent == value => return true,
            Some((_, sent)) => *sent = value.to_string(),
            None => self.sent.push((lower, value.to_string())),
        }
        self.send(&format!("setoption name {name} value {value}"));
        true
    }

    /// The engine's command line, as the page shows it.
    pub(crate) fn command_text(&self) -> String {
        self.command.to_string()
    }

    /// The engine process's id, while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(EngineProcess::id)
    }

    /// How the engine can be made weaker, if it can.
    pub(crate) fn strength(&self) -> Option<Strength> {
        Strength::of(&self.advertised)
    }

    /// The most lines the engine reports at once (`MultiPV`'s top; 1
    /// without it).
    fn max_lines(&self) -> usize {
        self.advertised
            .iter()
            .find(|option| option.name.eq_ignore_ascii_case("MultiPV"))
            .and_then(|option| match option.kind {
                OptionKind::Spin { max, .. } => usize::try_from(max).ok(),
                _ => None,
            })
            .unwrap_or(1)
            .max(1)
    }

    /// Whether the engine is to move in the current game.
    pub(crate) fn engine_to_move(&self) -> bool {
        self.game.outcome(self.rules).is_none()
            && self.engine_side.plays(self.game.position().side_to_move())
    }

    /// The ply on show: the one under review, else the live one.
    pub(crate) fn view_ply(&self) -> usize {
        self.review.unwrap_or(self.game.moves().len())
    }

    /// The game as it stood after `ply` moves.
    pub(crate) fn game_at(&self, ply: usize) -> Game {
        let mut game = Game::new(*self.game.start());
        for &mv in &self.game.moves()[..ply.min(self.game.moves().len())] {
            game.play(mv);
        }
        game
    }

    /// The key of the game's first `ply` moves (see [`Knowledge`]).
    pub(crate) fn prefix_key(&self, ply: usize) -> u64 {
        let moves = &self.game.moves()[..ply.min(self.game.moves().len())];
        super::knowledge::prefix_keys(self.game.start(), moves)
            .last()
            .copied()
            .unwrap_or_default()
    }

    /// The keys of the game's prefixes, from the start (ply 0) to the
    /// whole game.
    pub(crate) fn prefix_keys(&self) -> Vec<u64> {
        super::knowledge::prefix_keys(self.game.start(), self.game.moves())
    }

    /// Whether the engine should look at the whole game for the graph:
    /// the person asked for move values, is reviewing, or the game is over.
    pub(crate) fn graph_wanted(&self) -> bool {
        self.hints || self.review.is_some() || self.game.outcome(self.rules).is_some()
    }

    /// Whether hints are shown for the position on view: it is being
    /// reviewed, or it is the live position with a person to move.
    pub(crate) fn hints_apply(&self) -> bool {
        self.hints && (self.review.is_some() || !self.engine_to_move())
    }

    /// Sends the engine what it needs next, if it is free: the new game's
    /// setup, a search when it is to move, or else the next question.
    fn pump(&mut self) {
        self.preempt();
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
            let ply = self.game.moves().len();
            self.start_search(Purpose::Play, ply, 1);
        } else if let Some(question) = self.next_question() {
            match question {
                Question::Solve(position) => self.start_solve(position),
                Question::Search {
                    purpose,
                    ply,
                    lines,
                } => self.start_search(purpose, ply, lines),
            }
        } else {
            return;
        }
        self.changed();
    }

    /// Stops a question the engine is working on when something more
    /// urgent waits: its own move, or a question about another position
    /// than the one on view.
    fn preempt(&mut self) {
        let Link::Searching {
            purpose,
            key,
            stale: false,
            ..
        } = self.link
        else {
            return;
        };
        let urgent = match purpose {
            Purpose::Play => false,
            Purpose::Graph => self.engine_to_move(),
            Purpose::Hints | Purpose::Best | Purpose::Review => {
                self.engine_to_move() || key != self.prefix_key(self.view_ply())
            }
        };
        if urgent {
            self.interrupt();
        }
    }

    /// What to ask the engine next, most urgent first; `None` when there
    /// is nothing to ask.
    fn next_question(&self) -> Option<Question> {
        let ply = self.view_ply();
        let game = self.game_at(ply);
        let over = game.outcome(self.rules).is_some();
        let key = self.prefix_key(ply);
        let position = *game.position();
        if !over {
            if self.best_asked.contains(&key) && !self.knowledge.has_best(key) {
                return Some(Question::Search {
                    purpose: Purpose::Best,
                    ply,
                    lines: 1,
                });
            }
            if self.hints_apply() {
                match self.solved(&position) {
                    None if self.solve_supported => return Some(Question::Solve(position)),
                    Some(solved) if solved != Solved::Unknown => {
                        let unsolved = position
                            .legal_moves()
                            .as_slice()
                            .iter()
                            .map(|&mv| position.play(mv))
                            .find(|child| self.solved(child).is_none());
                        if let Some(child) = unsolved {
                            return Some(Question::Solve(child));
                        }
                    }
                    _ => {
                        let lines = position.legal_moves().len().min(self.max_lines());
                        if !self.knowledge.has_lines(key, lines) {
                            return Some(Question::Search {
                                purpose: Purpose::Hints,
                                ply,
                                lines,
                            });
                        }
                    }
                }
            }
            if self.review.is_some() && !self.knowledge.has_lines(key, 1) {
                return Some(Question::Search {
                    purpose: Purpose::Review,
                    ply,
                    lines: 1,
                });
            }
        }
        if self.graph_wanted() {
            let keys = self.prefix_keys();
            let mut game = Game::new(*self.game.start());
            for (ply, key) in keys.into_iter().enumerate() {
                if ply > 0 {
                    game.play(self.game.moves()[ply - 1]);
                }
                if game.outcome(self.rules).is_some() {
                    continue;
                }
                let position = *game.position();
                match self.solved(&position) {
                    None if self.solve_supported => return Some(Question::Solve(position)),
                    Some(solved) if solved != Solved::Unknown => {}
                    _ => {
                        if !self.knowledge.has_lines(key, 1) {
                            return Some(Question::Search {
                                purpose: Purpose::Graph,
                                ply,
                                lines: 1,
                            });
                        }
                    }
                }
            }
        }
        None
    }

    /// What `solve` said about `position` under the game's rules, if it
    /// was asked.
    pub(crate) fn solved(&self, position: &Position) -> Option<Solved> {
        self.knowledge.solved(self.rules, position)
    }

    fn start_solve(&mut self, position: Position) {
        self.send(&format!(
            "position fen {}",
            notation::format_position(&position)
        ));
        self.send("solve");
        self.send("isready");
        self.link = Link::Solving {
            deadline: Instant::now() + SOLVE_TIMEOUT,
            position: position.key(),
            rules: self.rules,
            answer: None,
        };
    }

    /// Starts a search of the game after `ply` moves: the engine's own
    /// move (at its level) or a question (at full strength), with `lines`
    /// lines.
    fn start_search(&mut self, purpose: Purpose, ply: usize, lines: usize) {
        let game = self.game_at(ply);
        let limited = purpose == Purpose::Play;
        if let Some(strength) = self.strength() {
            let level = if limited { self.level } else { None };
            for (name, value) in strength.settings(level) {
                self.set_option(&name, &value);
            }
        }
        if lines > 1 || self.sent.iter().any(|(name, _)| name == "multipv") {
            self.set_option("MultiPV", &lines.to_string());
        }
        let movetime = match purpose {
            Purpose::Graph => self.movetime.min(GRAPH_MOVETIME),
            _ => self.movetime,
        };
        self.send(&game.position_command());
        self.send(&format!("go movetime {movetime}"));
        let key = self.prefix_key(ply);
        self.link = Link::Searching {
            deadline: Instant::now() + Duration::from_millis(movetime) + BESTMOVE_MARGIN,
            stale: false,
            purpose,
            key,
            movetime,
        };
        let side = game.position().side_to_move();
        self.knowledge.start(
            key,
            Report::new(purpose, ply, side, lines, !limited || self.level.is_none()),
        );
        if purpose == Purpose::Play {
            self.latest_play = Some(key);
        }
    }

    /// Stops a search whose position is about to change, or that is no
    /// longer wanted; its `bestmove` will be discarded.
    fn interrupt(&mut self) {
        if let Link::Searching {
            deadline,
            stale,
            key,
            ..
        } = &mut self.link
            && !*stale
        {
            *stale = true;
            *deadline = (*deadline).min(Instant::now() + STOP_TIMEOUT);
            let key = *key;
            self.send("stop");
            self.knowledge.finish(key, None);
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
                if let Err(message) = self.configure_engine() {
                    self.fault(format!("--option: {message}"));
                    return;
                }
                self.link = Link::Idle;
            }
            Some(Reply::ReadyOk) => match self.link {
                Link::Syncing { .. } => self.link = Link::Idle,
                Link::Solving {
                    position,
                    rules,
                    answer,
                    ..
                } => {
                    if answer.is_none() {
                        log::info!("the engine does not answer `solve`; not asking again");
                        self.solve_supported = false;
                    }
                    let answer = answer.unwrap_or(Solved::Unknown);
                    self.knowledge.store_solved(rules, position, answer);
                    self.link = Link::Idle;
                }
                _ => return,
            },
            Some(Reply::Solve(solved)) => match &mut self.link {
                Link::Solving { answer, .. } => *answer = Some(solved),
                _ => return,
            },
            Some(Reply::InfoString(text)) => {
                log::info!("engine says: {text}");
                if let Some(refused) = text.strip_prefix("error: setoption ")
                    && self.refused.len() < MAX_REFUSED
                    && !self.refused.iter().any(|r| r == refused)
                {
                    self.refused.push(refused.to_string());
                }
                self.engine_message = Some(text);
            }
            Some(Reply::Info(info)) => {
                if let Link::Searching {
                    stale: false, key, ..
                } = self.link
                {
                    self.knowledge.record(key, info);
                }
            }
            Some(Reply::BestMove { mv, .. }) => self.on_bestmove(&mv),
            _ => {
                log::debug!("ignored engine output: {line}");
                return;
            }
        }
        self.changed();
        self.pump();
    }

    /// After `uciok`: the `--option` settings, checked against what this
    /// engine offers (one that does not fit is a fault of the setup; a
    /// level among them is where the page's level starts), and
    /// win/draw/loss figures on, if the engine has them and the settings
    /// do not say otherwise.
    fn configure_engine(&mut self) -> Result<(), String> {
        let lines: Vec<String> = self
            .settings
            .iter()
            .map(|(name, value)| setoption_line(&self.advertised, name, value.as_deref()))
            .collect::<Result<_, _>>()?;
        for line in lines {
            self.send(&line);
        }
        let given = |name: &str| {
            self.settings
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, value)| value.clone())
        };
        // A level given on the command line is the page's first level.
        if self.level.is_none() {
            self.level = match self.strength() {
                Some(Strength::Skill { name, max, .. }) => given(&name)
                    .and_then(|value| value.trim().parse().ok())
                    .filter(|&level| level < max),
                Some(Strength::Elo { limit, elo, .. }) => given(&limit)
                    .filter(|on| on.trim().eq_ignore_ascii_case("true"))
                    .and_then(|_| given(&elo))
                    .and_then(|value| value.trim().parse().ok()),
                None => None,
            };
        }
        if given("UCI_ShowWDL").is_none() {
            self.set_option("UCI_ShowWDL", "true");
        }
        Ok(())
    }

    /// `bestmove <text>`.
    fn on_bestmove(&mut self, text: &str) {
        let Link::Searching {
            stale,
            purpose,
            key,
            ..
        } = self.link
        else {
            log::warn!("the engine sent a bestmove without a search: {text}");
            return;
        };
        self.link = Link::Idle;
        if stale {
            return;
        }
        self.knowledge.finish(key, Some(text));
        if purpose != Purpose::Play {
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
            Link::Solving { deadline, .. } if now >= *deadline => Some(format!(
                "the engine did not answer `solve` and `isready` within {} s",
                SOLVE_TIMEOUT.as_secs()
            )),
            Link::Searching {
                deadline,
                stale,
                movetime,
                ..
            } if now >= *deadline => Some(if *stale {
                "the engine did not answer `stop` with a bestmove".to_string()
            } else {
                format!(
                    "the engine did not answer `go movetime {movetime}` within {} ms",
                    movetime + BESTMOVE_MARGIN.as_millis() as u64
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
    /// 400 for a size, rules, side, move time or level out of range, 409
    /// for a level the engine cannot play; nothing changes then.
    pub fn new_game(&mut self, request: NewGame) -> Result<(), ApiError> {
        let size = request.size.unwrap_or(self.game.start().size());
        board::check_size(size).map_err(|error| ApiError::bad_request(error.to_string()))?;
        let rules = match &request.rules {
            None => self.rules,
            Some(name) => parse_rules(name)?,
        };
        let movetime = check_movetime(request.movetime.unwrap_or(self.movetime))?;
        let level = match &request.level {
            None => self.level,
            Some(level) => check_level(self.strength(), level)?,
        };
        self.interrupt();
        self.rules = rules;
        self.engine_side = request.engine.unwrap_or(self.engine_side);
        self.movetime = movetime;
        self.level = level;
        self.start_game(Game::new(Position::start(size)));
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
        self.rules = rules;
        self.start_game(Game::new(start));
        Ok(())
    }

    /// `POST /api/import`: a new game from a game record (the moves
    /// played, the rule its `Rules` tag names).
    ///
    /// # Errors
    /// 400 for a record that cannot be read, saying where and why; nothing
    /// changes then.
    pub fn import(&mut self, record: &str) -> Result<(), ApiError> {
        let read = pgn::read_game(record)
            .map_err(|error| ApiError::bad_request(format!("bad game record: {error}")))?;
        let plies = read.game.moves().len();
        let mut note = format!(
            "{plies} move{} on {n} x {n}, {} rule",
            if plies == 1 { "" } else { "s" },
            read.rules.name(),
            n = read.game.start().size()
        );
        if let (Some(black), Some(white)) = (read.tag("Black"), read.tag("White")) {
            note.push_str(&format!(", {black} (Black) v {white} (White)"));
        }
        let finished = read.game.outcome(read.rules).is_some();
        match read.result.as_deref() {
            Some(result) if result != "*" && !finished => note.push_str(&format!(
                "; recorded result {result}{}, but the position is not the end of the game",
                read.tag("Termination")
                    .map(|why| format!(" ({why})"))
                    .unwrap_or_default()
            )),
            _ => {}
        }
        self.interrupt();
        self.rules = read.rules;
        self.start_game(read.game);
        self.imported = Some(note);
        Ok(())
    }

    /// Replaces the game; the engine starts it afresh.
    fn start_game(&mut self, game: Game) {
        self.game = game;
        self.imported = None;
        self.review = None;
        self.best_asked.clear();
        self.knowledge.forget_searches();
        self.latest_play = None;
        self.needs_new_game = true;
        self.changed();
        self.pump();
    }

    /// `POST /api/config`.
    ///
    /// # Errors
    /// 400 for a move time or level out of range, 409 for a level the
    /// engine cannot play; nothing changes then.
    pub fn configure(&mut self, request: Config) -> Result<(), ApiError> {
        let movetime = check_movetime(request.movetime.unwrap_or(self.movetime))?;
        let level = match &request.level {
            None => self.level,
            Some(level) => check_level(self.strength(), level)?,
        };
        self.movetime = movetime;
        self.level = level;
        if let Some(hints) = request.hints {
            self.hints = hints;
        }
        if let Some(side) = request.engine {
            self.engine_side = side;
            if !self.engine_to_move()
                && matches!(
                    self.link,
                    Link::Searching {
                        purpose: Purpose::Play,
                        ..
                    }
                )
            {
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
        self.after_truncation();
        Ok(())
    }

    /// The game lost its last moves: a review beyond it ends.
    fn after_truncation(&mut self) {
        if self
            .review
            .is_some_and(|ply| ply >= self.game.moves().len())
        {
            self.review = None;
        }
        self.changed();
        self.pump();
    }

    /// `POST /api/review`: shows the position after `ply` moves (`None`,
    /// or the last ply: the live game).
    ///
    /// # Errors
    /// 400 for a ply beyond the game.
    pub fn set_review(&mut self, ply: Option<usize>) -> Result<(), ApiError> {
        let plies = self.game.moves().len();
        if let Some(ply) = ply.filter(|&ply| ply > plies) {
            return Err(ApiError::bad_request(format!(
                "ply {ply} is beyond the game ({plies} moves)"
            )));
        }
        self.review = ply.filter(|&ply| ply < plies);
        self.changed();
        self.pump();
        Ok(())
    }

    /// `POST /api/playon`: the game goes on from the position under
    /// review; the moves after it are dropped.
    ///
    /// # Errors
    /// 409 when no position is under review.
    pub fn play_on(&mut self) -> Result<(), ApiError> {
        let Some(ply) = self.review else {
            return Err(ApiError::conflict(
                "no earlier position is on show: pick a move in the list first",
            ));
        };
        self.interrupt();
        while self.game.moves().len() > ply {
            self.game.undo();
        }
        self.review = None;
        self.after_truncation();
        Ok(())
    }

    /// `POST /api/best`: asks the engine for its best move in the position
    /// on show.
    ///
    /// # Errors
    /// 409 when the game is over there; 503 when the engine is not running.
    pub fn ask_best(&mut self) -> Result<(), ApiError> {
        if let Link::Dead { message } = &self.link {
            return Err(ApiError::no_engine(message));
        }
        let ply = self.view_ply();
        if let Some(outcome) = self.game_at(ply).outcome(self.rules) {
            return Err(ApiError::conflict(format!(
                "the game is over here ({outcome}): there is no move to suggest"
            )));
        }
        let key = self.prefix_key(ply);
        self.best_asked.insert(key);
        self.changed();
        self.pump();
        Ok(())
    }

    /// `POST /api/restart`: a fresh engine process (the game goes on).
    ///
    /// # Errors
    /// 503 when the engine cannot be started.
    pub fn restart(&mut self) -> Result<(), ApiError> {
        if let Link::Searching { key, .. } = self.link {
            self.knowledge.finish(key, None);
        }
        self.spawn_engine().map_err(|error| ApiError {
            status: 503,
            message: format!("cannot start the engine `{}`: {error}", self.command),
        })
    }

    /// The tree panel's position: the game after `ply` moves (the ply on
    /// show when `None`), with the rules and the ply.
    ///
    /// # Errors
    /// 400 for a ply beyond the game.
    pub fn position_at(&self, ply: Option<usize>) -> Result<(Position, Rules, usize), ApiError> {
        let plies = self.game.moves().len();
        let ply = ply.unwrap_or(self.view_ply());
        if ply > plies {
            return Err(ApiError::bad_request(format!(
                "ply {ply} is beyond the game ({plies} moves)"
            )));
        }
        Ok((*self.game_at(ply).position(), self.rules, ply))
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
