//! Adjudication from the solved tables (`--adjudicate`): a game ends as
//! soon as its position is a forced win for one side.
//!
//! Only wins and losses are adjudicated. The tables cover whole games, so
//! a drawn value would end most 4 x 4 and 5 x 5 games at their first
//! position; drawn positions are played on, to a win after a mistake, a
//! repetition or the ply limit.

use std::path::Path;
use std::sync::Arc;

use crate::board::{Position, Rules};
use crate::solver::Dtz;
use crate::tablebase::{self, Layered};

use super::record::GameResult;

/// The tables a match adjudicates with.
#[derive(Clone, Debug)]
pub struct Adjudicator {
    rules: Rules,
    tables: Vec<Arc<Layered>>,
}

impl Adjudicator {
    /// Tables for every size in `sizes` under `rules`: the directory `dir`
    /// of layered tables (from `dodgem solve --out`) where its size
    /// matches (it may cover only endgames), else the built-in ones (3 x 3
    /// and 4 x 4).
    ///
    /// # Errors
    /// A directory that cannot be used or is for other rules, or a size
    /// that no table covers.
    pub fn new(sizes: &[usize], rules: Rules, dir: Option<&Path>) -> Result<Adjudicator, String> {
        let loaded = match dir {
            Some(dir) => {
                let table = Layered::open(dir).map_err(|error| format!("--tablebase: {error}"))?;
                let kind = table.kind();
                if kind.rules != rules {
                    return Err(format!(
                        "--tablebase: {} holds the {} rules, the match plays {}",
                        dir.display(),
                        kind.rules.name(),
                        rules.name()
                    ));
                }
                Some(Arc::new(table))
            }
            None => None,
        };
        let mut tables = Vec::new();
        for &size in sizes {
            let table = match &loaded {
                Some(table) if table.kind().size == size => Arc::clone(table),
                _ => tablebase::builtin(size, rules).ok_or_else(|| {
                    format!(
                        "--adjudicate: no table covers {size} x {size} (the built-in tables are 3 x 3 and 4 x 4; give a directory of solved tables with --tablebase)"
                    )
                })?,
            };
            tables.push(table);
        }
        Ok(Adjudicator { rules, tables })
    }

    /// The result, and a sentence, when `position` is a forced win.
    pub fn adjudicate(&self, position: &Position) -> Option<(GameResult, String)> {
        let table = self
            .tables
            .iter()
            .find(|t| t.covers(position, self.rules))?;
        let side = position.side_to_move();
        let (winner, plies) = match table.probe(position)? {
            Dtz::Win(plies) => (side, plies),
            Dtz::Loss(plies) => (side.other(), plies),
            Dtz::Draw => return None,
        };
        Some((
            GameResult::Win(winner),
            format!(
                "{} wins by adjudication: the table has a forced win (next progress move in {plies} {})",
                winner.name(),
                if plies == 1 { "ply" } else { "plies" }
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Color;

    #[test]
    fn forced_wins_are_adjudicated_and_draws_are_not() {
        let adjudicator = Adjudicator::new(&[3, 4], Rules::Textbook, None).unwrap();
        // The 3 x 3 start: Black wins, a3b3 first (a progress move).
        assert_eq!(
            adjudicator.adjudicate(&Position::start(3)),
            Some((
                GameResult::Win(Color::Black),
                "Black wins by adjudication: the table has a forced win (next progress move in 1 ply)".into()
            ))
        );
        // The 4 x 4 start is a draw.
        assert_eq!(adjudicator.adjudicate(&Position::start(4)), None);
        // No table for 5 x 5 here.
        assert_eq!(adjudicator.adjudicate(&Position::start(5)), None);
        let error = Adjudicator::new(&[5], Rules::Textbook, None).unwrap_err();
        assert!(error.contains("no table covers 5 x 5"), "{error}");
        let error = Adjudicator::new(&[3], Rules::Textbook, Some(Path::new("/nonexistent.tb")))
            .unwrap_err();
        assert!(
            error.starts_with("--tablebase: /nonexistent.tb: no such directory"),
            "{error}"
        );
    }
}
