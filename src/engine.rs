//! The protocol thread's controller. It owns the game and the options,
//! turns each input line into a [`Command`], sends work to the search
//! thread and turns the search thread's events into reply lines. It is the
//! only writer of stdout.
//!
//! Input arrives from a small reader thread (so the controller can wait on
//! input and search events at once); events arrive over a channel from
//! the search thread. Bad input of any kind gets an `info string` and
//! changes nothing.

use std::collections::VecDeque;
use std::fmt;
use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};
use parking_lot::{Mutex, RwLock};

use crate::bench;
use crate::board::{Color, Move, Outcome, Position, Rules};
use crate::eval::{Evaluation, moves_to_go};
use crate::game::Game;
use crate::notation::{parse_move, parse_position};
use crate::options::{self, Change, Options};
use crate::protocol::response::{self, bestmove_line, info_line, info_string};
use crate::protocol::{Command, Dialect, Go, ParseError, Query, Start, parse, quote};
use crate::search::thread::{
    Event, Job, JobKind, LoaderDone, SearchThread, Shared, TableBuilds, TableLoader,
    plays_from_tables,
};
use crate::search::{Request, SearchResult, Signals, TableUse, Tables};
use crate::solver::Dtz;
use crate::tablebase::{BUILTIN_SIZES, Tablebases};
use crate::time::{TimeLimit, budget};

/// Input lines longer than this are refused whole (a protection against
/// hostile input, far above any real command).
pub const MAX_LINE: usize = 1 << 16;

/// Longest wait at `quit` for the search thread's last events (a search
/// ends within milliseconds of `stop`; this only bounds a broken one).
const QUIT_GRACE: Duration = Duration::from_secs(2);

/// The least time a UGI session keeps back from every move, whatever
/// `Move Overhead` says: a UGI referee charges the time from writing `go`
/// to reading `bestmove`, pipes and scheduling included, and a clock that
/// reaches zero loses (there is no margin to lean on).
const UGI_MIN_OVERHEAD: Duration = Duration::from_millis(30);

pub use crate::protocol::response::{AUTHOR, NAME};

/// One line of input, as the reader thread delivers it.
enum Input {
    Line(String),
    TooLong(usize),
}

/// What a person who starts the engine in a terminal reads on stderr.
pub const TERMINAL_HINT: &str = "dodgem: a Dodgem engine, waiting for commands on stdin \
(try `uci`, `position startpos`, `go movetime 1000`, then wait for `bestmove`; `d` shows \
the board, `quit` ends; `dodgem --help` lists the subcommands)";

/// `dodgem uci` (or no subcommand): the command line. It takes no
/// arguments.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct UciArgs {}

impl UciArgs {
    /// Runs the engine on stdin/stdout. A person who starts it in a
    /// terminal gets a short hint on stderr (stdout carries protocol
    /// lines only, and a program that drives the engine over a pipe sees
    /// nothing of it).
    ///
    /// # Errors
    /// Only if stdout cannot be written.
    pub fn run(&self) -> io::Result<()> {
        if io::stdin().is_terminal() {
            eprintln!("{TERMINAL_HINT}");
        }
        run(io::BufReader::new(io::stdin()), io::stdout().lock())
    }
}

/// Runs the engine until `quit` or the end of `input`.
///
/// # Errors
/// Only if `output` cannot be written (the GUI went away).
pub fn run(input: impl BufRead + Send + 'static, output: impl Write) -> io::Result<()> {
    let lines = spawn_reader(input);
    let mut engine = Engine::new(output);
    engine.main_loop(&lines)
}

/// Reads lines on their own thread so the controller can wait for input
/// and search events together. Invalid UTF-8 is replaced, not fatal.
fn spawn_reader(mut input: impl BufRead + Send + 'static) -> Receiver<Input> {
    let (sender, receiver) = crossbeam_channel::unbounded();
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            while let Ok(Some(item)) = read_bounded_line(&mut input) {
                if sender.send(item).is_err() {
                    break;
                }
            }
        })
        .expect("failed to start the input thread");
    receiver
}

/// Reads one line, refusing (but consuming) lines over [`MAX_LINE`] bytes
/// without ever holding more than that in memory. `None` at end of input.
fn read_bounded_line(input: &mut impl BufRead) -> io::Result<Option<Input>> {
    let mut line = Vec::new();
    let mut length = 0usize;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buffer.is_empty() {
            if length == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, found_end) = match buffer.iter().position(|&b| b == b'\n') {
            Some(end) => (&buffer[..end], true),
            None => (buffer, false),
        };
        length += chunk.len();
        if length <= MAX_LINE {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(found_end);
        input.consume(used);
        if found_end {
            break;
        }
    }
    if length > MAX_LINE {
        return Ok(Some(Input::TooLong(length)));
    }
    let text = String::from_utf8_lossy(&line);
    Ok(Some(Input::Line(text.trim_end_matches('\r').to_string())))
}

