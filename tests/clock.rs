//! The time manager under a real clock: a game whose clock drains to the
//! increment still never loses on time, as the last part of the clock is
//! never planned for; a race decided at the root is played at once.

use std::time::Duration;

use crate::common::{
    Engine, LOAD_SLACK, LONG, best_move, info_score, info_value, is_bestmove, is_search_info,
    shared, timing,
};

/// A 7 x 7 game at 0.3 s + 0.02 s a side, charged as a referee does (from
/// `go` sent to `bestmove` read). What the engine controls is its own time
/// from reading `go` to writing `bestmove` (`debug on` reports it): that
/// must stay inside the clock on every move. The harness's figure adds the
/// pipes and, on a busy machine, the time the engine's process waits for
/// a core: it is held to the clock plus [`LOAD_SLACK`] (a move that overran
/// its clock by design would overrun it by far more, every time). The
/// next clock is charged the harness's figure, as a referee's is, so a
/// delay the machine adds leaves the engine less time, as it would in a
/// match. The game may end before the last ply (a threefold repetition,
/// on some runs): the engine then answers `bestmove (none)`.
#[test]
fn a_short_clock_with_increment_never_flags() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send_all(&["debug on", "setoption name BoardSize value 7", "ucinewgame"]);
    let increment = Duration::from_millis(20);
    let mut clocks = [Duration::from_millis(300); 2];
    let mut moves: Vec<String> = Vec::new();
    let mut lowest = Duration::MAX;
    let mut slowest = Duration::ZERO;
    for ply in 0..60 {
        let side = ply % 2;
        let position = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {}", moves.join(" "))
        };
        engine.send(&position);
        let millis = |clock: Duration| clock.as_millis();
        let timed = engine.timed_go(&format!(
            "go btime {} wtime {} binc {} winc {}",
            millis(clocks[0]),
            millis(clocks[1]),
            millis(increment),
            millis(increment)
        ));
        assert!(
            timed.own < clocks[side],
            "ply {ply}: the engine took {:?} by its own clock with {:?} on the clock",
            timed.own,
            clocks[side]
        );
        assert!(
            timed.wall < clocks[side] + LOAD_SLACK,
            "ply {ply}: the move took {:?} ({:?} by the engine's clock) with {:?} on the clock",
            timed.wall,
            timed.own,
            clocks[side]
        );
        slowest = slowest.max(timed.wall.saturating_sub(timed.own));
        clocks[side] = clocks[side].saturating_sub(timed.wall) + increment;
        lowest = lowest.min(clocks[side] - increment);
        let mv = best_move(timed.lines.last().unwrap());
        if mv == "(none)" {
            break;
        }
        moves.push(mv.to_string());
    }
    eprintln!("lowest clock after a move: {lowest:?}; most added outside the engine: {slowest:?}");
    engine.quit();
}

/// A game that is already over (here a threefold repetition) gets
/// `bestmove (none)` at once under a clock, which the harness times as no
/// time of the engine's own, so the game above can end that way.
#[test]
fn a_repeated_position_under_a_clock_is_answered_at_once() {
    let mut engine = Engine::start();
    engine.send_all(&[
        "debug on",
        "position fen 3/B2/2W b moves a2a3 c1b1 a3a2 b1c1 a2a3 c1b1 a3a2 b1c1",
    ]);
    let timed = engine.timed_go("go btime 300 wtime 300 binc 20 winc 20");
    assert_eq!(timed.own, Duration::ZERO);
    assert_eq!(best_move(timed.lines.last().unwrap()), "(none)");
    assert!(
        timed
            .lines
            .iter()
            .any(|line| line == "info string game over: draw by threefold repetition"),
        "{:#?}",
        timed.lines
    );
    engine.quit();
}

/// An 8 x 8 race decided at the root (every White car north of every
/// Black car, Black 24 moves from the end to White's 30) answers after
/// one iteration of a few nodes, for the winner and the loser alike. With
/// ten minutes left the soft limit is some 20 seconds, and before the
/// rule the winner's search used it all.
#[test]
fn a_decided_race_is_played_at_once_under_a_clock() {
    let _cpu = shared();
    let mut engine = Engine::start();
    for (side, mate) in [("b", 24), ("w", -24)] {
        engine.send_all(&[&format!("position fen 8/8/8/8/1WWWWWW1/B7/B7/B7 {side}")]);
        let sent = engine.send("go wtime 600000 btime 600000");
        let (lines, at) = engine.read_until(is_bestmove, LONG);
        let infos: Vec<&String> = lines.iter().filter(|line| is_search_info(line)).collect();
        let last = infos.last().expect("an info line");
        assert_eq!(infos.len(), 1, "{lines:#?}");
        assert_eq!(info_value(last, "depth"), Some("1"), "{last}");
        let nodes: u64 = info_value(last, "nodes").unwrap().parse().unwrap();
        assert!(nodes < 100, "{last}");
        assert_eq!(info_score(last), Some(("mate".to_string(), mate)), "{last}");
        let spent = at.saturating_duration_since(sent);
        assert!(spent < Duration::from_secs(5), "{side}: {spent:?}");
    }
    engine.quit();
}
