//! The long-lived search thread. It takes jobs from the protocol thread
//! over a channel, runs them one at a time, and sends events back; it never
//! touches stdout. A panic in a job is caught and reported as
//! [`Event::Failed`]; the thread then takes the next job.
//!
//! Table directories are loaded, and `solve` answered, on a thread of
//! their own ([`TableLoader`]), so neither waits behind a running search
//! nor holds up the protocol thread while a layer is read. Built-in tables
//! are built ahead of the searches that will want them, each on a thread
//! of its own ([`TableBuilds`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use parking_lot::{Mutex, RwLock};

use super::{Info, Request, SearchResult, Settings, Signals, TableUse, Tables, search_then};
use crate::bench::{self, BenchReport};
use crate::board::{Move, Position, Rules};
use crate::perft;
use crate::protocol::response;
use crate::tablebase::{self, Layered, Tablebases};
use crate::tt::TranspositionTable;

/// How long dropping a [`SearchThread`] waits for the thread to end
/// before leaving it behind (a search that ignores `stop` must not keep
/// the process from exiting).
const JOIN_GRACE: Duration = Duration::from_secs(1);

/// State the protocol thread and the search thread share.
pub struct Shared {
    pub signals: Signals,
    /// Locked by the search thread for the whole of each job. The protocol
    /// thread changes the tables only through jobs (`ucinewgame`, `Hash`,
    /// `Clear Hash`), so it never waits on this lock and keeps reading
    /// input while a slow resize runs.
    pub tables: Mutex<Tables>,
    /// Solved tables loaded from directories (`TablebasePath`). Replaced
    /// by the [`TableLoader`] once they are read, so readers never wait on
    /// a load; a search keeps the set it started with.
    pub tablebases: RwLock<Tablebases>,
}

/// Work for the search thread.
pub enum Job {
    Search(Box<Request>),
    Perft {
        position: Position,
        depth: u32,
    },
    Bench {
        depth: u32,
    },
    /// Replace the transposition table (now of `previous` MiB) with one of
    /// `mb` MiB, or keep it (emptied) if that memory cannot be had.
    ResizeHash {
        mb: usize,
        previous: usize,
    },
    /// Empty the transposition table, and the move-ordering history too
    /// when `history` is set (`ucinewgame`).
    Clear {
        history: bool,
    },
}

/// Which kind of job an [`Event::Failed`] was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobKind {
    Search,
    Perft,
    Bench,
    /// `ResizeHash` or `Clear`.
    Tables,
}

impl Job {
    fn kind(&self) -> JobKind {
        match self {
            Job::Search(_) => JobKind::Search,
            Job::Perft { .. } => JobKind::Perft,
            Job::Bench { .. } => JobKind::Bench,
            Job::ResizeHash { .. } | Job::Clear { .. } => JobKind::Tables,
        }
    }
}

/// What the search thread reports.
#[derive(Debug)]
pub enum Event {
    Info(Info),
    SearchDone(SearchResult),
    /// `None` when the count was stopped before it finished.
    PerftDone(Option<Vec<(Move, u64)>>),
    BenchDone(BenchReport),
    /// A `ResizeHash` job's result: the size now in effect, and why the
    /// requested one could not be had, if it could not.
    HashResized {
        in_effect: usize,
        error: Option<String>,
    },
    Cleared,
    /// Layers of the tables found unusable during a search (each once):
    /// what is wrong with them. The search went on without them.
    TableErrors(Vec<String>),
    /// A job panicked (a bug): what kind of job, and the panic's message.
    /// The thread goes on with the next job.
    Failed {
        kind: JobKind,
        message: String,
    },
}

/// What a [`TableLoader`] job gave.
#[derive(Debug)]
pub enum LoaderDone {
    /// A `TablebasePath` load: a description of each table loaded, and a
    /// message for each path that could not be.
    Loaded {
        loaded: Vec<String>,
        errors: Vec<String>,
    },
    /// A `solve`: its answer, and what was found wrong with the tables on
    /// the way (the answer is then `solve unknown`).
    Solved { line: String, errors: Vec<String> },
}

/// Handle to the running search thread; dropping it ends the thread (or
/// leaves it behind after [`JOIN_GRACE`] if it does not end).
pub struct SearchThread {
    jobs: Option<Sender<Job>>,
    handle: Option<JoinHandle<()>>,
}

impl SearchThread {
    /// Starts the thread; its events arrive on the returned receiver,
    /// which reports disconnection if the thread ever ends on its own.
    pub fn spawn(shared: Arc<Shared>) -> (SearchThread, Receiver<Event>) {
        let (jobs, inbox) = crossbeam_channel::unbounded();
        let (events, receiver) = crossbeam_channel::unbounded();
        let fault = Fault::from_env();
        let handle = std::thread::Builder::new()
            .name("search".into())
            .spawn(move || run(&shared, &inbox, &events, fault))
            .expect("failed to start the search thread");
        let thread = SearchThread {
            jobs: Some(jobs),
            handle: Some(handle),
        };
        (thread, receiver)
    }

