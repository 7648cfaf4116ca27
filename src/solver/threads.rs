//! The solver's threads: [`parallel`] runs units of work on several, and
//! [`Cores`] lets the jobs of one run (the layer pairs made side by side,
//! [`schedule`](super::run::schedule)) share them. A job holds one thread
//! for as long as it runs; each of its [`parallel`] calls borrows the
//! threads no job holds as helpers, and gives them back when the call
//! ends, or after the unit in hand when a job waits to start. So a pair
//! that runs by itself (the next one waits for its layers ahead, or for
//! memory) takes the thread the other pair would have used, and a pair
//! that becomes ready gets its thread within a unit of work.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::{Scope, ScopedJoinHandle};

use crossbeam_channel::Sender;

/// The threads of one run, shared by its jobs.
pub(super) struct Cores {
    /// Threads that neither a job nor a helper holds.
    idle: AtomicUsize,
    /// A job is ready to start and waits for a thread: no helper is lent,
    /// and helpers give theirs back.
    wanted: AtomicBool,
    /// Told when a thread is given back while one is wanted.
    freed: Sender<()>,
}

impl Cores {
    /// `threads` threads, all idle; `freed` is told when a helper gives
    /// one back while a job waits.
    pub(super) fn new(threads: usize, freed: Sender<()>) -> Arc<Cores> {
        Arc::new(Cores {
            idle: AtomicUsize::new(threads),
            wanted: AtomicBool::new(false),
            freed,
        })
    }

    /// Takes an idle thread for a job to start on. Where there is none,
    /// marks one wanted (so that helpers give theirs back) and says so.
    pub(super) fn take_for_job(&self) -> bool {
        if self.take(1) == 1 {
            return true;
        }
        self.wanted.store(true, Ordering::SeqCst);
        // A helper that gave its thread back before it saw the want told
        // no one: try once more.
        self.take(1) == 1
    }

    /// Whether a job waits for a thread; the scheduler clears this when
    /// it starts the job or no longer waits.
    pub(super) fn want(&self, wanted: bool) {
        self.wanted.store(wanted, Ordering::SeqCst);
    }

    /// The thread of a job that has finished.
    pub(super) fn job_done(&self) {
        self.idle.fetch_add(1, Ordering::SeqCst);
    }

    /// Runs `work` with these as the cores its [`parallel`] calls (and
    /// theirs, and those of threads it starts with [`spawn`]) borrow from.
    pub(super) fn enter<R>(self: &Arc<Self>, work: impl FnOnce() -> R) -> R {
        let before = CURRENT.with(|current| current.replace(Some(self.clone())));
        let result = work();
        CURRENT.with(|current| current.replace(before));
        result
    }

    /// Up to `n` idle threads taken; how many.
    fn take(&self, n: usize) -> usize {
        let mut idle = self.idle.load(Ordering::SeqCst);
        loop {
            let taken = idle.min(n);
            if taken == 0 {
                return 0;
            }
            match self.idle.compare_exchange_weak(
                idle,
                idle - taken,
                Ordering::SeqCst,
                Ordering::SeqCst,
            ) {
                Ok(_) => return taken,
                Err(now) => idle = now,
            }
        }
    }

    /// Up to `n` helpers' threads, none while a job waits for one.
    fn lend(&self, n: usize) -> usize {
        if n == 0 || self.wanted() {
            0
        } else {
            self.take(n)
        }
    }

    /// A helper's thread back.
    fn give_back(&self) {
        self.idle.fetch_add(1, Ordering::SeqCst);
        if self.wanted() {
            // The scheduler outlives every job; if it has stopped
            // listening, no job waits.
            let _ = self.freed.send(());
        }
    }

    fn wanted(&self) -> bool {
        self.wanted.load(Ordering::SeqCst)
    }
}

thread_local! {
    /// The cores this thread's [`parallel`] calls borrow from, if any.
    static CURRENT: RefCell<Option<Arc<Cores>>> = const { RefCell::new(None) };
}

fn current() -> Option<Arc<Cores>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Starts `work` on a thread of `scope` that borrows from the same cores
/// as this one.
pub(super) fn spawn<'scope, T: Send + 'scope>(
    scope: &'scope Scope<'scope, '_>,
    work: impl FnOnce() -> T + Send + 'scope,
) -> ScopedJoinHandle<'scope, T> {
    let cores = current();
    scope.spawn(move || match cores {
        Some(cores) => cores.enter(work),
        None => work(),
    })
}

