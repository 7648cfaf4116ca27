//! `dodgem solve --mpi` (a build with the `mpi` feature) under OpenMPI's
//! `mpirun`: a solve over several ranks writes the files of a solve in
//! one process, byte for byte; a worker that dies mid-pair, or a job
//! stopped and started again, changes none of them; a check over ranks
//! finds what a check in one process finds. Run with
//! `cargo test --features mpi --test tests mpi::` (CI does).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::common::{BIN, Output, files_of, run, run_command, scratch, shared};

/// A bound on one small solve, far above what it takes.
const TIMEOUT: Duration = Duration::from_secs(300);

/// Runs `mpirun --enable-recovery -n <ranks> dodgem solve --mpi <args>`
/// (one thread a rank unless `args` says, and `name=value` in every rank's
/// environment, if given).
fn mpirun(ranks: usize, args: &[&str], env: Option<(&str, &str)>) -> Output {
    mpirun_with(ranks, args, env, true)
}

/// [`mpirun`], with `--enable-recovery` (a lost rank does not end the
/// job) or without it: under OpenMPI 4.1 a job with it ends with status 0
/// whatever its ranks end with, so a failure's status is seen only
/// without it.
fn mpirun_with(ranks: usize, args: &[&str], env: Option<(&str, &str)>, recovery: bool) -> Output {
    let mut command = Command::new("mpirun");
    // Root in containers; more ranks than cores.
    command.args(["--allow-run-as-root", "--oversubscribe"]);
    if recovery {
        command.arg("--enable-recovery");
    }
    command.args(["-n", &ranks.to_string()]);
    if let Some((name, value)) = env {
        command.env(name, value).args(["-x", name]);
    }
    command
        .env_remove("RUST_LOG")
        .arg(BIN)
        .args(["solve", "--mpi"])
        .args(args);
    if !args.contains(&"--threads") {
        command.args(["--threads", "1"]);
    }
    run_command(command, TIMEOUT)
}

/// Every file of `dir` by name with its bytes, leaving out the
/// temporary files a killed process can leave (the next run removes them).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = files_of(dir);
    files.retain(|name, _| !name.ends_with(".tmp"));
    files
}