/// A move list that held an illegal move (UGI only: there the game ends
/// at that move, lost by the side that played it).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Forfeit {
    /// The side that played the move.
    offender: Color,
    /// The move's number in the list, from 1.
    number: usize,
    /// The move as written, quoted safely.
    text: String,
}

/// How the game of the last `position` ended, if it has.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ending {
    /// By the rules: all cars off, a blocked side, threefold repetition.
    Rules(Outcome),
    /// By an illegal move in the move list (UGI).
    Forfeit(Forfeit),
}

impl Ending {
    fn winner(&self) -> Option<Color> {
        match self {
            Ending::Rules(outcome) => outcome.winner(),
            Ending::Forfeit(forfeit) => Some(forfeit.offender.other()),
        }
    }
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ending::Rules(outcome) => outcome.fmt(f),
            Ending::Forfeit(forfeit) => write!(
                f,
                "{} wins: {} played the illegal move {} (move {} of the list)",
                forfeit.offender.other().name(),
                forfeit.offender.name(),
                forfeit.text,
                forfeit.number
            ),
        }
    }
}

/// What the search thread is busy with.
enum Task {
    Search {
        /// `infinite` or `ponder` before `ponderhit`: the result waits for
        /// `stop`/`ponderhit`.
        hold: bool,
        /// `infinite` was given: `ponderhit` does not release the result.
        infinite: bool,
        pondering: bool,
        /// A result that arrived while held.
        pending: Option<SearchResult>,
        /// Set for a finished game: no job was sent, the result is ready.
        game_over: bool,
        started: Instant,
        /// The move to play if the search fails: the first move of the
        /// best line reported so far, else any legal (searchable) move.
        fallback: Option<Move>,
        /// The search's hard time limit, if time limits it.
        hard: Option<Duration>,
    },
    Perft,
    Bench,
}

struct Engine<W: Write> {
    out: W,
    options: Options,
    debug: bool,
    /// The dialect, once the first `uci` or `ugi` has chosen it (before
    /// that the engine speaks UCI).
    dialect: Option<Dialect>,
    game: Game,
    /// UGI: the illegal move that ended `game`, if one did.
    forfeit: Option<Forfeit>,
    /// Fires at the hard time limit of the running timed search, counted
    /// from the `go` (or `ponderhit`) that started the clock, and stops
    /// it: whatever the search thread was doing (building a table,
    /// reading one), the clock is never overrun. `never` otherwise.
    deadline: Receiver<Instant>,
    shared: Arc<Shared>,
    events: Receiver<Event>,
    search: SearchThread,
    /// Loads `TablebasePath` files beside the search thread, so a load
    /// never waits for a search to end.
    loader: TableLoader,
    loaded: Receiver<LoaderDone>,
    /// The built-in tables (3 x 3 and 4 x 4) of the rules in force, built
    /// in the background from `ucinewgame`, `position` and `isready` on,
    /// so that the first search does not spend its clock on them.
    /// `isready` waits for them (not `go`: its clock runs from the moment
    /// it is read).
    builds: TableBuilds,
    task: Option<Task>,
    /// Rules and evaluation the tables' scores were computed under.
    tables_for: (Rules, Evaluation),
    /// Table jobs (resize, clear, load) sent and not yet done: `readyok`
    /// waits for them, so that it means the engine is really ready. (A
    /// load runs on the loader thread, so it is done within the time it
    /// takes to read the files, search or no search.)
    table_jobs: usize,
    /// `TablebasePath` loads and `solve`s sent to the loader and not yet
    /// done (held
    /// input waits for them too).
    loads: usize,
    /// Input held, in order, until the table jobs are done: its answers
    /// may depend on them (`solve` on a table being loaded), and answering
    /// it before the `readyok` it follows would break the order.
    held: VecDeque<Result<Command, ParseError>>,
    /// A `stop` was sent to the task that still runs: input waits for its
    /// end, as after a table job, so that a `go` right after `stop` starts
    /// a search instead of finding the old one still winding down.
    stopping: bool,
    /// Drawn from for each search's `Skill Level` errors; seeded from the
    /// clock and the process id, so no two sessions play alike.
    seed: u64,
    quitting: bool,
}

impl<W: Write> Engine<W> {
    fn new(out: W) -> Engine<W> {
        let options = Options::default();
        let shared = Arc::new(Shared {
            signals: Signals::default(),
            tables: Mutex::new(Tables::new(options.hash_mb)),
            tablebases: RwLock::new(Tablebases::default()),
        });
        let (search, events) = SearchThread::spawn(Arc::clone(&shared));
        let (loader, loaded) = TableLoader::spawn(Arc::clone(&shared));
        Engine {
            out,
            game: Game::new(Position::start(options.board_size)),
            forfeit: None,
            dialect: None,
            deadline: crossbeam_channel::never(),
            tables_for: (options.rules, options.evaluation),
            options,
            debug: false,
            shared,
            events,
            search,
            loader,
            loaded,
            builds: TableBuilds::default(),
            task: None,
            table_jobs: 0,
            loads: 0,
            held: VecDeque::new(),
            stopping: false,
            quitting: false,
            seed: first_seed(),
        }
    }

