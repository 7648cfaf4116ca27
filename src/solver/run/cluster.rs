//! A solve spread over the ranks of an MPI job (the `mpi` feature): rank
//! 0 keeps the graph of jobs and hands each job whose wait is over to an
//! idle worker; every other rank makes the jobs it is given and reports
//! back. The job's files go to a directory all ranks share, so what a
//! worker reports is only a summary; what a job is, and what its report
//! says, are bytes this module does not read ([`solve`](super::solve) makes and
//! reads them).
//!
//! A worker that goes silent (a beat a second while it works) for longer
//! than the timeout is counted lost and its job goes to another worker;
//! should it come back, it is told to end. A worker that hears nothing
//! from the manager (which beats to idle workers) for ten timeouts ends
//! too. Under OpenMPI a dead rank ends the whole job unless `mpirun
//! --enable-recovery` is given; either way a job started again resumes
//! from the files on disk.
//!
//! Only the main thread of each rank calls MPI (`MPI_THREAD_FUNNELED`);
//! a worker's job runs on other threads while the main thread beats.

use std::collections::VecDeque;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::thread;
use std::time::{Duration, Instant};

use mpi::environment::Universe;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::StaticScope;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::{Tag, Threading};

use super::schedule::{Flow, Job};

/// Worker to manager: the worker's process id and host, once at start.
const HELLO: Tag = 1;
/// Manager to worker: a job's index (8 bytes) and what it is.
const TASK: Tag = 2;
/// Worker to manager: still at work.
const BEAT: Tag = 3;
/// Worker to manager: a job's index (8 bytes), whether it panicked (one
/// byte), and its report.
const REPORT: Tag = 4;
/// Manager to worker: no more jobs; one byte, 1 if the worker is to end
/// MPI properly (0 once a rank was lost: `MPI_Finalize` would wait for it).
const QUIT: Tag = 5;

/// How often a working worker beats, and the manager beats to the idle
/// ones.
const BEAT_EVERY: Duration = Duration::from_secs(1);

/// Timeouts a worker waits without a word from the manager before it
/// takes the manager for gone (the manager does not beat between passes,
/// while it reads the directory or prints a summary).
const WORKER_PATIENCE: u32 = 10;

/// Environment variable for the test of a lost worker: `RANK:N` makes that
/// rank die (abort) as soon as it has started its `N`th job.
pub const DIE_VARIABLE: &str = "DODGEM_MPI_TEST_DIE";

/// Environment variable for the test of a worker that comes back: `RANK:N`
/// makes that rank fall silent for the timeout and a second as it starts
/// its `N`th job (which goes on meanwhile), then carry on.
pub const STALL_VARIABLE: &str = "DODGEM_MPI_TEST_STALL";

/// This process's place in an MPI job.
pub struct Cluster {
    /// MPI itself: ended when dropped, or by [`Cluster::end`] (properly,
    /// or not at all after a loss).
    universe: Universe,
    world: SimpleCommunicator,
    /// Silence after which a working worker is counted lost.
    timeout: Duration,
    /// Workers counted lost (manager only).
    lost: std::cell::RefCell<Vec<bool>>,
    /// Whether this rank is to end without `MPI_Finalize`: a rank was
    /// lost, or (for a worker) the manager is gone or said so.
    abandon: std::cell::Cell<bool>,
    /// Lost workers heard from again and told to end (manager only).
    dismissed: std::cell::RefCell<Vec<bool>>,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cluster(rank {} of {})", self.rank(), self.ranks())
    }
}

/// Why the workers could not finish the jobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterError(pub String);

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClusterError {}