/// The files of `args` solved by one process, in a fresh directory.
fn solved_alone(name: &str, args: &[&str]) -> BTreeMap<String, Vec<u8>> {
    let dir = scratch(name);
    let out = dir.to_str().unwrap();
    let output = run(
        &[&["solve", "--out", out, "--quiet"], args].concat(),
        TIMEOUT,
    );
    assert!(output.status.success(), "{}", output.stderr);
    let found = files(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    found
}

/// A fresh directory of the table set of `alone` (its manifest), so that
/// a solve into it writes the same bytes: every layer file is bound to
/// its directory's set.
fn scratch_like(name: &str, alone: &BTreeMap<String, Vec<u8>>) -> std::path::PathBuf {
    let dir = scratch(name);
    std::fs::write(
        dir.join(dodgem::solver::MANIFEST),
        &alone[dodgem::solver::MANIFEST],
    )
    .unwrap();
    dir
}

/// The `positions per side to move` line of a solve's summary.
fn positions_line(stdout: &str) -> &str {
    stdout
        .lines()
        .find(|line| line.starts_with("positions per side to move"))
        .unwrap_or_else(|| panic!("no count in\n{stdout}"))
}

#[test]
fn ranks_write_the_files_of_one_process() {
    let _cpu = shared();
    let boards: [(&str, &[&str]); 3] = [
        ("4-textbook", &["--size", "4"]),
        ("4-classic", &["--size", "4", "--rules", "classic"]),
        ("6-two-cars", &["--size", "6", "--max-cars", "2"]),
    ];
    for (name, args) in boards {
        let alone = solved_alone(&format!("mpi-alone-{name}"), args);
        assert!(alone.len() > 10, "{name}: {} files", alone.len());
        // Two ranks with two threads each: threads still work in a rank.
        for (ranks, threads) in [(2, "2"), (3, "1"), (4, "1")] {
            let dir = scratch_like(&format!("mpi-{name}-{ranks}"), &alone);
            let out = dir.to_str().unwrap();
            let output = mpirun(
                ranks,
                &[args, &["--out", out, "--threads", threads]].concat(),
                None,
            );
            assert!(
                output.status.success(),
                "{name}, {ranks} ranks:\n{}",
                output.stderr
            );
            assert!(
                output.stderr.contains(&format!(
                    "MPI: rank 0 hands out the layer pairs to {} workers",
                    ranks - 1
                )),
                "{}",
                output.stderr
            );
            // Every pair's line names the rank that made it.
            assert!(
                output.stderr.contains(", rank 1, peak "),
                "{}",
                output.stderr
            );
            positions_line(&output.stdout);
            let made = files(&dir);
            assert_eq!(
                made.keys().collect::<Vec<_>>(),
                alone.keys().collect::<Vec<_>>(),
                "{name}, {ranks} ranks: other files"
            );
            for (file, bytes) in &made {
                assert!(
                    bytes == &alone[file],
                    "{name}, {ranks} ranks: {file} differs"
                );
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// Solves `args` with 3 ranks, a timeout of 2 s and `test` (a test
/// variable of the cluster and its value) in every rank's environment:
/// the job must end well, say each of `needles` on stderr, and leave the
/// files of one process. Returns what it printed.
fn solve_losing_a_worker(
    name: &str,
    args: &[&str],
    test: (&str, &str),
    needles: &[&str],
) -> Output {
    let alone = solved_alone(&format!("{name}-alone"), args);
    let dir = scratch_like(name, &alone);
    let out = dir.to_str().unwrap();
    let output = mpirun(
        3,
        &[args, &["--out", out, "--mpi-timeout", "2"]].concat(),
        Some(test),
    );
    assert!(output.status.success(), "{}", output.stderr);
    for expected in needles {
        assert!(
            output.stderr.contains(expected),
            "{expected:?} missing from\n{}",
            output.stderr
        );
    }
    assert_eq!(files(&dir), alone, "the files differ from one process's");
    std::fs::remove_dir_all(&dir).unwrap();
    output
}

#[test]
fn a_worker_that_dies_mid_pair_changes_no_file() {
    let _cpu = shared();
    // Rank 1 dies as soon as it has started its fifth pair; silent for two
    // seconds, it is counted lost and the pair goes to rank 2.
    let output = solve_losing_a_worker(
        "mpi-die",
        &["--size", "4", "--rules", "classic"],
        ("DODGEM_MPI_TEST_DIE", "1:5"),
        &[
            "rank 1 (pid ",
            "counted lost, its pair goes to another rank",
        ],
    );
    assert!(
        output.stdout.contains("start (Black to move)"),
        "{}",
        output.stdout
    );
}

#[test]
fn a_worker_silent_past_the_timeout_is_told_to_end_when_it_comes_back() {
    let _cpu = shared();
    // Rank 2 falls silent for 3 s as it starts its third pair: counted
    // lost after 2 s, its pair goes to rank 1; when it reports (at the
    // latest while the manager listens for 3 s at the end), it is told to
    // end, and the job ends.
    solve_losing_a_worker(
        "mpi-stall",
        &["--size", "4"],
        ("DODGEM_MPI_TEST_STALL", "2:3"),
        &[
            "rank 2 (pid ",
            "counted lost, its pair goes to another rank",
            "rank 2, counted lost, is heard from again: told to end",
        ],
    );
}

#[test]
fn a_stopped_job_resumes_from_its_files() {
    let _cpu = shared();
    let args = ["--size", "4"];
    let alone = solved_alone("mpi-resume-alone", &args);
    let dir = scratch_like("mpi-resume", &alone);
    let out = dir.to_str().unwrap();
    let output = mpirun(
        3,
        &[&args[..], &["--out", out, "--stop-after-layers", "20"]].concat(),
        None,
    );
    assert!(output.status.success(), "{}", output.stderr);
    assert!(
        output.stdout.contains("run the same command to continue"),
        "{}",
        output.stdout
    );
    let output = mpirun(3, &[&args[..], &["--out", out]].concat(), None);
    assert!(output.status.success(), "{}", output.stderr);
    assert!(output.stderr.contains("resuming: "), "{}", output.stderr);
    assert_eq!(files(&dir), alone, "the files differ from one process's");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_distances_to_the_end_are_added_over_ranks_too() {
    let _cpu = shared();
    // One process: the value pass (`--no-distances`), then `--dte`.
    let alone = {
        let dir = scratch("mpi-dte-alone");
        let out = dir.to_str().unwrap();
        let args = ["--size", "4", "--rules", "classic", "--no-distances"];
        let output = run(
            &[&["solve", "--out", out, "--quiet"][..], &args].concat(),
            TIMEOUT,
        );
        assert!(output.status.success(), "{}", output.stderr);
        let output = run(&["solve", "--dte", out, "--quiet"], TIMEOUT);
        assert!(output.status.success(), "{}", output.stderr);
        let found = files(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        found
    };
    let dir = scratch("mpi-dte");
    for (name, bytes) in alone.iter().filter(|(name, _)| !name.ends_with(".dte")) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let output = mpirun(3, &["--dte", dir.to_str().unwrap()], None);
    assert!(output.status.success(), "{}", output.stderr);
    assert!(
        output.stderr.contains(", rank 1, peak "),
        "{}",
        output.stderr
    );
    assert!(
        output.stdout.contains("longest win 41 plies"),
        "{}",
        output.stdout
    );
    assert_eq!(files(&dir), alone, "the files differ from one process's");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The summary line of a check (`verified ...` or the error), without
/// the time it took.
fn checked(output: &Output) -> String {
    let text = format!("{}{}", output.stdout, output.stderr);
    let line = text
        .lines()
        .find(|line| line.starts_with("verified ") || line.contains("disagree with"))
        .unwrap_or_else(|| panic!("no summary in\n{text}"));
    line.split(" (").next().unwrap().to_string()
}

#[test]
fn a_check_over_ranks_finds_what_one_process_finds() {
    let _cpu = shared();
    // Tables of the value pass with their distances to the end added:
    // both metrics to check.
    let dir = scratch("mpi-verify");
    let path = dir.to_str().unwrap();
    let args = ["--size", "4", "--rules", "classic", "--no-distances"];
    let output = run(
        &[&["solve", "--out", path, "--quiet"][..], &args].concat(),
        TIMEOUT,
    );
    assert!(output.status.success(), "{}", output.stderr);
    let output = run(&["solve", "--dte", path, "--quiet"], TIMEOUT);
    assert!(output.status.success(), "{}", output.stderr);
    let alone = run(&["solve", "--verify", path, "--quiet"], TIMEOUT);
    assert!(alone.status.success(), "{}", alone.stderr);
    let over_ranks = mpirun(3, &["--verify", path, "--quiet"], None);
    assert!(over_ranks.status.success(), "{}", over_ranks.stderr);
    assert_eq!(checked(&over_ranks), checked(&alone));
    assert!(
        checked(&alone).contains("and their distances to the end in 144 layers"),
        "{}",
        checked(&alone)
    );

    // One value changed: the ranks find it and name it, and their journal
    // (kept by rank 0) records every pair, each metric once.
    let kind = dodgem::solver::Kind {
        size: 4,
        rules: dodgem::board::Rules::Classic,
        max_cars: 3,
    };
    crate::layered::falsify(&dir, kind, 4, 5);
    let alone = run(&["solve", "--verify", path, "--quiet"], TIMEOUT);
    assert!(!alone.status.success());
    let journal = dir.with_extension("journal");
    let _ = std::fs::remove_file(&journal);
    let journal_arg = journal.to_str().unwrap();
    let over_ranks = mpirun_with(
        3,
        &["--verify", path, "--quiet", "--journal", journal_arg],
        None,
        false,
    );
    assert!(!over_ranks.status.success(), "{}", over_ranks.stdout);
    assert_eq!(checked(&over_ranks), checked(&alone));
    assert!(
        over_ranks.stdout.contains("mismatch: layer 004-005"),
        "{}",
        over_ranks.stdout
    );
    let recorded = std::fs::read_to_string(&journal).unwrap();
    let pairs: Vec<&str> = recorded.lines().skip(1).collect();
    let distinct: std::collections::BTreeSet<&str> = pairs
        .iter()
        .map(|line| line.split(" positions ").next().unwrap())
        .collect();
    assert_eq!(distinct.len(), pairs.len(), "a pair recorded twice");
    assert!(
        pairs.iter().any(|l| l.contains(".dte ")) && pairs.len() > 100,
        "{recorded}"
    );

    // Started again, the journal answers for every pair: nothing is sent
    // to the workers, nothing is added, and the mismatch is still reported.
    let again = mpirun(
        3,
        &["--verify", path, "--quiet", "--journal", journal_arg],
        None,
    );
    assert_eq!(checked(&again), checked(&alone));
    assert_eq!(std::fs::read_to_string(&journal).unwrap(), recorded);
    std::fs::remove_file(&journal).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