    fn main_loop(&mut self, lines: &Receiver<Input>) -> io::Result<()> {
        let mut lines = lines.clone();
        while !self.quitting {
            select! {
                recv(lines) -> input => match input {
                    Ok(Input::Line(line)) => self.handle_line(&line)?,
                    Ok(Input::TooLong(length)) => self.error(&format!(
                        "line of {length} bytes ignored (the limit is {MAX_LINE})"
                    ))?,
                    // End of input means quit (after any held input).
                    Err(_) => {
                        lines = crossbeam_channel::never();
                        self.dispatch(Ok(Command::Quit))?;
                    }
                },
                recv(self.events) -> event => {
                    match event {
                        Ok(event) => self.handle_event(event)?,
                        Err(_) => self.search_thread_lost()?,
                    }
                    // A task stopped may have ended: what waited for it.
                    self.answer_held()?;
                }
                recv(self.loaded) -> done => {
                    if let Ok(done) = done {
                        self.loader_done(done)?;
                    }
                }
                recv(self.builds.events()) -> built => {
                    if let Ok(built) = built {
                        self.builds.finished(built);
                        self.answer_held()?;
                    }
                }
                recv(self.deadline) -> _ => self.out_of_time(),
            }
        }
        Ok(())
    }

    /// The running search's clock ran out: stop it (its `bestmove`
    /// follows as after `stop`).
    fn out_of_time(&mut self) {
        self.deadline = crossbeam_channel::never();
        if matches!(self.task, Some(Task::Search { .. })) && !self.is_pondering() {
            log::debug!("the clock ran out: stopping the search");
            self.shared.signals.stop.store(true, Ordering::SeqCst);
        }
    }

    /// The next seed (splitmix64 steps).
    fn next_seed(&mut self) -> u64 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The dialect in use (UCI until a `ugi` chooses UGI).
    fn dialect(&self) -> Dialect {
        self.dialect.unwrap_or(Dialect::Uci)
    }

    fn say(&mut self, line: &str) -> io::Result<()> {
        writeln!(self.out, "{line}")?;
        self.out.flush()
    }

    /// Writes several lines at once.
    fn say_all(&mut self, lines: &[String]) -> io::Result<()> {
        for line in lines {
            writeln!(self.out, "{line}")?;
        }
        self.out.flush()
    }

    fn error(&mut self, message: &str) -> io::Result<()> {
        log::debug!("error: {message}");
        self.say(&info_string(&format!("error: {message}")))
    }

    fn handle_line(&mut self, line: &str) -> io::Result<()> {
        log::debug!("<< {line}");
        self.dispatch(parse(line))
    }

    /// Answers a parsed line now, or holds it while table work is pending
    /// or a stopped task winds down.
    fn dispatch(&mut self, parsed: Result<Command, ParseError>) -> io::Result<()> {
        if !self.tables_busy() && !self.winding_down() && self.held.is_empty() {
            return self.answer(parsed);
        }
        // Table work is pending, or a stopped task not yet done: what
        // concerns the running task acts at once (so `stop` and `quit`
        // stay prompt); everything else waits its turn.
        match parsed {
            Ok(Command::Stop) if self.task.is_some() => {
                self.stop()?;
                // It may also be meant for a held `go`.
                if !self.held.is_empty() {
                    self.held.push_back(Ok(Command::Stop));
                }
                Ok(())
            }
            Ok(Command::PonderHit) if self.is_pondering() => self.ponder_hit(),
            Ok(Command::Quit) => {
                // Stop what runs now; quit once the held input is answered.
                // The stopped task is not waited for (`quit` has its own
                // bound on that): only table work holds the input still.
                self.stop()?;
                self.stopping = false;
                self.held.push_back(Ok(Command::Quit));
                self.answer_held()
            }
            parsed => {
                self.held.push_back(parsed);
                Ok(())
            }
        }
    }

    /// Answers one parsed line.
    fn answer(&mut self, parsed: Result<Command, ParseError>) -> io::Result<()> {
        match parsed {
            Ok(command) => self.handle_command(command),
            Err(error) => self.error(&error.to_string()),
        }
    }

    /// Whether a task that was sent `stop` still runs (once it has ended,
    /// the mark is cleared).
    fn winding_down(&mut self) -> bool {
        if self.task.is_none() {
            self.stopping = false;
        }
        self.stopping
    }

    /// Answers held input, in order, while no table job is pending and no
    /// stopped task winds down (and, for an `isready`, no table build).
    fn answer_held(&mut self) -> io::Result<()> {
        while !self.tables_busy() && !self.winding_down() && !self.quitting {
            if self.builds.busy() && matches!(self.held.front(), Some(Ok(Command::IsReady))) {
                break;
            }
            let Some(parsed) = self.held.pop_front() else {
                break;
            };
            self.answer(parsed)?;
        }
        Ok(())
    }