    /// Queues a job. The caller clears the stop flag *before* this, so a
    /// `stop` that follows at once is never lost.
    pub fn send(&self, job: Job) {
        if let Some(jobs) = &self.jobs {
            // The thread only ends when we drop the sender, so this cannot fail.
            let _ = jobs.send(job);
        }
    }
}

impl Drop for SearchThread {
    /// Ends the thread: it finishes its job (the caller has set `stop`)
    /// and finds no more. A thread still busy after [`JOIN_GRACE`] is left
    /// behind, so that `quit` never waits forever.
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(handle) = self.handle.take() {
            let deadline = Instant::now() + JOIN_GRACE;
            while !handle.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            if handle.is_finished() {
                let _ = handle.join();
            } else {
                log::warn!("the search thread did not end within {JOIN_GRACE:?}; left behind");
            }
        }
    }
}

/// Faults the search thread can be told to commit, to test that the
/// protocol survives them. Only debug builds (the test build) read the
/// environment variable `DODGEM_DEBUG_FAULT`; release builds have none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// `panic`: every search panics before it reports anything.
    Panic,
    /// `panic-after-info`: every search panics at its first `info`.
    PanicAfterInfo,
    /// `hang`: every search hangs at its first `info`, deaf to `stop`.
    Hang,
    /// `die`: the thread ends when it gets a search (as if a fault
    /// escaped the job's panic guard).
    Die,
}

impl Fault {
    fn from_env() -> Option<Fault> {
        if !cfg!(debug_assertions) {
            return None;
        }
        match std::env::var("DODGEM_DEBUG_FAULT").ok()?.as_str() {
            "panic" => Some(Fault::Panic),
            "panic-after-info" => Some(Fault::PanicAfterInfo),
            "hang" => Some(Fault::Hang),
            "die" => Some(Fault::Die),
            _ => None,
        }
    }
}

/// The text of a caught panic.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

fn run(shared: &Shared, inbox: &Receiver<Job>, events: &Sender<Event>, fault: Option<Fault>) {
    while let Some(job) = next_job(shared, inbox) {
        let kind = job.kind();
        if kind == JobKind::Search && fault == Some(Fault::Die) {
            log::error!("DODGEM_DEBUG_FAULT=die: the search thread ends on purpose");
            return;
        }
        // Set once a search's result is sent (before its helper threads
        // end): a panic after it must not be taken for the next job's.
        let mut answered = false;
        let event = catch_unwind(AssertUnwindSafe(|| {
            run_job(shared, job, events, fault, &mut answered)
        }));
        let event = match event {
            Ok(event) => event,
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                log::error!("the search thread's {kind:?} job panicked: {message}");
                (!answered).then_some(Event::Failed { kind, message })
            }
        };
        if event.is_some_and(|event| events.send(event).is_err()) {
            break;
        }
    }
}

/// The next job (`None` once the protocol thread is gone). Until it comes,
/// gives back the memory of replaced hash tables, a slice at a time, so
/// that the freeing never runs beside a search or holds up a reply: a job
/// waits for one slice at most.
fn next_job(shared: &Shared, inbox: &Receiver<Job>) -> Option<Job> {
    loop {
        if !shared.tables.lock().tt.give_back_slice() {
            return inbox.recv().ok();
        }
        match inbox.try_recv() {
            Ok(job) => return Some(job),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => {}
        }
    }
}

/// The solved tables for a search: loaded tables that cover the root, or
/// else the built-in table of its size; and the loaded tables of its board
/// and rule for probes inside the search. A built-in table not yet built
/// is built on a thread of its own while this one watches `stop`: if the
/// search is stopped first, it goes on without the table (the build
/// finishes in the background, for the next search).
fn tables_for(tablebases: &Tablebases, request: &Request, stop: &AtomicBool) -> TableUse {
    let (position, rules) = (&request.position, request.settings.rules);
    let probes = tablebases.for_board(position.size(), rules);
    let root = tablebases
        .covering(position, rules)
        .or_else(|| builtin_watching(position.size(), rules, stop));
    TableUse { root, probes }
}

/// The built-in table for `size`, built if need be unless `stop` is set
/// first.
fn builtin_watching(size: usize, rules: Rules, stop: &AtomicBool) -> Option<Arc<Layered>> {
    if !tablebase::has_builtin(size) {
        return None;
    }
    if let Some(table) = tablebase::builtin_if_built(size, rules) {
        return Some(table);
    }
    let (sender, receiver) = crossbeam_channel::bounded(1);
    let started = spawn_build(size, rules, move |table| {
        let _ = sender.send(table);
    });
    if !started {
        return None;
    }
    loop {
        match receiver.recv_timeout(Duration::from_millis(1)) {
            Ok(table) => return table,
            Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {}
            Err(_) => return None,
        }
    }
}

