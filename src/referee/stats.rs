//! Match statistics: score, Elo difference with a 95% interval, likelihood
//! of superiority, and a sequential probability ratio test (SPRT).
//!
//! All figures are from the first engine's point of view. The Elo model is
//! the logistic one: a score fraction `s` is `-400 log10(1/s - 1)` Elo.

use std::fmt;
use std::str::FromStr;

/// The two-sided 95% quantile of the normal distribution.
const Z95: f64 = 1.959_963_984_540_054;

/// Wins, losses and draws of the first engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub wins: u32,
    pub losses: u32,
    pub draws: u32,
}

/// The Elo difference that a score fraction means (infinite at 0 and 1).
pub fn elo_from_score(score: f64) -> f64 {
    if score <= 0.0 {
        f64::NEG_INFINITY
    } else if score >= 1.0 {
        f64::INFINITY
    } else {
        // `+ 0.0` turns the -0.0 of an even score into 0.0.
        -400.0 * (1.0 / score - 1.0).log10() + 0.0
    }
}

/// The expected score fraction at an Elo difference.
pub fn score_from_elo(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The error function (Abramowitz and Stegun 7.1.26, absolute error below
/// 1.5e-7, ample for a percentage).
pub fn erf(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0; // exact, where the approximation gives 1e-9
    }
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x < 0.0 { -y } else { y }
}

/// The 95% Wilson score interval of a score fraction `mean` after `games`
/// games: the scores `p` whose normal interval, with one game's variance
/// `p (1 - p)` (the most it can be at that score), holds `mean`. All wins
/// give `[games / (games + z^2), 1]`.
fn wilson(mean: f64, games: f64) -> (f64, f64) {
    let z2 = Z95 * Z95;
    let shrink = 1.0 + z2 / games;
    let centre = (mean + z2 / (2.0 * games)) / shrink;
    let half = Z95 / shrink * (mean * (1.0 - mean) / games + z2 / (4.0 * games * games)).sqrt();
    // Exact ends where the sample is at an end (no rounding off 0 or 1).
    let low = if mean <= 0.0 { 0.0 } else { centre - half };
    let high = if mean >= 1.0 { 1.0 } else { centre + half };
    (low, high)
}

impl Tally {
    /// Counts one game the first engine scored `points` in (1, 0.5 or 0).
    pub fn record(&mut self, points: f64) {
        if points >= 1.0 {
            self.wins += 1;
        } else if points <= 0.0 {
            self.losses += 1;
        } else {
            self.draws += 1;
        }
    }

    pub fn games(&self) -> u32 {
        self.wins + self.losses + self.draws
    }

    /// Score fraction (a draw is half a point); `None` before any game.
    pub fn score(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| (self.wins as f64 + self.draws as f64 / 2.0) / games as f64)
    }

    /// Variance of one game's score around the mean score.
    fn variance(&self, mean: f64) -> f64 {
        let games = self.games() as f64;
        (self.wins as f64 * (1.0 - mean).powi(2)
            + self.losses as f64 * mean.powi(2)
            + self.draws as f64 * (0.5 - mean).powi(2))
            / games
    }

    /// The Elo difference; `None` before any game.
    pub fn elo(&self) -> Option<f64> {
        self.score().map(elo_from_score)
    }

    /// The 95% interval of the Elo difference: the normal interval of the
    /// mean score, mapped to Elo (so it is not symmetric around the
    /// estimate). When every game had the same result, that interval
    /// would shrink to a point (2 wins of 2: [+inf, +inf]), so the Wilson
    /// score interval is used instead, which takes a game's variance
    /// at the true score instead of the one observed (2 wins of 2:
    /// [-113.4, +inf]). `None` before any game.
    pub fn elo_interval(&self) -> Option<(f64, f64)> {
        let mean = self.score()?;
        let games = self.games() as f64;
        let variance = self.variance(mean);
        let (low, high) = if variance > 0.0 {
            let error = (variance / games).sqrt();
            (mean - Z95 * error, mean + Z95 * error)
        } else {
            wilson(mean, games)
        };
        Some((elo_from_score(low), elo_from_score(high)))
    }

    /// Likelihood of superiority: the probability that the first engine is
    /// the stronger, from wins and losses (draws carry no information).
    pub fn los(&self) -> f64 {
        let decisive = (self.wins + self.losses) as f64;
        if decisive == 0.0 {
            return 0.5;
        }
        0.5 * (1.0 + erf((self.wins as f64 - self.losses as f64) / (2.0 * decisive).sqrt()))
    }

    /// The share of draws; `None` before any game.
    pub fn draw_ratio(&self) -> Option<f64> {
        let games = self.games();
        (games > 0).then(|| self.draws as f64 / games as f64)
    }
}

