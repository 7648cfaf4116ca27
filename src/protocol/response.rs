//! Formatting reply lines: the text of every answer the engine gives.

use crate::board::{Color, Move, Position, Rules, square};
use crate::eval::{self, Evaluation};
use crate::notation::{format_move, format_moves_sorted, format_position};
use crate::options;
use crate::protocol::Dialect;
use crate::search::Info;
use crate::solver::Dtz;

/// The engine's name and author as `uci` reports them.
pub const NAME: &str = concat!("dodgem ", env!("CARGO_PKG_VERSION"));
pub const AUTHOR: &str = "the dodgem developers";

/// The answer to `uci` or `ugi`: identity, every option, then `uciok` or
/// `ugiok`.
pub fn hello_lines(dialect: Dialect) -> Vec<String> {
    let mut lines = vec![format!("id name {NAME}"), format!("id author {AUTHOR}")];
    lines.extend(options::option_lines());
    lines.push(format!("{}ok", dialect.name()));
    lines
}

/// A UGI `query`'s answer: `response <answer>`.
pub fn response_line(answer: &str) -> String {
    format!("response {answer}")
}

/// The answer to `query result`: `p1win` (Black won), `p2win` (White
/// won), `draw`, or `none` while the game goes on.
pub fn result_answer(over: bool, winner: Option<Color>) -> &'static str {
    match (over, winner) {
        (false, _) => "none",
        (true, Some(Color::Black)) => "p1win",
        (true, Some(Color::White)) => "p2win",
        (true, None) => "draw",
    }
}

/// The answer to `d`: the board drawn in text, its position string, key,
/// rules, legal moves and status. `ending` says how the game ended, if it
/// has (repetition included).
pub fn display_lines(
    position: &Position,
    rules: Rules,
    ending: Option<impl std::fmt::Display>,
) -> Vec<String> {
    let size = position.size();
    let border = format!("   +{}", "---+".repeat(size));
    let mut lines = vec![border.clone()];
    for rank in (0..size).rev() {
        let mut row = format!("{:>2} |", rank + 1);
        for file in 0..size {
            let car = match position.car_at(square(file, rank)) {
                Some(Color::Black) => 'B',
                Some(Color::White) => 'W',
                None => ' ',
            };
            row.push_str(&format!(" {car} |"));
        }
        lines.push(row);
        lines.push(border.clone());
    }
    let files: Vec<String> = (0..size)
        .map(|f| ((b'a' + f as u8) as char).to_string())
        .collect();
    lines.push(format!("     {}", files.join("   ")));
    lines.push(String::new());
    lines.push(format!("Fen: {}", format_position(position)));
    lines.push(format!("Key: {:016X}", position.key()));
    lines.push(format!(
        "Rules: {}  Cars off: Black {}, White {}",
        rules.name(),
        position.cars_off(Color::Black),
        position.cars_off(Color::White)
    ));
    let mut moves = format_moves_sorted(&position.legal_moves());
    if moves.is_empty() {
        moves.push("(none)".to_string());
    }
    lines.push(format!("Legal moves: {}", moves.join(" ")));
    let status = match ending {
        Some(ending) => format!("game over, {ending}"),
        None => format!("{} to move", position.side_to_move().name()),
    };
    lines.push(format!("Status: {status}"));
    lines
}

/// The answer to `eval`: each term of `kind` under `rules` and the total,
/// from White's point of view. The columns are as wide as their longest
/// entry (at least 20 characters for the names and 7 for the numbers), so
/// they stay in line whatever the terms are called.
pub fn eval_lines(position: &Position, kind: Evaluation, rules: Rules) -> Vec<String> {
    let mut rows: Vec<[String; 4]> = vec![["Term", "White", "Black", "Total"].map(String::from)];
    for term in eval::terms(position, kind, rules) {
        rows.push([
            term.name.to_string(),
            term.white.to_string(),
            term.black.to_string(),
            term.total().to_string(),
        ]);
    }
    let width = |column: usize, least: usize| {
        rows.iter()
            .map(|row| row[column].chars().count())
            .fold(least, usize::max)
    };
    let name = width(0, 20);
    let number = (1..4).map(|column| width(column, 7)).fold(7, usize::max);
    let mut lines = vec![format!(
        "Evaluation: {} (from White's point of view: positive is good for White)",
        match kind.resolved() {
            used if used == kind => kind.name().to_string(),
            used => format!("{} (that is {})", kind.name(), used.name()),
        }
    )];
    lines.extend(rows.iter().map(|[term, white, black, total]| {
        format!("{term:<name$} {white:>number$} {black:>number$} {total:>number$}")
    }));
    lines.push(format!(
        "Final evaluation: {} (white side)",
        eval::evaluate(position, kind, rules)
    ));
    lines
}

