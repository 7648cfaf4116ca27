//! The long-lived search thread. It takes jobs from the protocol thread
//! over a channel, runs them one at a time, and sends events back; it never
//! touches stdout.

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use parking_lot::{Mutex, RwLock};

use super::{Info, Request, SearchResult, Signals, Tables, search};
use crate::bench::{self, BenchReport};
use crate::board::{Move, Position};
use crate::perft;
use crate::tablebase::{self, Tablebases};
use crate::tt::TranspositionTable;

/// State the protocol thread and the search thread share.
pub struct Shared {
    pub signals: Signals,
    /// Locked by the search thread for the whole of each job. The protocol
    /// thread changes the tables only through jobs (`ucinewgame`, `Hash`,
    /// `Clear Hash`), so it never waits on this lock and keeps reading
    /// input while a slow resize runs.
    pub tables: Mutex<Tables>,
    /// Solved tables loaded from files (`TablebasePath`). Replaced by a
    /// `LoadTables` job once the files are read, so readers never wait on
    /// a load.
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
    /// `mb` MiB, or fall back to `previous` if that memory cannot be had.
    ResizeHash {
        mb: usize,
        previous: usize,
    },
    /// Empty the transposition table, and the move-ordering history too
    /// when `history` is set (`ucinewgame`).
    Clear {
        history: bool,
    },
    /// Load the table files of a `TablebasePath` value, replacing those
    /// loaded before.
    LoadTables(String),
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
    /// A `LoadTables` job's result: a description of each table loaded,
    /// and a message for each file that could not be.
    TablesLoaded {
        loaded: Vec<String>,
        errors: Vec<String>,
    },
}

/// Handle to the running search thread; dropping the job sender ends it.
pub struct SearchThread {
    jobs: Option<Sender<Job>>,
    handle: Option<JoinHandle<()>>,
}

impl SearchThread {
    /// Starts the thread.
    pub fn spawn(shared: Arc<Shared>, events: Sender<Event>) -> SearchThread {
        let (jobs, inbox) = crossbeam_channel::unbounded();
        let handle = std::thread::Builder::new()
            .name("search".into())
            .spawn(move || run(&shared, &inbox, &events))
            .expect("failed to start the search thread");
        SearchThread {
            jobs: Some(jobs),
            handle: Some(handle),
        }
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
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

fn run(shared: &Shared, inbox: &Receiver<Job>, events: &Sender<Event>) {
    for job in inbox {
        let event = match job {
            Job::Search(mut request) => {
                if request.settings.tablebase {
                    let tablebases = shared.tablebases.read().clone();
                    let (size, rules) = (request.position.size(), request.settings.rules);
                    // May solve a built-in table on first use.
                    request.table = tablebases.find(size, rules);
                }
                let mut tables = shared.tables.lock();
                log::debug!("search: {:?}", request.limits);
                let mut report = |info: Info| {
                    let _ = events.send(Event::Info(info));
                };
                let outcome = search(&request, &mut tables, &shared.signals, &mut report);
                log::debug!("search done: {outcome:?}");
                Event::SearchDone(outcome)
            }
            Job::Perft { position, depth } => {
                let result = perft::divide_until(&position, depth, &shared.signals.stop);
                Event::PerftDone(result)
            }
            Job::Bench { depth } => Event::BenchDone(bench::run(depth, &shared.signals)),
            Job::ResizeHash { mb, previous } => {
                let mut tables = shared.tables.lock();
                // Free the old table first, so old and new never coexist.
                tables.tt = TranspositionTable::new(TranspositionTable::MIN_MB);
                let (tt, in_effect, error) = match TranspositionTable::try_new(mb) {
                    Ok(tt) => (tt, mb, None),
                    Err(message) => match TranspositionTable::try_new(previous) {
                        Ok(tt) => (tt, previous, Some(message)),
                        Err(_) => (
                            TranspositionTable::new(TranspositionTable::MIN_MB),
                            TranspositionTable::MIN_MB,
                            Some(message),
                        ),
                    },
                };
                tables.tt = tt;
                Event::HashResized { in_effect, error }
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
            Job::LoadTables(list) => {
                let loaded = tablebase::load_path_list(&list);
                *shared.tablebases.write() = Tablebases::new(loaded.tables);
                Event::TablesLoaded {
                    loaded: loaded.descriptions,
                    errors: loaded.errors,
                }
            }
        };
        if events.send(event).is_err() {
            break;
        }
    }
}