impl fmt::Display for Tally {
    /// `W - L - D [0.650] N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} - {} - {}  [{:.3}] {}",
            self.wins,
            self.losses,
            self.draws,
            self.score().unwrap_or(0.5),
            self.games()
        )
    }
}

/// Formats an Elo figure: one decimal, `+inf`/`-inf` at the ends.
pub fn format_elo(elo: f64) -> String {
    if elo == f64::INFINITY {
        "+inf".into()
    } else if elo == f64::NEG_INFINITY {
        "-inf".into()
    } else {
        format!("{elo:.1}")
    }
}

/// The parameters of a sequential test: H0 "the Elo difference is `elo0`"
/// against H1 "it is `elo1`", with error rates `alpha` (accepting H1 when
/// H0 holds) and `beta` (accepting H0 when H1 holds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// The SPRT's verdict so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtDecision {
    /// The log-likelihood ratio fell to the lower bound.
    AcceptH0,
    /// It rose to the upper bound.
    AcceptH1,
    Continue,
}

impl SprtDecision {
    pub fn describe(self) -> &'static str {
        match self {
            SprtDecision::AcceptH0 => "H0 accepted",
            SprtDecision::AcceptH1 => "H1 accepted",
            SprtDecision::Continue => "no decision yet",
        }
    }
}

impl FromStr for Sprt {
    type Err = String;

    /// `elo0,elo1,alpha,beta`, e.g. `0,10,0.05,0.05`.
    fn from_str(text: &str) -> Result<Sprt, String> {
        let usage = "expected elo0,elo1,alpha,beta like 0,10,0.05,0.05";
        let values: Vec<f64> = text
            .split(',')
            .map(|part| part.trim().parse::<f64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("'{text}': not four numbers ({usage})"))?;
        let [elo0, elo1, alpha, beta] = values[..] else {
            return Err(format!("'{text}': not four numbers ({usage})"));
        };
        if !(elo0.is_finite() && elo1.is_finite()) || elo0 >= elo1 {
            return Err(format!("'{text}': elo0 must be below elo1 ({usage})"));
        }
        if !(alpha > 0.0 && alpha < 0.5 && beta > 0.0 && beta < 0.5) {
            return Err(format!(
                "'{text}': alpha and beta must lie between 0 and 0.5 ({usage})"
            ));
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }
}

impl Sprt {
    /// The (lower, upper) bounds of the log-likelihood ratio: Wald's
    /// `ln(beta / (1 - alpha))` and `ln((1 - beta) / alpha)`.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 against H0 after `tally`, in the
    /// normal approximation of the mean score (as fishtest's "GSPRT"):
    /// `(s1 - s0) (2 m - s0 - s1) / (2 v / N)` with `m` the mean score, `v`
    /// one game's variance and `s0`, `s1` the scores the two hypotheses
    /// expect. While wins, losses or draws are still zero, half a game is
    /// added to each of the three, so that a one-sided start neither
    /// divides by zero nor stops the test after a game or two.
    pub fn llr(&self, tally: &Tally) -> f64 {
        if tally.games() == 0 {
            return 0.0;
        }
        let (mut wins, mut losses, mut draws) =
            (tally.wins as f64, tally.losses as f64, tally.draws as f64);
        if tally.wins == 0 || tally.losses == 0 || tally.draws == 0 {
            wins += 0.5;
            losses += 0.5;
            draws += 0.5;
        }
        let games = wins + losses + draws;
        let mean = (wins + draws / 2.0) / games;
        let variance =
            (wins * (1.0 - mean).powi(2) + losses * mean.powi(2) + draws * (0.5 - mean).powi(2))
                / games;
        if variance <= 0.0 {
            return 0.0;
        }
        let (s0, s1) = (score_from_elo(self.elo0), score_from_elo(self.elo1));
        (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance / games)
    }

