//! The results file (`--results`): the totals and every game, as JSON
//! (see docs/matches.md, "Results file").

use std::collections::BTreeMap;

use serde::Serialize;

use crate::notation::format_position;

use super::record::GameRecord;
use super::stats::{Sprt, SprtDecision, Tally};

#[derive(Serialize)]
struct Results<'a> {
    engine1: &'a str,
    engine2: &'a str,
    totals: Totals,
    /// The first engine's score with each colour.
    by_color: ByColor,
    sprt: Option<SprtResult>,
    /// How many games ended each way.
    terminations: BTreeMap<&'static str, u32>,
    games: Vec<Game<'a>>,
}

/// Non-finite figures (an Elo of a 100% score) are written as `null`.
#[derive(Serialize)]
struct Totals {
    games: u32,
    wins: u32,
    losses: u32,
    draws: u32,
    score: Option<f64>,
    elo: Option<f64>,
    elo_low: Option<f64>,
    elo_high: Option<f64>,
    los: f64,
}

#[derive(Serialize)]
struct ByColor {
    black: ColorTotals,
    white: ColorTotals,
}

#[derive(Serialize)]
struct ColorTotals {
    games: u32,
    wins: u32,
    losses: u32,
    draws: u32,
    score: Option<f64>,
}

impl ColorTotals {
    fn of(tally: &Tally) -> ColorTotals {
        ColorTotals {
            games: tally.games(),
            wins: tally.wins,
            losses: tally.losses,
            draws: tally.draws,
            score: tally.score(),
        }
    }
}

#[derive(Serialize)]
struct SprtResult {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    llr: f64,
    lower_bound: f64,
    upper_bound: f64,
    decision: &'static str,
}

#[derive(Serialize)]
struct Game<'a> {
    round: u32,
    black: &'a str,
    white: &'a str,
    engine1_color: &'static str,
    start: String,
    result: &'static str,
    engine1_points: f64,
    termination: &'static str,
    detail: &'a str,
    plies: usize,
}

fn finite(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// The results file's text. `games` are in round order; `sprt` comes with
/// the decision the match stopped on (or `Continue`).
pub fn to_json(
    names: [&str; 2],
    tally: &Tally,
    sprt: Option<(&Sprt, SprtDecision)>,
    games: &[GameRecord],
) -> String {
    let interval = tally.elo_interval();
    let mut terminations = BTreeMap::new();
    for game in games {
        *terminations.entry(game.termination.name()).or_insert(0) += 1;
    }
    let [black, white] = super::tally_by_color(super::colors_and_points(games));
    let results = Results {
        engine1: names[0],
        engine2: names[1],
        totals: Totals {
            games: tally.games(),
            wins: tally.wins,
            losses: tally.losses,
            draws: tally.draws,
            score: tally.score(),
            elo: tally.elo().and_then(finite),
            elo_low: interval.and_then(|(low, _)| finite(low)),
            elo_high: interval.and_then(|(_, high)| finite(high)),
            los: tally.los(),
        },
        by_color: ByColor {
            black: ColorTotals::of(&black),
            white: ColorTotals::of(&white),
        },
        sprt: sprt.map(|(sprt, decision)| {
            let (lower_bound, upper_bound) = sprt.bounds();
            SprtResult {
                elo0: sprt.elo0,
                elo1: sprt.elo1,
                alpha: sprt.alpha,
                beta: sprt.beta,
                llr: sprt.llr(tally),
                lower_bound,
                upper_bound,
                decision: decision.describe(),
            }
        }),
        terminations,
        games: games
            .iter()
            .map(|game| Game {
                round: game.round,
                black: &game.black,
                white: &game.white,
                engine1_color: game.engine1.key(),
                start: format_position(&game.start),
                result: game.result.pgn(),
                engine1_points: game.engine1_points(),
                termination: game.termination.name(),
                detail: &game.detail,
                plies: game.moves.len(),
            })
            .collect(),
    };
    // Serialising plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(&results).unwrap_or_default() + "\n"
}