/// The answer to `go perft`: each root move's count in move order, then
/// the total; `None` is a perft stopped early.
pub fn perft_lines(result: Option<&[(Move, u64)]>) -> Vec<String> {
    let Some(counts) = result else {
        return vec![info_string("perft stopped before it finished")];
    };
    let mut lines: Vec<(String, u64)> = counts
        .iter()
        .map(|&(mv, count)| (format_move(Some(mv)), count))
        .collect();
    lines.sort();
    let total: u64 = counts.iter().map(|&(_, count)| count).sum();
    lines
        .into_iter()
        .map(|(mv, count)| format!("{mv}: {count}"))
        .chain([perft_total(total)])
        .collect()
}

/// The last line of a perft: the number of leaves.
pub fn perft_total(nodes: u64) -> String {
    format!("Nodes searched: {nodes}")
}

/// The answer to `solve`: the position's value for the side to move,
/// with the plies to the end of the game under best play (`end`, where
/// known) and the plies to the next progress move that keeps it (the
/// distance of `value`, where `dtz`: tables made by the one pass know the
/// end alone); `None` is a position no table covers.
pub fn solve_line(value: Option<Dtz>, end: Option<Dtz>, dtz: bool) -> String {
    match (value, end) {
        (Some(Dtz::Win(_)), Some(Dtz::Win(plies))) if !dtz => format!("solve win {plies}"),
        (Some(Dtz::Loss(_)), Some(Dtz::Loss(plies))) if !dtz => format!("solve loss {plies}"),
        (Some(Dtz::Win(dtz)), Some(Dtz::Win(plies))) => format!("solve win {plies} dtz {dtz}"),
        (Some(Dtz::Loss(dtz)), Some(Dtz::Loss(plies))) => format!("solve loss {plies} dtz {dtz}"),
        (Some(Dtz::Win(dtz)), _) => format!("solve win dtz {dtz}"),
        (Some(Dtz::Loss(dtz)), _) => format!("solve loss dtz {dtz}"),
        (Some(Dtz::Draw), _) => "solve draw".to_string(),
        (None, _) => "solve unknown".to_string(),
    }
}

/// An `info depth ... pv ...` line, with the win/draw/loss chances after
/// the score when `show_wdl` (`UCI_ShowWDL`).
pub fn info_line(info: &Info, show_wdl: bool) -> String {
    let pv: Vec<String> = info.pv.iter().map(|&mv| format_move(Some(mv))).collect();
    let wdl = if show_wdl {
        format!(" {}", info.wdl)
    } else {
        String::new()
    };
    let tbhits = if info.tbhits > 0 {
        format!(" tbhits {}", info.tbhits)
    } else {
        String::new()
    };
    format!(
        "info depth {} seldepth {} multipv {} score {}{wdl} nodes {} nps {} hashfull {}{tbhits} time {} pv {}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_position;

    /// Every row of the `eval` table, the header's included, has its
    /// numbers end in the same columns, however long the term names of
    /// the evaluation are (the `net` and `learned` ones are long).
    #[test]
    fn eval_columns_stay_in_line() {
        let positions = [
            "B2/B2/1WW b",
            "B3/1B2/BW2/2WW w",
            "6/B2W2/1B4/2B1W1/B2W2/1W3B w",
        ];
        for text in positions {
            let position = parse_position(text).unwrap();
            for kind in Evaluation::ALL {
                for rules in [Rules::Textbook, Rules::Classic] {
                    let lines = eval_lines(&position, kind, rules);
                    let table = &lines[1..lines.len() - 1];
                    assert!(table.len() >= 2, "{lines:#?}");
                    let ends = |line: &str| -> Vec<usize> {
                        let chars: Vec<char> = line.chars().collect();
                        (0..chars.len())
                            .filter(|&i| {
                                chars[i] != ' ' && chars.get(i + 1).is_none_or(|&c| c == ' ')
                            })
                            .collect::<Vec<_>>()
                            .into_iter()
                            .rev()
                            .take(3)
                            .collect()
                    };
                    let header = ends(&table[0]);
                    for line in table {
                        assert_eq!(ends(line), header, "{kind:?} {text}: {lines:#?}");
                    }
                }
            }
        }
    }
}