impl Cluster {
    /// Joins the MPI job this process was started in (by `mpirun` or
    /// `srun`); a worker counts as lost after `timeout` of silence.
    ///
    /// # Errors
    /// MPI already started, without thread support, or a job of one rank.
    pub fn start(timeout: Duration) -> Result<Cluster, ClusterError> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or_else(|| ClusterError("MPI was started already".into()))?;
        if threading == Threading::Single {
            return Err(ClusterError(
                "this MPI library gives no thread support (MPI_THREAD_FUNNELED is needed)".into(),
            ));
        }
        let world = universe.world();
        let cluster = Cluster {
            lost: std::cell::RefCell::new(vec![false; world.size() as usize]),
            dismissed: std::cell::RefCell::new(vec![false; world.size() as usize]),
            abandon: std::cell::Cell::new(false),
            universe,
            world,
            timeout,
        };
        if cluster.ranks() < 2 {
            return Err(ClusterError(
                "an MPI solve needs at least 2 ranks (rank 0 hands out the pairs, the others \
                 solve them): mpirun -n 3 ..."
                    .into(),
            ));
        }
        Ok(cluster)
    }

    /// This process's rank: 0 is the manager.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// Ranks in the job, the manager included.
    pub fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    /// Whether this rank hands out the jobs.
    pub fn is_manager(&self) -> bool {
        self.rank() == 0
    }

    /// The manager's side of [`super::schedule::run`]: every job of `jobs`
    /// not already `done` is sent, as `task(job)`, to an idle worker once
    /// the jobs it waits for are done (the first ready job in the list
    /// first; `name(job)` in messages); `start(job)` is asked before a job
    /// is first sent, and each report goes to `finished(job, rank,
    /// report)` (`Err` with the message of a worker that panicked). A job
    /// whose worker is lost is sent again to another. Returns once every job has been reported, or once
    /// `start` or `finished` has said [`Flow::Stop`] and the jobs out have
    /// been reported.
    ///
    /// # Errors
    /// Every worker lost with jobs left.
    pub fn manage(
        &self,
        jobs: &[Job],
        mut done: Vec<bool>,
        task: impl Fn(usize) -> Vec<u8>,
        name: impl Fn(usize) -> String,
        mut start: impl FnMut(usize) -> Flow,
        mut finished: impl FnMut(usize, usize, Result<Vec<u8>, String>) -> Flow,
    ) -> Result<(), ClusterError> {
        let ranks = self.ranks();
        // The job each worker has, and when it was last heard from.
        let mut busy: Vec<Option<(usize, Instant)>> = vec![None; ranks];
        let mut hosts: Vec<String> = vec![String::new(); ranks];
        let idle = |busy: &[Option<(usize, Instant)>]| -> Vec<usize> {
            let lost = self.lost.borrow();
            (1..ranks)
                .filter(|&w| busy[w].is_none() && !lost[w])
                .collect()
        };
        let mut sent: Vec<bool> = done.clone();
        let mut asked: Vec<bool> = done.clone();
        // Jobs of lost workers, sent again before any other.
        let mut again: VecDeque<usize> = VecDeque::new();
        let mut stopping = false;
        let mut awake = Instant::now();
        let mut beat = Instant::now();
        loop {
            // Idle workers hear from the manager too, so that they can
            // tell its silence from a wait.
            if beat.elapsed() >= BEAT_EVERY {
                for worker in idle(&busy) {
                    if !self.post(worker, &[0], BEAT, self.timeout) {
                        self.count_lost(worker, &hosts, None);
                    }
                }
                beat = Instant::now();
            }
            for worker in idle(&busy) {
                if stopping {
                    break;
                }
                let ready = again.pop_front().or_else(|| {
                    (0..jobs.len()).find(|&i| !sent[i] && jobs[i].after.iter().all(|&j| done[j]))
                });
                let Some(job) = ready else { break };
                if !asked[job] {
                    asked[job] = true;
                    if start(job) == Flow::Stop {
                        stopping = true;
                        break;
                    }
                }
                sent[job] = true;
                let mut message = (job as u64).to_le_bytes().to_vec();
                message.extend(task(job));
                if !self.post(worker, message.leak(), TASK, self.timeout) {
                    self.count_lost(worker, &hosts, Some(name(job)));
                    again.push_front(job);
                    continue;
                }
                busy[worker] = Some((job, Instant::now()));
            }
            if busy.iter().all(Option::is_none) {
                let left = (0..jobs.len()).any(|i| !done[i]);
                if stopping || !left {
                    return Ok(());
                }
                if (1..ranks).all(|w| self.lost.borrow()[w]) {
                    return Err(ClusterError(format!(
                        "every worker is lost, with {} jobs left: start the job again to go on \
                         from the files written",
                        done.iter().filter(|d| !**d).count()
                    )));
                }
                // Jobs left but none ready and nothing out: cannot be.
                return Err(ClusterError(
                    "jobs left that wait for nothing running".into(),
                ));
            }
            match self.world.any_process().immediate_matched_probe() {
                Some(matched) => {
                    let (bytes, status) = matched.matched_receive_vec::<u8>();
                    let worker = status.source_rank() as usize;
                    if self.lost.borrow()[worker] {
                        self.dismiss(worker);
                        continue;
                    }
                    match status.tag() {
                        HELLO => hosts[worker] = String::from_utf8_lossy(&bytes).into_owned(),
                        BEAT => {
                            if let Some((_, heard)) = &mut busy[worker] {
                                *heard = Instant::now();
                            }
                        }
                        REPORT if bytes.len() >= 9 => {
                            let job = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
                                as usize;
                            busy[worker] = None;
                            done[job] = true;
                            let report = if bytes[8] == 0 {
                                Ok(bytes[9..].to_vec())
                            } else {
                                Err(String::from_utf8_lossy(&bytes[9..]).into_owned())
                            };
                            if finished(job, worker, report) == Flow::Stop {
                                stopping = true;
                            }
                        }
                        tag => log::warn!("rank {worker} sent an unknown message (tag {tag})"),
                    }
                }
                None => thread::sleep(Duration::from_millis(2)),
            }
            // A manager that was not running (the machine asleep, the
            // process stopped) heard nothing meanwhile: the silence is
            // its own, not its workers'.
            if awake.elapsed() > 5 * BEAT_EVERY {
                for (_, heard) in busy.iter_mut().flatten() {
                    *heard = Instant::now();
                }
            }
            awake = Instant::now();
            for (worker, out) in busy.iter_mut().enumerate() {
                let Some((job, heard)) = *out else {
                    continue;
                };
                if heard.elapsed() > self.timeout {
                    *out = None;
                    again.push_back(job);
                    self.count_lost(worker, &hosts, Some(name(job)));
                }
            }
        }
    }

    /// The worker's side: makes each job it is sent with `work(task)` (on
    /// another thread, beating meanwhile) and reports what that returns,
    /// until the manager says there are no more.
    pub fn serve(&self, mut work: impl FnMut(&[u8]) -> Vec<u8> + Send) {
        let manager = self.world.process_at_rank(0);
        let host = mpi::environment::processor_name().unwrap_or_default();
        let hello = format!("pid {} on {host}", std::process::id());
        let patience = WORKER_PATIENCE * self.timeout;
        let gone = || {
            log::warn!("rank {}: rank 0 takes no message: ending", self.rank());
            self.abandon.set(true);
        };
        if !self.post(0, hello.into_bytes().leak(), HELLO, patience) {
            return gone();
        }
        let die_at = test_job(DIE_VARIABLE, self.rank());
        let stall_at = test_job(STALL_VARIABLE, self.rank());
        let mut given = 0;
        let mut heard = Instant::now();
        loop {
            let Some(matched) = manager.immediate_matched_probe() else {
                if heard.elapsed() > WORKER_PATIENCE * self.timeout {
                    // The manager is gone (or this rank was counted lost
                    // and not told): nothing more will come.
                    log::warn!(
                        "rank {}: no word from rank 0 for {:.0} s: ending",
                        self.rank(),
                        heard.elapsed().as_secs_f64()
                    );
                    self.abandon.set(true);
                    return;
                }
                thread::sleep(Duration::from_millis(10));
                continue;
            };
            let (bytes, status) = matched.matched_receive_vec::<u8>();
            heard = Instant::now();
            match status.tag() {
                BEAT => {}
                TASK if bytes.len() >= 8 => {
                    given += 1;
                    let report = thread::scope(|scope| {
                        let work = &mut work;
                        let running = scope
                            .spawn(|| panic::catch_unwind(AssertUnwindSafe(|| work(&bytes[8..]))));
                        if die_at == Some(given) {
                            thread::sleep(Duration::from_millis(20));
                            std::process::abort();
                        }
                        if stall_at == Some(given) {
                            thread::sleep(self.timeout + BEAT_EVERY);
                        }
                        let mut beat = Instant::now();
                        while !running.is_finished() {
                            thread::sleep(Duration::from_millis(10));
                            if beat.elapsed() >= BEAT_EVERY {
                                if !self.post(0, &[0], BEAT, patience) {
                                    gone();
                                    std::process::exit(1);
                                }
                                beat = Instant::now();
                            }
                        }
                        running.join().expect("the job's panic is caught")
                    });
                    let mut message = bytes[..8].to_vec();
                    match report {
                        Ok(report) => {
                            message.push(0);
                            message.extend(report);
                        }
                        Err(payload) => {
                            message.push(1);
                            message.extend(panic_message(&payload).as_bytes());
                        }
                    }
                    if !self.post(0, message.leak(), REPORT, patience) {
                        return gone();
                    }
                    heard = Instant::now();
                }
                QUIT => {
                    self.abandon.set(bytes.first() == Some(&0));
                    return;
                }
                tag => log::warn!(
                    "rank {}: unknown message from the manager (tag {tag})",
                    self.rank()
                ),
            }
        }
    }

    /// Ends this rank's part: the manager tells every worker not lost that
    /// there are no more jobs. MPI is ended properly unless a rank was
    /// lost (then `MPI_Finalize` would wait for it for ever, and the
    /// process ends without it).
    pub fn end(self) {
        if self.is_manager() {
            let lost = self.lost.borrow().clone();
            self.abandon.set(lost.iter().any(|l| *l));
            let quit: &'static [u8] = if self.abandon.get() { &[0] } else { &[1] };
            for worker in (1..self.ranks()).filter(|&w| !lost[w]) {
                if !self.post(worker, quit, QUIT, self.timeout) {
                    // One gone at the very end: no MPI_Finalize here either.
                    self.abandon.set(true);
                }
            }
            if self.abandon.get() {
                // A lost worker that still runs beats within a second or
                // reports: it is told to end too, or it would wait for
                // a task for ever (and the job with it).
                let until = Instant::now() + 3 * BEAT_EVERY;
                while Instant::now() < until {
                    match self.world.any_process().immediate_matched_probe() {
                        Some(matched) => {
                            let (_, status) = matched.matched_receive_vec::<u8>();
                            let worker = status.source_rank() as usize;
                            if lost[worker] {
                                self.dismiss(worker);
                            }
                        }
                        None => thread::sleep(Duration::from_millis(10)),
                    }
                }
            }
        }
        if self.abandon.get() {
            std::mem::forget(self.universe);
        }
    }
}