    pub fn decision(&self, tally: &Tally) -> SprtDecision {
        let llr = self.llr(tally);
        let (lower, upper) = self.bounds();
        if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    #[test]
    fn elo_of_simple_scores() {
        assert_eq!(elo_from_score(0.5), 0.0);
        // 3 points of 4: 1/s - 1 = 1/3, so 400 log10(3) = 190.85.
        assert!(close(elo_from_score(0.75), 190.8485, 1e-4));
        assert!(close(elo_from_score(0.25), -190.8485, 1e-4));
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert_eq!(elo_from_score(0.0), f64::NEG_INFINITY);
        assert!(close(score_from_elo(190.8485), 0.75, 1e-6));
        assert_eq!(format_elo(f64::INFINITY), "+inf");
        assert_eq!(format_elo(-33.399), "-33.4");
    }

    #[test]
    fn tally_line_score_and_interval() {
        // 6 wins, 2 losses, 2 draws: score 7/10 = 0.7, 147.19 Elo.
        // One game's variance: (6 * 0.3^2 + 2 * 0.7^2 + 2 * 0.2^2) / 10 =
        // (0.54 + 0.98 + 0.08) / 10 = 0.16; the mean's standard error
        // sqrt(0.16 / 10) = 0.126491; 0.7 -/+ 1.96 * 0.126491 =
        // 0.452082 .. 0.947918, which is -33.40 .. 504.03 Elo.
        let tally = Tally {
            wins: 6,
            losses: 2,
            draws: 2,
        };
        assert_eq!(tally.to_string(), "6 - 2 - 2  [0.700] 10");
        assert!(close(tally.elo().unwrap(), 147.1907, 1e-3));
        let (low, high) = tally.elo_interval().unwrap();
        assert!(close(low, -33.40, 0.01), "{low}");
        assert!(close(high, 504.03, 0.01), "{high}");
        assert_eq!(tally.draw_ratio(), Some(0.2));
        assert_eq!(Tally::default().score(), None);
        assert_eq!(Tally::default().elo_interval(), None);
    }

    #[test]
    fn one_sided_samples_get_an_honest_interval() {
        // 2 wins of 2: the Wilson lower bound 2 / (2 + 1.96^2) = 0.342380,
        // -400 log10(1 / 0.342380 - 1) = -113.39 Elo; nothing bounds it above.
        let wins = Tally {
            wins: 2,
            ..Tally::default()
        };
        let (low, high) = wins.elo_interval().unwrap();
        assert!(close(low, -113.39, 0.01), "{low}");
        assert_eq!(high, f64::INFINITY);
        assert_eq!(format_elo(low), "-113.4");
        let losses = Tally {
            losses: 2,
            ..Tally::default()
        };
        let (low, high) = losses.elo_interval().unwrap();
        assert_eq!(low, f64::NEG_INFINITY);
        assert!(close(high, 113.39, 0.01), "{high}");
        // 160 wins of 160: 160 / 163.841459 = 0.976554, +647.8 Elo.
        let many = Tally {
            wins: 160,
            ..Tally::default()
        };
        let (low, _) = many.elo_interval().unwrap();
        assert!(close(low, 647.8, 0.1), "{low}");
        // 2 draws of 2: centre 0.5, half width 1.96 / 2.920730 *
        // sqrt(0.125 + 0.240091) = 0.405468: 0.094532 .. 0.905468, so
        // -392.5 .. 392.5 Elo (the normal interval was [0, 0]).
        let draws = Tally {
            draws: 2,
            ..Tally::default()
        };
        let (low, high) = draws.elo_interval().unwrap();
        assert!(close(low, -392.5, 0.1), "{low}");
        assert!(close(high, 392.5, 0.1), "{high}");
        // Two results keep the normal interval: a win and a draw, mean
        // 0.75, one game's variance 0.0625, 0.75 -/+ 1.96 * 0.176777 =
        // 0.403524 .. 1.096476, so -67.9 .. +inf Elo.
        let mixed = Tally {
            wins: 1,
            losses: 0,
            draws: 1,
        };
        let (low, high) = mixed.elo_interval().unwrap();
        assert!(close(low, -67.9, 0.1), "{low}");
        assert_eq!(high, f64::INFINITY);
    }

    #[test]
    fn likelihood_of_superiority() {
        // 6 wins, 2 losses: 0.5 (1 + erf(4 / sqrt(16))) = 0.5 (1 + erf(1))
        // = 0.5 (1 + 0.842701) = 0.921350.
        let tally = Tally {
            wins: 6,
            losses: 2,
            draws: 2,
        };
        assert!(close(tally.los(), 0.921350, 1e-6));
        assert!(close(erf(1.0), 0.842_700_8, 1e-6));
        assert!(close(erf(-0.5), -0.520_499_9, 1e-6));
        assert_eq!(erf(0.0), 0.0);
        let even = Tally {
            wins: 3,
            losses: 3,
            draws: 9,
        };
        assert!(close(even.los(), 0.5, 1e-9));
        assert_eq!(Tally::default().los(), 0.5);
    }

    #[test]
    fn sprt_bounds() {
        // alpha = beta = 0.05: ln(0.05 / 0.95) = -2.944439 and its negation.
        let sprt: Sprt = "0,10,0.05,0.05".parse().unwrap();
        let (lower, upper) = sprt.bounds();
        assert!(close(lower, -2.944439, 1e-6));
        assert!(close(upper, 2.944439, 1e-6));
        // alpha 0.05, beta 0.1: ln(0.1 / 0.95) = -2.251292, ln(0.9 / 0.05) = 2.890372.
        let sprt: Sprt = "-5,5,0.05,0.1".parse().unwrap();
        let (lower, upper) = sprt.bounds();
        assert!(close(lower, -2.251292, 1e-6));
        assert!(close(upper, 2.890372, 1e-6));
        for bad in [
            "",
            "0,10,0.05",
            "10,0,0.05,0.05",
            "0,10,0,0.05",
            "0,10,0.05,x",
            "0,10,0.6,0.05",
        ] {
            assert!(bad.parse::<Sprt>().is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn sprt_log_likelihood_ratio() {
        // H0: 0 Elo (s0 = 0.5), H1: 400 log10(3) Elo (s1 = 0.75).
        // 5 wins, 2 losses, 1 draw: mean 5.5/8 = 0.6875; one game's
        // variance (5 * 0.3125^2 + 2 * 0.6875^2 + 0.1875^2) / 8 = 0.18359375;
        // LLR = 0.25 * (1.375 - 1.25) / (2 * 0.18359375 / 8) = 32/47.
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 400.0 * 3f64.log10(),
            alpha: 0.05,
            beta: 0.05,
        };
        let tally = Tally {
            wins: 5,
            losses: 2,
            draws: 1,
        };
        assert!(close(sprt.llr(&tally), 32.0 / 47.0, 1e-9));
        assert_eq!(sprt.decision(&tally), SprtDecision::Continue);
        // Mirrored (2 wins, 5 losses): mean 0.3125, same variance, LLR =
        // 0.25 * (0.625 - 1.25) / 0.0458984375 = -160/47.
        let mirrored = Tally {
            wins: 2,
            losses: 5,
            draws: 1,
        };
        assert!(close(sprt.llr(&mirrored), -160.0 / 47.0, 1e-9));
        assert_eq!(sprt.decision(&mirrored), SprtDecision::AcceptH0);
        assert_eq!(sprt.llr(&Tally::default()), 0.0);
    }

    #[test]
    fn sprt_with_a_one_sided_start_needs_several_games() {
        // 1 win only: counts become 1.5 / 0.5 / 0.5 (mean 1.75 / 2.5 = 0.7,
        // variance (1.5 * 0.09 + 0.5 * 0.49 + 0.5 * 0.04) / 2.5 = 0.16):
        // LLR = 0.25 * (1.4 - 1.25) / (2 * 0.16 / 2.5) = 0.29296875.
        let sprt = Sprt {
            elo0: 0.0,
            elo1: 400.0 * 3f64.log10(),
            alpha: 0.05,
            beta: 0.05,
        };
        let one = Tally {
            wins: 1,
            ..Tally::default()
        };
        assert!(close(sprt.llr(&one), 0.29296875, 1e-9));
        assert_eq!(sprt.decision(&one), SprtDecision::Continue);
        let many = Tally {
            wins: 30,
            ..Tally::default()
        };
        assert_eq!(sprt.decision(&many), SprtDecision::AcceptH1);
    }
}