/// Builds (or waits for) the built-in table for `size` under `rules` on a
/// thread of its own, then hands it to `then` there (`None` if the build
/// failed: a bug, logged). `false` if no thread could be started.
fn spawn_build(
    size: usize,
    rules: Rules,
    then: impl FnOnce(Option<Arc<Layered>>) + Send + 'static,
) -> bool {
    std::thread::Builder::new()
        .name("table build".into())
        .spawn(move || {
            let table =
                catch_unwind(|| tablebase::builtin(size, rules)).unwrap_or_else(|payload| {
                    log::error!(
                        "building the {size}x{size} {} table failed: {}",
                        rules.name(),
                        panic_message(payload.as_ref())
                    );
                    None
                });
            then(table);
        })
        .is_ok()
}

/// Whether searches under `settings` play from solved tables (the
/// textbook algorithms use none).
pub fn plays_from_tables(settings: &Settings) -> bool {
    settings.tablebase && settings.algorithm == super::textbook::Algorithm::Engine
}

/// Built-in tables built ahead of the searches that will want them, for
/// the board and rules in force: a table built during a timed search is
/// built on that search's clock (counted from `go`), and the first search
/// of a game with a short clock would be stopped before it could play
/// from the table. `isready` waits for these builds; `go` does not (its
/// search waits for the table within its own time).
pub struct TableBuilds {
    /// Builds started and not yet finished.
    building: Vec<(usize, Rules)>,
    sender: Sender<(usize, Rules)>,
    finished: Receiver<(usize, Rules)>,
}

impl Default for TableBuilds {
    fn default() -> TableBuilds {
        let (sender, finished) = crossbeam_channel::unbounded();
        TableBuilds {
            building: Vec::new(),
            sender,
            finished,
        }
    }
}

impl TableBuilds {
    /// Starts building the built-in table for `size` under `rules` in the
    /// background, unless `size` has none or it is built or being built.
    pub fn prepare(&mut self, size: usize, rules: Rules) {
        let key = (size, rules);
        if !tablebase::has_builtin(size)
            || tablebase::builtin_if_built(size, rules).is_some()
            || self.building.contains(&key)
        {
            return;
        }
        let sender = self.sender.clone();
        // A failed build is over too: the search goes on without it.
        if spawn_build(size, rules, move |_| {
            let _ = sender.send(key);
        }) {
            self.building.push(key);
        }
    }

    /// Where each build that ends reports its board size and rules; pass
    /// them to [`TableBuilds::finished`].
    pub fn events(&self) -> &Receiver<(usize, Rules)> {
        &self.finished
    }

    /// The build of `key` ended.
    pub fn finished(&mut self, key: (usize, Rules)) {
        self.building.retain(|&building| building != key);
    }

    /// Whether the build of the table for `size` under `rules` is under
    /// way.
    pub fn building(&self, size: usize, rules: Rules) -> bool {
        self.building.contains(&(size, rules))
    }

    /// Whether a build is under way.
    pub fn busy(&self) -> bool {
        !self.building.is_empty()
    }
}

/// What was found wrong with the layers of `tables` since last asked.
fn table_errors(tables: &TableUse) -> Vec<String> {
    tables
        .root
        .iter()
        .chain(&tables.probes)
        .flat_map(|table| table.take_errors())
        .collect()
}

