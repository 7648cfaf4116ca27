//! Which layer pair is worked on when, and with how many threads.
//!
//! A pair waits only for the pairs its forward moves reach, so many pairs
//! are ready at once (all those of one total progress, for a start). The
//! pairs run side by side, a thread each, as many as the memory allows;
//! a pair too large to share the memory runs alone. The threads are
//! shared ([`Cores`]): a pair's work spreads over the threads no other
//! pair holds, so one running by itself (alone, or while the next pair
//! waits for its layers ahead or for memory) takes them all.
//!
//! Jobs start in their order in the list: the first ready job that does
//! not fit waits for room, and no later job overtakes it.

use std::panic::{self, AssertUnwindSafe};
use std::thread;

use crate::solver::threads::Cores;

/// One job: the jobs it waits for, and the memory it needs.
#[derive(Clone, Debug)]
pub struct Job {
    pub after: Vec<usize>,
    pub bytes: u64,
}

/// What the jobs may use at once, and whether they start strictly in
/// their order (`in_order`: so that which jobs have started when a run
/// stops does not depend on which finished first).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub threads: usize,
    pub bytes: u64,
    pub in_order: bool,
}

/// Whether to start more jobs after one has finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// Start no new job; the running ones finish.
    Stop,
}

/// Runs `work(job, threads)` for every job of `jobs` not already `done`,
/// each once the jobs it waits for are done, and hands each result to
/// `finished` in the calling thread as it comes. `threads` is the most a
/// job's work spreads over; it gets those no other job holds
/// ([`Cores`]). `start(job)` is asked (in the calling thread) before a job
/// starts. Returns once every job has run, or once `start` or `finished`
/// has said [`Flow::Stop`] and the running jobs have finished.
pub fn run<T: Send>(
    jobs: &[Job],
    mut done: Vec<bool>,
    budget: Budget,
    work: impl Fn(usize, usize) -> T + Sync,
    mut start: impl FnMut(usize) -> Flow,
    mut finished: impl FnMut(usize, T) -> Flow,
) {
    let threads = budget.threads.max(1);
    // A job too large to share the memory (or any job, with one thread)
    // runs alone.
    let alone = |job: &Job| threads == 1 || job.bytes > budget.bytes / threads as u64;
    let mut started: Vec<bool> = done.clone();
    let (sender, receiver) = crossbeam_channel::unbounded();
    let (freed, thread_freed) = crossbeam_channel::unbounded();
    let cores = Cores::new(threads, freed);
    thread::scope(|scope| {
        let mut running = 0usize;
        let mut running_bytes = 0u64;
        let mut running_alone = false;
        let mut stopping = false;
        loop {
            let mut waiting_for_a_thread = false;
            while !stopping && !running_alone {
                let ready = |i: usize| jobs[i].after.iter().all(|&j| done[j]);
                let next = if budget.in_order {
                    (0..jobs.len()).find(|&i| !started[i]).filter(|&i| ready(i))
                } else {
                    (0..jobs.len()).find(|&i| !started[i] && ready(i))
                };
                let Some(i) = next else { break };
                let job = &jobs[i];
                let fits = if alone(job) {
                    running == 0
                } else {
                    running == 0 || running_bytes + job.bytes <= budget.bytes
                };
                if !fits {
                    break;
                }
                if !cores.take_for_job() {
                    waiting_for_a_thread = true;
                    break;
                }
                if start(i) == Flow::Stop {
                    cores.job_done();
                    stopping = true;
                    break;
                }
                started[i] = true;
                running_alone = alone(job);
                running += 1;
                running_bytes += job.bytes;
                let sender = sender.clone();
                let (work, cores) = (&work, cores.clone());
                scope.spawn(move || {
                    // A job that panics still reports, so that nothing
                    // waits for it; the panic goes on from here.
                    let result =
                        panic::catch_unwind(AssertUnwindSafe(|| cores.enter(|| work(i, threads))));
                    // The receiver lives until every job has reported.
                    let _ = sender.send((i, result));
                });
            }
            cores.want(waiting_for_a_thread);
            if running == 0 {
                break;
            }
            crossbeam_channel::select! {
                recv(receiver) -> message => {
                    let (i, result) = message.expect("a running job reports");
                    cores.job_done();
                    let result = result.unwrap_or_else(|payload| panic::resume_unwind(payload));
                    running -= 1;
                    running_bytes -= jobs[i].bytes;
                    running_alone = false;
                    done[i] = true;
                    if finished(i, result) == Flow::Stop {
                        stopping = true;
                    }
                }
                // A helper's thread given back: a waiting job may start.
                recv(thread_freed) -> _ => {}
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const TWO_THREADS: Budget = Budget {
        threads: 2,
        bytes: 100,
        in_order: false,
    };

    /// A chain 0 <- 1 <- 2 and two free jobs 3, 4.
    fn jobs(bytes: [u64; 5]) -> Vec<Job> {
        let after = [vec![], vec![0], vec![1], vec![], vec![]];
        after
            .into_iter()
            .zip(bytes)
            .map(|(after, bytes)| Job { after, bytes })
            .collect()
    }

    #[test]
    fn every_job_runs_once_after_the_jobs_it_waits_for() {
        let order = Mutex::new(Vec::new());
        let mut reported = Vec::new();
        run(
            &jobs([1; 5]),
            vec![false; 5],
            TWO_THREADS,
            |i, threads| {
                assert_eq!(threads, 2, "a job's work may spread over every thread");
                order.lock().unwrap().push(i);
                i * 10
            },
            |_| Flow::Continue,
            |i, result| {
                assert_eq!(result, i * 10);
                reported.push(i);
                Flow::Continue
            },
        );
        let order = order.into_inner().unwrap();
        let at = |i| order.iter().position(|&j| j == i).unwrap();
        assert!(at(0) < at(1) && at(1) < at(2));
        reported.sort();
        assert_eq!(reported, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_large_job_runs_alone_on_every_thread() {
        let running = AtomicUsize::new(0);
        let mut seen = Vec::new();
        run(
            &jobs([1, 80, 1, 1, 1]),
            vec![false; 5],
            TWO_THREADS,
            |i, threads| {
                let others = running.fetch_add(1, Ordering::SeqCst);
                assert_eq!(threads, 2);
                if i == 1 {
                    assert_eq!(others, 0, "the large job runs alone");
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
                running.fetch_sub(1, Ordering::SeqCst);
            },
            |_| Flow::Continue,
            |i, ()| {
                seen.push(i);
                Flow::Continue
            },
        );
        assert_eq!(seen.len(), 5);
    }

    /// The jobs' work, counted: never more units at once than threads, and
    /// a job running by itself (the others wait for it, or for memory)
    /// spreads over both.
    #[test]
    fn the_jobs_share_the_threads_and_one_by_itself_takes_them_all() {
        // Jobs 1 and 2 wait for 0 and 1; 3 and 4 have no work. 3 runs
        // beside 0; 4, too large to share the memory, waits for 0, 1 and
        // 2 (they come first in the list), so 1 and 2 run by themselves.
        let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let by_itself = Mutex::new(Vec::new());
        run(
            &jobs([10, 10, 10, 10, 85]),
            vec![false; 5],
            Budget {
                bytes: 100,
                ..TWO_THREADS
            },
            |i, threads| {
                if i >= 3 {
                    return;
                }
                let job_most = AtomicUsize::new(0);
                let job_now = AtomicUsize::new(0);
                for _ in 0..3 {
                    crate::solver::parallel(threads, 6, |_, _: &mut Vec<()>| {
                        let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(at_once, Ordering::SeqCst);
                        let mine = job_now.fetch_add(1, Ordering::SeqCst) + 1;
                        job_most.fetch_max(mine, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        job_now.fetch_sub(1, Ordering::SeqCst);
                        now.fetch_sub(1, Ordering::SeqCst);
                    });
                }
                if job_most.into_inner() == 2 {
                    by_itself.lock().unwrap().push(i);
                }
            },
            |_| Flow::Continue,
            |_, ()| Flow::Continue,
        );
        assert!(most.into_inner() <= 2, "no more work at once than threads");
        let by_itself = by_itself.into_inner().unwrap();
        assert!(
            by_itself.contains(&1) && by_itself.contains(&2),
            "{by_itself:?}"
        );
    }

    /// In order, a free job waits for the chain before it to start, so
    /// the jobs start in their order whatever finishes first.
    #[test]
    fn jobs_in_order_start_in_their_order() {
        for _ in 0..20 {
            let mut starts = Vec::new();
            run(
                &jobs([1; 5]),
                vec![false; 5],
                Budget {
                    in_order: true,
                    ..TWO_THREADS
                },
                |i, _| std::thread::sleep(std::time::Duration::from_millis(5 - i as u64)),
                |i| {
                    starts.push(i);
                    Flow::Continue
                },
                |_, ()| Flow::Continue,
            );
            assert_eq!(starts, [0, 1, 2, 3, 4]);
        }
    }

    #[test]
    fn done_jobs_are_skipped_and_a_stop_starts_nothing_new() {
        let ran = Mutex::new(Vec::new());
        run(
            &jobs([1; 5]),
            vec![true, false, false, false, false],
            Budget {
                threads: 1,
                bytes: 100,
                in_order: false,
            },
            |i, threads| {
                assert_eq!(threads, 1);
                ran.lock().unwrap().push(i);
            },
            |_| Flow::Continue,
            |_, ()| Flow::Stop,
        );
        // One thread: job 1 (its wait is over) starts first, and the stop
        // after it starts nothing else.
        assert_eq!(ran.into_inner().unwrap(), [1]);
        // A start refused starts nothing.
        let mut asked = Vec::new();
        run(
            &jobs([1; 5]),
            vec![false; 5],
            TWO_THREADS,
            |_, _| panic!("no job may start"),
            |i| {
                asked.push(i);
                Flow::Stop
            },
            |_, ()| Flow::Continue,
        );
        assert_eq!(asked, [0]);
    }

    #[test]
    fn a_job_that_panics_does_not_leave_the_run_waiting() {
        let outcome = std::panic::catch_unwind(|| {
            run(
                &jobs([1; 5]),
                vec![false; 5],
                TWO_THREADS,
                |i, _| assert_ne!(i, 3, "job 3 fails"),
                |_| Flow::Continue,
                |_, ()| Flow::Continue,
            )
        });
        assert!(outcome.is_err(), "the panic reaches the caller");
    }
}
