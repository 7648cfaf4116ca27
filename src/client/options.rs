//! The options an engine advertises (`option name ... type ...` lines) and
//! `setoption` lines checked against them.

use std::fmt;

/// An option an engine advertised with an `option name ... type ...` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: String,
    pub kind: OptionKind,
    /// The `default` value as the engine wrote it (`None` if it gave none).
    pub default: Option<String>,
}

/// As in a `uci` reply: `option name <name> type <type> [default ..]
/// [min .. max ..] [var ..]...`.
impl fmt::Display for OptionSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            OptionKind::Check => "check",
            OptionKind::Spin { .. } => "spin",
            OptionKind::Combo(_) => "combo",
            OptionKind::Button => "button",
            OptionKind::String => "string",
        };
        write!(f, "option name {} type {kind}", self.name)?;
        if let Some(default) = &self.default {
            write!(f, " default {default}")?;
        }
        match &self.kind {
            OptionKind::Spin { min, max } => write!(f, " min {min} max {max}"),
            OptionKind::Combo(vars) => vars.iter().try_for_each(|var| write!(f, " var {var}")),
            _ => Ok(()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Check,
    Spin { min: i64, max: i64 },
    Combo(Vec<String>),
    Button,
    String,
}

/// Reads an `option name <name> type <type> [default ..] [min ..] [max ..]
/// [var ..]...` line; `None` if it is not one (or names an unknown type).
pub fn parse_option_line(line: &str) -> Option<OptionSpec> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    if tokens.first() != Some(&"option") || tokens.get(1) != Some(&"name") {
        return None;
    }
    let type_at = tokens.iter().position(|&t| t == "type")?;
    let name = tokens.get(2..type_at)?.join(" ");
    if name.is_empty() {
        return None;
    }
    let rest = &tokens[type_at + 1..];
    let value_after = |key: &str| {
        rest.iter()
            .position(|&t| t == key)
            .and_then(|i| rest.get(i + 1))
            .copied()
    };
    let kind = match *rest.first()? {
        "check" => OptionKind::Check,
        "spin" => OptionKind::Spin {
            min: value_after("min")?.parse().ok()?,
            max: value_after("max")?.parse().ok()?,
        },
        "combo" => OptionKind::Combo(
            rest.windows(2)
                .filter(|pair| pair[0] == "var")
                .map(|pair| pair[1].to_string())
                .collect(),
        ),
        "button" => OptionKind::Button,
        "string" => OptionKind::String,
        _ => return None,
    };
    // A default runs to the next keyword (a string's may hold spaces).
    let default = rest.iter().position(|&t| t == "default").map(|at| {
        rest[at + 1..]
            .iter()
            .take_while(|&&t| !matches!(t, "min" | "max" | "var"))
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    });
    Some(OptionSpec {
        name,
        kind,
        default,
    })
}

/// Splits a command-line setting `Name=Value` into its name and value
/// (`Name` alone, for a button, has no value).
pub fn split_setting(setting: &str) -> (&str, Option<&str>) {
    match setting.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (setting, None),
    }
}