    fn is_pondering(&self) -> bool {
        matches!(
            self.task,
            Some(Task::Search {
                pondering: true,
                ..
            })
        )
    }

    fn handle_command(&mut self, command: Command) -> io::Result<()> {
        match command {
            Command::Nothing => Ok(()),
            Command::Hello(dialect) => self.hello(dialect),
            Command::Debug(on) => {
                self.debug = on;
                Ok(())
            }
            Command::IsReady => self.is_ready(),
            Command::SetOption { name, value } => self.set_option(&name, value.as_deref()),
            Command::NewGame => self.new_game(),
            Command::Position { start, moves } => self.set_position(start, &moves),
            Command::Go(go) => self.go(go),
            Command::Perft(depth) => self.perft(depth),
            Command::Stop => self.stop(),
            Command::PonderHit => self.ponder_hit(),
            Command::Quit => self.quit(),
            Command::Display => self.display(),
            Command::Eval => self.eval(),
            Command::Bench(depth) => self.bench(depth),
            Command::Solve => self.solve(),
            Command::Query(query) => self.query(query),
        }
    }

    /// `uci` or `ugi`: the first one chooses the dialect for the session.
    fn hello(&mut self, dialect: Dialect) -> io::Result<()> {
        match self.dialect {
            Some(chosen) if chosen != dialect => {
                return self.error(&format!(
                    "{} ignored: this session speaks {} (chosen by its first handshake, '{}')",
                    dialect.name(),
                    chosen.name().to_uppercase(),
                    chosen.name()
                ));
            }
            _ => self.dialect = Some(dialect),
        }
        self.say_all(&response::hello_lines(dialect))
    }

    /// How the current game ended, if it has.
    fn ending(&self) -> Option<Ending> {
        match &self.forfeit {
            Some(forfeit) => Some(Ending::Forfeit(forfeit.clone())),
            None => self.game.outcome(self.options.rules).map(Ending::Rules),
        }
    }

    /// `query`: answered at once about the game of the last `position`
    /// (also during a search).
    fn query(&mut self, query: Query) -> io::Result<()> {
        let ending = self.ending();
        let answer = match query {
            Query::GameOver => bool_answer(ending.is_some()),
            Query::P1Turn => {
                // After an illegal move the turn has passed, as the move
                // list says; the game is over all the same.
                let to_move = match &self.forfeit {
                    Some(forfeit) => forfeit.offender.other(),
                    None => self.game.position().side_to_move(),
                };
                bool_answer(to_move == Color::Black)
            }
            Query::Result => {
                response::result_answer(ending.is_some(), ending.as_ref().and_then(Ending::winner))
            }
        };
        self.say(&response::response_line(answer))
    }