/// Runs one job; its event, unless already sent (a search sends its result
/// itself, as soon as it has it, and sets `answered`).
fn run_job(
    shared: &Shared,
    job: Job,
    events: &Sender<Event>,
    fault: Option<Fault>,
    answered: &mut bool,
) -> Option<Event> {
    let event = match job {
        Job::Search(mut request) => {
            if fault == Some(Fault::Panic) {
                panic!("DODGEM_DEBUG_FAULT=panic: the search panics on purpose");
            }
            if plays_from_tables(&request.settings) {
                let tablebases = shared.tablebases.read().clone();
                request.tablebase = tables_for(&tablebases, &request, &shared.signals.stop);
            }
            let mut tables = shared.tables.lock();
            log::debug!("search: {:?}", request.limits);
            let mut report = |info: Info| {
                let _ = events.send(Event::Info(info));
                match fault {
                    Some(Fault::PanicAfterInfo) => {
                        panic!("DODGEM_DEBUG_FAULT=panic-after-info: the search panics on purpose")
                    }
                    Some(Fault::Hang) => loop {
                        std::thread::sleep(Duration::from_secs(1));
                    },
                    _ => {}
                }
            };
            let mut finished = |outcome: &SearchResult| {
                log::debug!("search done: {outcome:?}");
                let errors = table_errors(&request.tablebase);
                if !errors.is_empty() {
                    let _ = events.send(Event::TableErrors(errors));
                }
                let _ = events.send(Event::SearchDone(outcome.clone()));
                *answered = true;
            };
            search_then(
                &request,
                &mut tables,
                &shared.signals,
                &mut report,
                &mut finished,
            );
            return None;
        }
        Job::Perft { position, depth } => {
            let result = perft::divide_until(&position, depth, &shared.signals.stop);
            Event::PerftDone(result)
        }
        Job::Bench { depth } => Event::BenchDone(bench::run(depth, &shared.signals)),
        Job::ResizeHash { mb, previous } => {
            let mut tables = shared.tables.lock();
            // The old table's memory is given back between jobs (see
            // `next_job`); if the new size cannot be had, the old table
            // stays, emptied as a new one would be.
            match TranspositionTable::try_new(mb) {
                Ok(tt) => {
                    tables.tt.replace_with(tt);
                    Event::HashResized {
                        in_effect: mb,
                        error: None,
                    }
                }
                Err(message) => {
                    tables.tt.clear();
                    Event::HashResized {
                        in_effect: previous,
                        error: Some(message),
                    }
                }
            }
        }
        Job::Clear { history } => {
            let mut tables = shared.tables.lock();
            if history {
                tables.clear();
            } else {
                tables.tt.clear();
            }
            Event::Cleared
        }
    };
    Some(event)
}

/// The thread that loads table directories (`TablebasePath`), one value
/// at a time in order, and swaps the loaded set in; it also answers
/// `solve` (which may read and decompress a layer, or build a built-in
/// table). Dropping it ends it.
pub struct TableLoader {
    jobs: Sender<LoaderJob>,
}

enum LoaderJob {
    Load(String),
    Solve(Position, Rules),
}

impl TableLoader {
    /// Starts the thread; each job's result arrives on the receiver, in
    /// the order the jobs were sent.
    pub fn spawn(shared: Arc<Shared>) -> (TableLoader, Receiver<LoaderDone>) {
        let (jobs, inbox) = crossbeam_channel::unbounded::<LoaderJob>();
        let (results, receiver) = crossbeam_channel::unbounded();
        std::thread::Builder::new()
            .name("table loader".into())
            .spawn(move || {
                for job in inbox {
                    let done = match job {
                        LoaderJob::Load(list) => load(&shared, &list),
                        LoaderJob::Solve(position, rules) => solve(&shared, &position, rules),
                    };
                    if results.send(done).is_err() {
                        break;
                    }
                }
            })
            .expect("failed to start the table loader thread");
        (TableLoader { jobs }, receiver)
    }

    /// Queues the load of a `TablebasePath` value.
    pub fn load(&self, list: String) {
        // The thread ends only when this sender is dropped.
        let _ = self.jobs.send(LoaderJob::Load(list));
    }

    /// Queues a `solve` of `position` (not a finished game) under `rules`.
    pub fn solve(&self, position: Position, rules: Rules) {
        let _ = self.jobs.send(LoaderJob::Solve(position, rules));
    }
}

/// Loads a `TablebasePath` value and swaps the loaded set in.
fn load(shared: &Shared, list: &str) -> LoaderDone {
    match catch_unwind(AssertUnwindSafe(|| tablebase::load_path_list(list))) {
        Ok(loaded) => {
            *shared.tablebases.write() = Tablebases::new(loaded.layered);
            LoaderDone::Loaded {
                loaded: loaded.descriptions,
                errors: loaded.errors,
            }
        }
        Err(payload) => LoaderDone::Loaded {
            loaded: Vec::new(),
            errors: vec![format!(
                "loading failed ({}); the tables loaded before are kept",
                panic_message(payload.as_ref())
            )],
        },
    }
}

/// The `solve` answer for `position`: from loaded tables that cover it,
/// else from the built-in table of its size (built on first use).
fn solve(shared: &Shared, position: &Position, rules: Rules) -> LoaderDone {
    let tablebases = shared.tablebases.read().clone();
    let answer = catch_unwind(AssertUnwindSafe(|| {
        let table = tablebases
            .covering(position, rules)
            .or_else(|| tablebase::builtin(position.size(), rules))?;
        let value = table.probe(position);
        let end = table.probe_end(position);
        Some(((value, end, table.has_dtz()), table.take_errors()))
    }));
    let ((value, end, dtz), errors) = match answer {
        Ok(Some((value, errors))) => (value, errors),
        Ok(None) => ((None, None, true), Vec::new()),
        Err(payload) => (
            (None, None, true),
            vec![format!(
                "the table lookup failed ({})",
                panic_message(payload.as_ref())
            )],
        ),
    };
    LoaderDone::Solved {
        line: response::solve_line(value, end, dtz),
        errors,
    }
}
