//! Formatting reply lines.

use crate::board::Move;
use crate::notation::format_move;
use crate::search::Info;

/// An `info depth ... pv ...` line.
pub fn info_line(info: &Info) -> String {
    let pv: Vec<String> = info.pv.iter().map(|&mv| format_move(Some(mv))).collect();
    let tbhits = if info.tbhits > 0 {
        format!(" tbhits {}", info.tbhits)
    } else {
        String::new()
    };
    format!(
        "info depth {} seldepth {} multipv {} score {} nodes {} nps {} hashfull {}{tbhits} time {} pv {}",
        info.depth,
        info.seldepth,
        info.multipv,
        info.score,
        info.nodes,
        info.nps,
        info.hashfull,
        info.time.as_millis(),
        pv.join(" ")
    )
}

/// A `bestmove` line; `None` is a finished game: `bestmove (none)`.
pub fn bestmove_line(best: Option<Move>, ponder: Option<Move>) -> String {
    match (best, ponder) {
        (None, _) => "bestmove (none)".to_string(),
        (Some(best), None) => format!("bestmove {}", format_move(Some(best))),
        (Some(best), Some(ponder)) => format!(
            "bestmove {} ponder {}",
            format_move(Some(best)),
            format_move(Some(ponder))
        ),
    }
}

/// An `info string` line; newlines in `text` become spaces so one message
/// is always one line.
pub fn info_string(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!("info string {one_line}")
}