/// Runs `work(unit)` for units `0..units` on up to `threads` threads, the
/// calling one among them; each thread gathers what `work` pushes, and
/// the results are concatenated (in no fixed order). Inside a job of a
/// run that shares its threads ([`Cores`]), the threads beyond the
/// caller's are those idle, and each leaves after its unit once a job
/// waits to start.
pub(super) fn parallel<T: Send>(
    threads: usize,
    units: usize,
    work: impl Fn(usize, &mut Vec<T>) + Sync,
) -> Vec<T> {
    let helpers = threads.clamp(1, units.max(1)) - 1;
    let cores = current();
    let helpers = match &cores {
        Some(cores) => cores.lend(helpers),
        None => helpers,
    };
    let next_unit = AtomicUsize::new(0);
    let next = || {
        let unit = next_unit.fetch_add(1, Ordering::Relaxed);
        (unit < units).then_some(unit)
    };
    let mut gathered = Vec::new();
    if helpers == 0 {
        // No thread to start for one unit or one thread.
        while let Some(unit) = next() {
            work(unit, &mut gathered);
        }
        return gathered;
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..helpers)
            .map(|_| {
                let cores = cores.clone();
                let (next, work) = (&next, &work);
                scope.spawn(move || {
                    let mut out = Vec::new();
                    let called = || cores.as_ref().is_some_and(|cores| cores.wanted());
                    while !called() {
                        let Some(unit) = next() else { break };
                        work(unit, &mut out);
                    }
                    if let Some(cores) = &cores {
                        cores.give_back();
                    }
                    out
                })
            })
            .collect();
        while let Some(unit) = next() {
            work(unit, &mut gathered);
        }
        for handle in handles {
            gathered.extend(handle.join().expect("solver thread panicked"));
        }
    });
    gathered
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The most units of `calls` calls of [`parallel`] (one after the
    /// other, `threads` each) that ran at once, under `cores` if given.
    fn most_at_once(cores: Option<&Arc<Cores>>, threads: usize, calls: usize) -> usize {
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let run = || {
            for _ in 0..calls {
                let done = parallel(threads, 8, |unit, out| {
                    let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(at_once, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(10));
                    now.fetch_sub(1, Ordering::SeqCst);
                    out.push(unit);
                });
                let mut done = done;
                done.sort_unstable();
                assert_eq!(done, (0..8).collect::<Vec<_>>(), "every unit once");
            }
        };
        match cores {
            Some(cores) => cores.enter(run),
            None => run(),
        }
        most.into_inner()
    }

    #[test]
    fn without_cores_a_call_takes_the_threads_it_asks_for() {
        assert_eq!(most_at_once(None, 3, 1), 3);
        assert_eq!(most_at_once(None, 1, 1), 1);
    }

    #[test]
    fn a_job_borrows_only_the_idle_threads_and_gives_them_back() {
        let (freed, _) = crossbeam_channel::unbounded();
        let cores = Cores::new(3, freed);
        assert!(cores.take_for_job(), "this job's own thread");
        // Two idle: the call runs on three threads, however many it asks.
        assert_eq!(most_at_once(Some(&cores), 8, 2), 3);
        assert_eq!(
            cores.idle.load(Ordering::SeqCst),
            2,
            "the helpers came back"
        );
        // Another job holds one: one helper is left.
        assert!(cores.take_for_job());
        assert_eq!(most_at_once(Some(&cores), 8, 1), 2);
        assert!(cores.take_for_job());
        assert_eq!(most_at_once(Some(&cores), 8, 1), 1, "no thread idle");
        assert!(!cores.take_for_job(), "every thread held");
        cores.want(false);
    }

    #[test]
    fn a_waiting_job_is_lent_no_helper_and_gets_one_back() {
        let (freed, freed_told) = crossbeam_channel::unbounded();
        let cores = Cores::new(2, freed);
        assert!(cores.take_for_job());
        let (taken, units_done) = (AtomicUsize::new(0), AtomicUsize::new(0));
        std::thread::scope(|scope| {
            let helper_out = scope.spawn(|| {
                cores.enter(|| {
                    parallel(2, 400, |_, _: &mut Vec<()>| {
                        std::thread::sleep(Duration::from_millis(5));
                        units_done.fetch_add(1, Ordering::SeqCst);
                    })
                })
            });
            // Wait until the helper has the second thread, then ask for it.
            while cores.idle.load(Ordering::SeqCst) > 0 && !helper_out.is_finished() {
                std::thread::yield_now();
            }
            if !cores.take_for_job() {
                freed_told
                    .recv_timeout(Duration::from_secs(60))
                    .expect("the helper gives its thread back");
                assert!(cores.take_for_job(), "the thread given back is taken");
                // After a unit of the helper's, not at the end of the call.
                let done = units_done.load(Ordering::SeqCst);
                assert!(done < 300, "the helper left after {done} units of 400");
            }
            taken.store(1, Ordering::SeqCst);
            cores.want(false);
        });
        assert_eq!(taken.into_inner(), 1);
        assert_eq!(
            cores.idle.load(Ordering::SeqCst),
            0,
            "both jobs hold theirs"
        );
    }

    #[test]
    fn threads_started_inside_a_job_borrow_from_its_cores() {
        let (freed, _) = crossbeam_channel::unbounded();
        let cores = Cores::new(2, freed);
        assert!(cores.take_for_job());
        assert!(cores.take_for_job());
        let most = cores.enter(|| {
            std::thread::scope(|scope| {
                spawn(scope, || most_at_once(None, 4, 1))
                    .join()
                    .expect("the thread runs")
            })
        });
        // `most_at_once(None, ..)` enters no cores of its own: the spawned
        // thread's are the job's, with none idle.
        assert_eq!(most, 1);
    }
}