impl Cluster {
    /// Tells a lost worker heard from again to end, without
    /// `MPI_Finalize` (once).
    fn dismiss(&self, worker: usize) {
        let mut dismissed = self.dismissed.borrow_mut();
        if !dismissed[worker] {
            dismissed[worker] = true;
            log::warn!("rank {worker}, counted lost, is heard from again: told to end");
            self.post(worker, &[0], QUIT, self.timeout);
        }
    }

    /// Counts `worker` lost (with the job it was on, named), and says so.
    fn count_lost(&self, worker: usize, hosts: &[String], job: Option<String>) {
        self.lost.borrow_mut()[worker] = true;
        let host = &hosts[worker];
        let silent = self.timeout.as_secs_f64();
        match job {
            Some(job) => log::warn!(
                "rank {worker} ({host}) silent for {silent:.0} s while on {job}: counted lost, its \
                 pair goes to another rank"
            ),
            None => log::warn!("rank {worker} ({host}) silent for {silent:.0} s: counted lost"),
        }
    }

    /// Sends `message` to `rank`; false if it is not taken `within` that
    /// time (a rank that is gone), and then given up. MPI keeps a message
    /// given up for ever, which is why messages are `'static`: the few
    /// that are made for one send (a task, a report) are leaked, some
    /// hundred bytes a pair.
    fn post(&self, rank: usize, message: &'static [u8], tag: Tag, within: Duration) -> bool {
        let started = Instant::now();
        let mut request = self
            .world
            .process_at_rank(rank as i32)
            .immediate_send_with_tag(StaticScope, message, tag);
        loop {
            match request.test() {
                Ok(_) => return true,
                Err(pending) if started.elapsed() < within => {
                    request = pending;
                    thread::sleep(Duration::from_micros(200));
                }
                Err(pending) => {
                    std::mem::forget(pending);
                    return false;
                }
            }
        }
    }
}

/// The job number at which `rank` is to do what the test `variable` asks
/// ([`DIE_VARIABLE`], [`STALL_VARIABLE`]).
fn test_job(variable: &str, rank: usize) -> Option<usize> {
    let value = std::env::var(variable).ok()?;
    let (who, n) = value.split_once(':')?;
    (who.parse::<usize>().ok()? == rank)
        .then(|| n.parse().ok())
        .flatten()
}

/// What a panic said.
fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a worker thread panicked".into())
}
