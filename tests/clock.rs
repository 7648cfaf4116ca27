//! The time manager under a real clock: a game whose clock drains to the
//! increment still never loses on time, as the last part of the clock is
//! never planned for.

use std::time::Duration;

use crate::common::{Engine, LONG, best_move, is_bestmove, timing};

#[test]
fn a_short_clock_with_increment_never_flags() {
    let _cpu = timing();
    let mut engine = Engine::start();
    engine.send_all(&["setoption name BoardSize value 7", "ucinewgame"]);
    // 0.3 s + 0.02 s a side, charged as a referee does: from `go` sent to
    // `bestmove` read.
    let increment = Duration::from_millis(20);
    let mut clocks = [Duration::from_millis(300); 2];
    let mut moves: Vec<String> = Vec::new();
    let mut lowest = Duration::MAX;
    for ply in 0..60 {
        let side = ply % 2;
        let position = if moves.is_empty() {
            "position startpos".to_string()
        } else {
            format!("position startpos moves {}", moves.join(" "))
        };
        engine.send(&position);
        let millis = |clock: Duration| clock.as_millis();
        let sent = engine.send(&format!(
            "go btime {} wtime {} binc {} winc {}",
            millis(clocks[0]),
            millis(clocks[1]),
            millis(increment),
            millis(increment)
        ));
        let (line, at) = engine.expect_line(is_bestmove, LONG);
        let spent = at.saturating_duration_since(sent);
        assert!(
            spent < clocks[side],
            "ply {ply}: the move took {spent:?} with {:?} on the clock",
            clocks[side]
        );
        clocks[side] = clocks[side] - spent + increment;
        lowest = lowest.min(clocks[side] - increment);
        let mv = best_move(&line);
        if mv == "(none)" {
            break;
        }
        moves.push(mv.to_string());
    }
    eprintln!("lowest clock after a move: {lowest:?}");
    engine.quit();
}