/// Checks a `Name=Value` (or, for a button, `Name`) setting against the
/// options an engine advertised and returns its `setoption` line.
///
/// # Errors
/// A message when the engine has no such option or the value does not fit.
pub fn setoption_line(
    options: &[OptionSpec],
    name: &str,
    value: Option<&str>,
) -> Result<String, String> {
    let name = name.trim();
    let option = options
        .iter()
        .find(|o| o.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let known: Vec<&str> = options.iter().map(|o| o.name.as_str()).collect();
            format!(
                "the engine has no option '{name}' (it has: {})",
                known.join(", ")
            )
        })?;
    let value = value.map(str::trim);
    let checked = match (&option.kind, value) {
        (OptionKind::Button, None) => None,
        (OptionKind::Button, Some(_)) => {
            return Err(format!("'{}' is a button and takes no value", option.name));
        }
        (_, None) => return Err(format!("option '{}' needs a value", option.name)),
        (OptionKind::Check, Some(v)) => {
            if !(v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false")) {
                return Err(format!("'{}' takes true or false, not '{v}'", option.name));
            }
            Some(v.to_ascii_lowercase())
        }
        (OptionKind::Spin { min, max }, Some(v)) => match v.parse::<i64>() {
            Ok(n) if (*min..=*max).contains(&n) => Some(n.to_string()),
            _ => {
                return Err(format!(
                    "'{}' takes a whole number from {min} to {max}, not '{v}'",
                    option.name
                ));
            }
        },
        (OptionKind::Combo(vars), Some(v)) => {
            match vars.iter().find(|var| var.eq_ignore_ascii_case(v)) {
                Some(var) => Some(var.clone()),
                None => {
                    return Err(format!(
                        "'{}' takes one of {}, not '{v}'",
                        option.name,
                        vars.join(", ")
                    ));
                }
            }
        }
        (OptionKind::String, Some(v)) => Some(v.to_string()),
    };
    Ok(match checked {
        Some(value) => format!("setoption name {} value {value}", option.name),
        None => format!("setoption name {}", option.name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Vec<OptionSpec> {
        [
            "option name Hash type spin default 16 min 1 max 16384",
            "option name Clear Hash type button",
            "option name Rules type combo default textbook var textbook var classic",
            "option name Move Overhead type spin default 10 min 0 max 5000",
            "option name Ponder type check default false",
            "option name Book File type string default <empty>",
        ]
        .iter()
        .map(|line| parse_option_line(line).unwrap())
        .collect()
    }

    #[test]
    fn reads_option_lines() {
        let options = options();
        assert_eq!(options[0].kind, OptionKind::Spin { min: 1, max: 16384 });
        assert_eq!(options[1].name, "Clear Hash");
        assert_eq!(
            options[2].kind,
            OptionKind::Combo(vec!["textbook".into(), "classic".into()])
        );
        assert_eq!(options[3].name, "Move Overhead");
        assert_eq!(options[3].default.as_deref(), Some("10"));
        assert_eq!(options[1].default, None);
        assert_eq!(options[5].default.as_deref(), Some("<empty>"));
        for (option, line) in options.iter().zip([
            "option name Hash type spin default 16 min 1 max 16384",
            "option name Clear Hash type button",
            "option name Rules type combo default textbook var textbook var classic",
        ]) {
            assert_eq!(option.to_string(), line);
        }
        assert_eq!(parse_option_line("option name X type weird"), None);
        assert_eq!(parse_option_line("id name X"), None);
        assert_eq!(parse_option_line("option name type check"), None);
        assert_eq!(parse_option_line("option name S type spin min 1"), None);
    }

    #[test]
    fn checks_settings_against_the_advertised_options() {
        let options = options();
        let ok = |name, value| setoption_line(&options, name, value).unwrap();
        assert_eq!(ok("hash", Some("64")), "setoption name Hash value 64");
        assert_eq!(
            ok("move overhead", Some(" 30 ")),
            "setoption name Move Overhead value 30"
        );
        assert_eq!(
            ok("Rules", Some("CLASSIC")),
            "setoption name Rules value classic"
        );
        assert_eq!(
            ok("Ponder", Some("True")),
            "setoption name Ponder value true"
        );
        assert_eq!(ok("Clear Hash", None), "setoption name Clear Hash");
        assert_eq!(
            ok("Book File", Some("a b.txt")),
            "setoption name Book File value a b.txt"
        );
        let error = |name, value| setoption_line(&options, name, value).unwrap_err();
        assert!(error("Threads", Some("2")).contains("no option 'Threads'"));
        assert!(error("Hash", Some("0")).contains("from 1 to 16384"));
        assert!(error("Hash", Some("x")).contains("not 'x'"));
        assert!(error("Hash", None).contains("needs a value"));
        assert!(error("Rules", Some("fast")).contains("textbook, classic"));
        assert!(error("Ponder", Some("yes")).contains("true or false"));
        assert!(error("Clear Hash", Some("1")).contains("button"));
    }
}
