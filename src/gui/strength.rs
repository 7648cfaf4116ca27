//! The engine's weaker levels, as its options offer them: `Skill Level`
//! (a spin whose top is full strength), or `UCI_LimitStrength` with
//! `UCI_Elo` (as in chess engines). The page offers whichever the engine
//! has; the engine's own moves are played at the chosen level, every
//! question the page asks at full strength.

use serde::Deserialize;

use super::error::ApiError;
use crate::client::{OptionKind, OptionSpec};

/// A strength for the engine's moves: `"full"`, or a value of its level
/// option (see [`Strength`]).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum LevelRequest {
    Value(i64),
    Name(String),
}

/// How the engine can be made weaker, from the options it advertises:
/// `Skill Level` (a spin, its top is full strength), or
/// `UCI_LimitStrength` with `UCI_Elo` (as in chess engines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Strength {
    Skill {
        name: String,
        min: i64,
        max: i64,
    },
    Elo {
        limit: String,
        elo: String,
        min: i64,
        max: i64,
    },
}

impl Strength {
    /// The engine's way of playing weaker, if it has one.
    pub fn of(options: &[OptionSpec]) -> Option<Strength> {
        let find = |name: &str| {
            options
                .iter()
                .find(|option| option.name.eq_ignore_ascii_case(name))
        };
        if let Some(option) = find("Skill Level")
            && let OptionKind::Spin { min, max } = option.kind
            && min < max
        {
            return Some(Strength::Skill {
                name: option.name.clone(),
                min,
                max,
            });
        }
        match (find("UCI_LimitStrength"), find("UCI_Elo")) {
            (Some(limit), Some(elo)) if limit.kind == OptionKind::Check => match elo.kind {
                OptionKind::Spin { min, max } if min < max => Some(Strength::Elo {
                    limit: limit.name.clone(),
                    elo: elo.name.clone(),
                    min,
                    max,
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// The range of levels.
    pub fn range(&self) -> (i64, i64) {
        match self {
            Strength::Skill { min, max, .. } | Strength::Elo { min, max, .. } => (*min, *max),
        }
    }

    /// The `setoption` (name, value) pairs for `level` (`None`: full
    /// strength).
    pub fn settings(&self, level: Option<i64>) -> Vec<(String, String)> {
        match (self, level) {
            (Strength::Skill { name, max, .. }, level) => {
                vec![(name.clone(), level.unwrap_or(*max).to_string())]
            }
            (Strength::Elo { limit, .. }, None) => vec![(limit.clone(), "false".into())],
            (Strength::Elo { limit, elo, .. }, Some(level)) => vec![
                (limit.clone(), "true".into()),
                (elo.clone(), level.to_string()),
            ],
        }
    }
}

/// Checks a level asked for against the engine's way of playing weaker
/// (`strength`): `None` is full strength.
///
/// # Errors
/// 400 for a level that is not a number or out of range, 409 when the
/// engine has no levels.
pub fn check_level(
    strength: Option<Strength>,
    request: &LevelRequest,
) -> Result<Option<i64>, ApiError> {
    let level = match request {
        LevelRequest::Name(name) if name.eq_ignore_ascii_case("full") => return Ok(None),
        LevelRequest::Name(name) => {
            return Err(ApiError::bad_request(format!(
                "level {} is neither \"full\" nor a number",
                crate::protocol::quote(name)
            )));
        }
        LevelRequest::Value(level) => *level,
    };
    let Some(strength) = strength else {
        return Err(ApiError::conflict(
            "the engine offers no weaker levels (no Skill Level or UCI_LimitStrength and UCI_Elo option)",
        ));
    };
    let (min, max) = strength.range();
    if (min..=max).contains(&level) {
        Ok(Some(level))
    } else {
        Err(ApiError::bad_request(format!(
            "level {level} is outside {min}..{max}"
        )))
    }
}