    /// The reason a command that needs the search thread idle must wait,
    /// if it must.
    fn busy(&self) -> Option<&'static str> {
        match self.task {
            Some(Task::Search { .. }) => Some("a search is running (send stop first)"),
            Some(Task::Perft) => Some("perft is running (send stop first)"),
            Some(Task::Bench) => Some("bench is running (send stop first)"),
            None => None,
        }
    }

    fn set_option(&mut self, name: &str, value: Option<&str>) -> io::Result<()> {
        let change = match options::check(name, value) {
            Ok(change) => change,
            Err(error) => return self.error(&format!("setoption: {error}")),
        };
        match change {
            Change::Hash(_) | Change::ClearHash => {
                if let Some(reason) = self.busy() {
                    return self.error(&format!("setoption {name} ignored: {reason}"));
                }
            }
            _ => {}
        }
        match change {
            Change::Hash(mb) => self.send_table_job(Job::ResizeHash {
                mb,
                previous: self.options.hash_mb,
            }),
            Change::ClearHash => self.send_table_job(Job::Clear { history: false }),
            Change::BoardSize(size) => {
                self.options.board_size = size;
                // `startpos` now means this board; start there.
                self.game = Game::new(Position::start(size));
            }
            Change::Rules(rules) => self.options.rules = rules,
            Change::Evaluation(evaluation) => self.options.evaluation = evaluation,
            Change::MoveOverhead(overhead) => self.options.move_overhead = overhead,
            Change::Ponder(on) => self.options.ponder = on,
            Change::MultiPv(lines) => self.options.multipv = lines,
            Change::Tablebase(on) => self.options.tablebase = on,
            Change::SearchAlgorithm(algorithm) => self.options.search_algorithm = algorithm,
            Change::Threads(threads) => self.options.threads = threads,
            Change::ShowWdl(on) => self.options.show_wdl = on,
            Change::SkillLevel(level) => self.options.skill_level = level,
            Change::TablebasePath(list) => {
                self.options.tablebase_path.clone_from(&list);
                self.loads += 1;
                self.loader.load(list);
            }
            Change::TablebaseCache(mb) => {
                self.options.tablebase_cache_mb = mb;
                crate::solver::set_wdl_budget(mb << 20);
            }
        }
        Ok(())
    }

    fn new_game(&mut self) -> io::Result<()> {
        if let Some(reason) = self.busy() {
            let word = self.dialect().new_game();
            return self.error(&format!("{word} ignored: {reason}"));
        }
        self.send_table_job(Job::Clear { history: true });
        self.prepare_tables();
        Ok(())
    }

    /// Starts building the built-in tables of the rules in force in the
    /// background, if searches will want them and they are not there:
    /// the current board's first, then every other built-in size, since a
    /// referee may set a board of any size with `position fen` right
    /// before a `go` whose clock could not pay for the build (see
    /// [`TableBuilds`]).
    fn prepare_tables(&mut self) {
        if plays_from_tables(&self.options.settings()) {
            let current = self.game.position().size();
            let others = BUILTIN_SIZES.into_iter().filter(|&size| size != current);
            for size in std::iter::once(current).chain(others) {
                self.builds.prepare(size, self.options.rules);
            }
        }
    }

    /// Sends a job that changes the search's tables; `readyok` waits for
    /// it. These jobs run on the search thread (never during a search:
    /// they are refused then), so even a slow one never stops this thread
    /// from reading input.
    fn send_table_job(&mut self, job: Job) {
        self.table_jobs += 1;
        self.search.send(job);
    }

    /// `isready`: only answered with no table job pending (input that
    /// arrives meanwhile is held, this included), and once the built-in
    /// tables of the rules in force are built: until then it is held, with
    /// the input after it.
    fn is_ready(&mut self) -> io::Result<()> {
        self.prepare_tables();
        if self.builds.busy() {
            self.held.push_front(Ok(Command::IsReady));
            return Ok(());
        }
        self.say("readyok")
    }

    /// Whether table work (a job on the search thread, or a load) is
    /// pending.
    fn tables_busy(&self) -> bool {
        self.table_jobs > 0 || self.loads > 0
    }

    /// A table job finished: once none is left, answer the held input.
    fn table_job_done(&mut self) -> io::Result<()> {
        self.table_jobs = self.table_jobs.saturating_sub(1);
        self.answer_held()
    }

    /// `position`: builds the new game on the side and swaps it in only if
    /// every part is good. In UGI a bad move does not refuse the list: the
    /// game ends there, lost by the side that played it (a UGI referee
    /// does not check moves; the engines judge them).
    fn set_position(&mut self, start: Start, moves: &[String]) -> io::Result<()> {
        let position = match start {
            Start::StartPos => Position::start(self.options.board_size),
            Start::Fen(text) => match parse_position(&text) {
                Ok(position) => position,
                Err(error) => {
                    return self.error(&format!("position: {error}; position unchanged"));
                }
            },
        };
        let ugi = self.dialect() == Dialect::Ugi;
        let mut game = Game::new(position);
        let mut forfeit = None;
        let mut note = None;
        for (index, text) in moves.iter().enumerate() {
            if let Some(outcome) = game.outcome(self.options.rules) {
                if ugi {
                    note = Some(format!(
                        "warning: position: the game ended before move {} ({outcome}); {} from there on ignored",
                        index + 1,
                        count_moves(moves.len() - index)
                    ));
                    break;
                }
                return self.error(&format!(
                    "position: move {} {} comes after the end of the game ({outcome}); position unchanged",
                    index + 1,
                    quote(text)
                ));
            }
            match parse_move(text, game.position()) {
                Ok(mv) => game.play(mv),
                Err(error) if ugi => {
                    let offender = game.position().side_to_move();
                    note = Some(format!(
                        "warning: position: move {}: {error}; the game is over, lost by {}, who played it{}",
                        index + 1,
                        offender.name(),
                        match moves.len() - index - 1 {
                            0 => String::new(),
                            after => format!(" ({} after it ignored)", count_moves(after)),
                        }
                    ));
                    forfeit = Some(Forfeit {
                        offender,
                        number: index + 1,
                        text: quote(text),
                    });
                    break;
                }
                Err(error) => {
                    return self.error(&format!(
                        "position: move {}: {error}; position unchanged",
                        index + 1
                    ));
                }
            }
        }
        self.game = game;
        self.forfeit = forfeit;
        self.prepare_tables();
        match note {
            Some(note) => self.say(&info_string(&note)),
            None => Ok(()),
        }
    }

    fn go(&mut self, go: Go) -> io::Result<()> {
        let searchmoves = match self.check_go(&go) {
            Ok(searchmoves) => searchmoves,
            Err(message) => return self.error(&format!("go ignored: {message}")),
        };
        if let Some(ending) = self.ending() {
            return self.game_over(&go, &ending);
        }
        let side = self.game.position().side_to_move();
        if let Some(missing) = go.missing_clock(side, self.dialect()) {
            self.say(&info_string(&format!(
                "warning: go gives no {missing} for {}, the side to move: its clock counts as zero",
                side.name()
            )))?;
        }
        for warning in go.clamped() {
            self.say(&info_string(&format!("warning: {warning}")))?;
        }
        let request = self.search_request(&go, searchmoves);
        self.start_search(&go, request);
        Ok(())
    }

    /// Checks that a `go` can run now: the search thread is idle and its
    /// `searchmoves` are legal here (returned as moves).
    fn check_go(&self, go: &Go) -> Result<Vec<Move>, String> {
        if let Some(reason) = self.busy() {
            return Err(reason.to_string());
        }
        go.searchmoves
            .iter()
            .map(|text| parse_move(text, self.game.position()))
            .collect::<Result<_, _>>()
            .map_err(|error| format!("searchmoves: {error}"))
    }

    /// `go` in a finished game: no search, the result `(none)` is ready
    /// (and held like a search's for `infinite` and `ponder`).
    fn game_over(&mut self, go: &Go, ending: &Ending) -> io::Result<()> {
        self.say(&info_string(&format!("game over: {ending}")))?;
        let hold = go.infinite || go.ponder;
        self.task = Some(Task::Search {
            hold,
            infinite: go.infinite,
            pondering: go.ponder,
            pending: Some(SearchResult {
                best_move: None,
                ponder_move: None,
                score: 0,
                depth: 0,
                nodes: 0,
            }),
            game_over: true,
            started: Instant::now(),
            fallback: None,
            hard: None,
        });
        if hold { Ok(()) } else { self.finish_search() }
    }

    /// The search a `go` asks for, in the current game under the options.
    fn search_request(&mut self, go: &Go, searchmoves: Vec<Move>) -> Request {
        let position = *self.game.position();
        let mut settings = self.options.settings();
        if self.dialect() == Dialect::Ugi {
            settings.move_overhead = settings.move_overhead.max(UGI_MIN_OVERHEAD);
        }
        settings.skill = settings.skill.with_seed(self.next_seed());
        Request {
            position,
            history: self.game.history(),
            limits: go.limits(position.side_to_move(), searchmoves),
            settings,
            // The search thread finds the tables (it may have to solve one).
            tablebase: TableUse::default(),
        }
    }

    /// Sends a search to the search thread.
    fn start_search(&mut self, go: &Go, request: Request) {
        // Scores in the table are only valid under the rules and
        // evaluation they were computed with.
        let wanted = (request.settings.rules, request.settings.evaluation);
        if self.tables_for != wanted {
            self.send_table_job(Job::Clear { history: true });
            self.tables_for = wanted;
        }
        let signals = &self.shared.signals;
        // Cleared here, before the job is sent, so an immediate `stop` is
        // never lost.
        signals.stop.store(false, Ordering::SeqCst);
        signals.pondering.store(go.ponder, Ordering::SeqCst);
        let fallback = request
            .limits
            .searchmoves
            .first()
            .copied()
            .or_else(|| request.position.legal_moves().first().copied());
        let started = Instant::now();
        let mut hard = hard_limit(&request);
        // A built-in table still being built (no `isready` came after the
        // `position`): the search may wait longer for it than it would
        // search, since from the table it answers at once.
        let size = request.position.size();
        if self.builds.building(size, request.settings.rules)
            && plays_from_tables(&request.settings)
        {
            let wait = crate::time::table_wait(request.limits.time, request.settings.move_overhead);
            hard = hard.zip(wait).map(|(hard, wait)| hard.max(wait));
        }
        self.task = Some(Task::Search {
            hold: go.infinite || go.ponder,
            infinite: go.infinite,
            pondering: go.ponder,
            pending: None,
            game_over: false,
            started,
            fallback,
            hard,
        });
        if !go.ponder {
            self.arm_deadline(started, hard);
        }
        self.search.send(Job::Search(Box::new(request)));
    }

    /// Starts the running search's clock at `from`, if it has one.
    fn arm_deadline(&mut self, from: Instant, hard: Option<Duration>) {
        self.deadline = match hard {
            Some(hard) => crossbeam_channel::at(from + hard),
            None => crossbeam_channel::never(),
        };
    }

    fn perft(&mut self, depth: u32) -> io::Result<()> {
        if let Some(reason) = self.busy() {
            return self.error(&format!("go perft ignored: {reason}"));
        }
        if depth == 0 {
            // The position itself is the one leaf.
            return self.say(&response::perft_total(1));
        }
        self.shared.signals.stop.store(false, Ordering::SeqCst);
        self.task = Some(Task::Perft);
        self.search.send(Job::Perft {
            position: *self.game.position(),
            depth,
        });
        Ok(())
    }

    fn bench(&mut self, depth: Option<u32>) -> io::Result<()> {
        if let Some(reason) = self.busy() {
            return self.error(&format!("bench ignored: {reason}"));
        }
        self.shared.signals.stop.store(false, Ordering::SeqCst);
        self.task = Some(Task::Bench);
        self.search.send(Job::Bench {
            depth: depth.unwrap_or(bench::DEFAULT_DEPTH).max(1),
        });
        Ok(())
    }

    fn stop(&mut self) -> io::Result<()> {
        self.shared.signals.stop.store(true, Ordering::SeqCst);
        self.stopping = self.task.is_some();
        if let Some(Task::Search { hold, .. }) = &mut self.task {
            *hold = false;
            return self.release_if_ready();
        }
        Ok(())
    }

    fn ponder_hit(&mut self) -> io::Result<()> {
        match &mut self.task {
            Some(Task::Search {
                hold,
                infinite,
                pondering,
                hard,
                ..
            }) if *pondering => {
                *pondering = false;
                *hold = *infinite;
                let hard = *hard;
                self.shared.signals.pondering.store(false, Ordering::SeqCst);
                self.arm_deadline(Instant::now(), hard);
                self.release_if_ready()
            }
            _ => self.error("ponderhit ignored: not pondering"),
        }
    }

    /// Prints a held result once nothing holds it any more.
    fn release_if_ready(&mut self) -> io::Result<()> {
        match &self.task {
            Some(Task::Search {
                hold: false,
                pending: Some(_),
                ..
            }) => self.finish_search(),
            _ => Ok(()),
        }
    }

    /// Prints the pending result of the current search and ends it.
    fn finish_search(&mut self) -> io::Result<()> {
        let Some(Task::Search {
            pending: Some(outcome),
            started,
            game_over,
            ..
        }) = self.task.take()
        else {
            return Ok(());
        };
        self.deadline = crossbeam_channel::never();
        if self.debug {
            let took = started.elapsed().as_millis();
            log::debug!("search took {took} ms");
            let summary = if game_over {
                "debug: the game is over, nothing to search".to_string()
            } else {
                format!(
                    "debug: search finished at depth {} after {} nodes in {took} ms",
                    outcome.depth, outcome.nodes
                )
            };
            self.say(&info_string(&summary))?;
        }
        // A UGI referee waits for exactly `bestmove <move>`.
        let ponder = match self.dialect() {
            Dialect::Uci => outcome.ponder_move,
            Dialect::Ugi => None,
        };
        self.say(&bestmove_line(outcome.best_move, ponder))
    }

    fn handle_event(&mut self, event: Event) -> io::Result<()> {
        match event {
            Event::Info(info) => {
                if let (Some(Task::Search { fallback, .. }), Some(&best)) =
                    (&mut self.task, info.pv.first())
                    && info.multipv == 1
                {
                    *fallback = Some(best);
                }
                self.say(&info_line(&info, self.options.show_wdl))
            }
            Event::SearchDone(outcome) => {
                if let Some(Task::Search { pending, .. }) = &mut self.task {
                    *pending = Some(outcome);
                }
                self.release_if_ready()
            }
            Event::PerftDone(result) => {
                self.task = None;
                self.say_all(&response::perft_lines(result.as_deref()))
            }
            Event::BenchDone(report) => {
                self.task = None;
                self.say_all(&report.text_lines())
            }
            Event::HashResized { in_effect, error } => {
                self.options.hash_mb = in_effect;
                if let Some(message) = error {
                    self.error(&format!(
                        "setoption Hash: {message}; the table has {in_effect} MB"
                    ))?;
                }
                self.table_job_done()
            }
            Event::Cleared => self.table_job_done(),
            Event::TableErrors(errors) => self.table_errors(&errors),
            Event::Failed { kind, message } => {
                self.error(&format!(
                    "the search thread failed ({message}); it goes on with the next command"
                ))?;
                self.job_failed(kind)
            }
        }
    }

    /// A loader job (a `TablebasePath` load or a `solve`) finished.
    fn loader_done(&mut self, done: LoaderDone) -> io::Result<()> {
        match done {
            LoaderDone::Loaded { loaded, errors } => {
                for description in loaded {
                    self.say(&info_string(&format!("loaded {description}")))?;
                }
                for message in errors {
                    self.error(&format!(
                        "setoption TablebasePath: {message}; carrying on without it"
                    ))?;
                }
            }
            LoaderDone::Solved { line, errors } => {
                self.table_errors(&errors)?;
                self.say(&line)?;
            }
        }
        self.loads = self.loads.saturating_sub(1);
        self.answer_held()
    }

    /// Says what is wrong with table layers found unusable.
    fn table_errors(&mut self, errors: &[String]) -> io::Result<()> {
        for message in errors {
            self.error(&format!(
                "table: {message}; positions there are searched instead"
            ))?;
        }
        Ok(())
    }

    /// A job of `kind` ended in a failure, not a result: what it owes is
    /// answered all the same (a `go` its one `bestmove`).
    fn job_failed(&mut self, kind: JobKind) -> io::Result<()> {
        match kind {
            JobKind::Search => self.search_failed(),
            JobKind::Perft | JobKind::Bench => {
                self.task = None;
                Ok(())
            }
            JobKind::Tables => self.table_job_done(),
        }
    }

    /// The running search ends without a result: its result is the best
    /// move known, and it is printed when nothing holds it.
    fn search_failed(&mut self) -> io::Result<()> {
        if let Some(Task::Search {
            pending, fallback, ..
        }) = &mut self.task
            && pending.is_none()
        {
            *pending = Some(SearchResult {
                best_move: *fallback,
                ponder_move: None,
                score: 0,
                depth: 0,
                nodes: 0,
            });
        }
        self.release_if_ready()
    }

    /// The search thread ended (it cannot, short of a bug the job's panic
    /// guard does not catch): say so, answer what it owed, and start a
    /// fresh one, so the protocol goes on (and never spins on the dead
    /// channel).
    fn search_thread_lost(&mut self) -> io::Result<()> {
        self.error("the search thread ended unexpectedly; starting a new one")?;
        let (search, events) = SearchThread::spawn(Arc::clone(&self.shared));
        // The old handle's thread has ended: dropping it joins at once.
        self.search = search;
        self.events = events;
        match self.task {
            Some(Task::Search { .. }) => self.search_failed()?,
            Some(_) => self.task = None,
            None => {}
        }
        // Table jobs queued on the old thread are lost with it; the tables
        // stay as they were.
        self.table_jobs = 0;
        self.answer_held()
    }

    fn quit(&mut self) -> io::Result<()> {
        self.quitting = true;
        // Finish what runs: a search still owes its `bestmove`, and table
        // jobs their `readyok`s (the search thread finishes them anyway).
        self.shared.signals.stop.store(true, Ordering::SeqCst);
        if let Some(Task::Search { hold, .. }) = &mut self.task {
            *hold = false;
        }
        self.release_if_ready()?;
        let deadline = Instant::now() + QUIT_GRACE;
        while self.task.is_some() || self.tables_busy() {
            let left = deadline.saturating_duration_since(Instant::now());
            select! {
                recv(self.events) -> event => match event {
                    Ok(event) => self.handle_event(event)?,
                    Err(_) => break,
                },
                recv(self.loaded) -> done => match done {
                    Ok(done) => self.loader_done(done)?,
                    Err(_) => break,
                },
                default(left) => break,
            }
        }
        if matches!(self.task, Some(Task::Search { .. })) {
            // A search deaf to `stop` (a bug): its `bestmove` all the
            // same, and exit without it (see `SearchThread`'s drop).
            self.error(&format!(
                "the search did not stop within {QUIT_GRACE:?}; quitting without it"
            ))?;
            self.search_failed()?;
        }
        Ok(())
    }

    fn display(&mut self) -> io::Result<()> {
        let lines =
            response::display_lines(self.game.position(), self.options.rules, self.ending());
        self.say_all(&lines)
    }

    /// `solve`: the current position's value from the solved tables, for
    /// the side to move, in one line. Tables are consulted whatever the
    /// `Tablebase` option says (it governs play only), on the loader
    /// thread (a layer may have to be read, or a built-in table built):
    /// the input after it waits for its answer, `stop` does not.
    fn solve(&mut self) -> io::Result<()> {
        let position = *self.game.position();
        let side = position.side_to_move();
        let rules = self.options.rules;
        let value = match self.ending() {
            Some(Ending::Rules(Outcome::DrawByRepetition)) => Dtz::Draw,
            Some(ending) if ending.winner() == Some(side) => Dtz::Win(0),
            Some(_) => Dtz::Loss(0),
            None => {
                self.loads += 1;
                self.loader.solve(position, rules);
                return Ok(());
            }
        };
        // The game is over: the end is here.
        self.say(&response::solve_line(Some(value), Some(value), true))
    }

    fn eval(&mut self) -> io::Result<()> {
        let lines = response::eval_lines(
            self.game.position(),
            self.options.evaluation,
            self.options.rules,
        );
        self.say_all(&lines)
    }
}

/// A seed that differs between sessions: the clock and the process id.
fn first_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos() as u64);
    nanos ^ u64::from(std::process::id()).rotate_left(32)
}

/// "1 move", "2 moves", ...
fn count_moves(n: usize) -> String {
    if n == 1 {
        "1 move".to_string()
    } else {
        format!("{n} moves")
    }
}

/// `true` or `false`, as a `response`.
fn bool_answer(yes: bool) -> &'static str {
    if yes { "true" } else { "false" }
}

/// The hard time limit of a search, counted from the `go` (or
/// `ponderhit`) that starts its clock: the limit the search itself keeps
/// (see [`crate::time`]); `None` when time does not limit it.
fn hard_limit(request: &Request) -> Option<Duration> {
    if request.limits.time == TimeLimit::None {
        return None;
    }
    let position = &request.position;
    let moves_needed = moves_to_go(position, position.side_to_move()) as u32;
    budget(
        request.limits.time,
        request.settings.move_overhead,
        moves_needed,
    )
    .map(|budget| budget.hard)
}
