//! Why a table directory or layer file cannot be used ([`LayerError`]).

use std::fmt;
use std::io;
use std::path::PathBuf;

use super::{LAYER_VERSION, LAYER_VERSIONS, UNBOUND_VERSION, VERSION};

/// Why a table directory or layer file cannot be used.
#[derive(Debug)]
pub enum LayerError {
    Io(PathBuf, io::Error),
    NotALayerFile(PathBuf),
    Version(PathBuf, u32),
    /// The file or directory is for another board, rule, car limit or
    /// layer than asked for.
    Foreign(PathBuf, String),
    Truncated(PathBuf),
    Checksum(PathBuf),
    Corrupt(PathBuf, String),
    /// The directory has no manifest or a bad one.
    Manifest(PathBuf, String),
    /// A directory or file of the old format: what it is.
    OldFormat(PathBuf),
    /// A layer found unusable earlier: why.
    Unusable(String),
    /// Another process writes into the directory (its id, if known).
    InUse(PathBuf, Option<u32>),
}

/// What the message about an old directory tells its owner to do.
pub const CONVERT_HINT: &str = "convert it once with `dodgem solve --convert OLD NEW` \
     (value for value, no new solve)";

impl fmt::Display for LayerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerError::Io(path, error) => write!(f, "cannot use {}: {error}", path.display()),
            LayerError::NotALayerFile(path) => {
                write!(f, "{} is not a dodgem layer file", path.display())
            }
            LayerError::Version(path, version) => write!(
                f,
                "{} has format version {version}; this program reads directories of format \
                 {UNBOUND_VERSION} and {VERSION} and layer files of format {} to {LAYER_VERSION}",
                path.display(),
                LAYER_VERSIONS.start()
            ),
            LayerError::Foreign(path, why) => write!(f, "{} {why}", path.display()),
            LayerError::Truncated(path) => {
                write!(f, "{} is truncated or padded", path.display())
            }
            LayerError::Checksum(path) => write!(
                f,
                "{} fails its checksum (the file is damaged)",
                path.display()
            ),
            LayerError::Corrupt(path, why) => {
                write!(f, "{} is damaged: {why}", path.display())
            }
            LayerError::Manifest(path, why) => write!(f, "{}: {why}", path.display()),
            LayerError::OldFormat(path) => write!(
                f,
                "{} holds tables in the old format (version 1: each layer one compressed \
                 frame, read whole); {CONVERT_HINT}",
                path.display()
            ),
            LayerError::Unusable(why) => write!(f, "{why}"),
            LayerError::InUse(dir, pid) => {
                let by =
                    pid.map_or_else(|| "another process".to_string(), |p| format!("process {p}"));
                write!(
                    f,
                    "{} is in use by {by} (a solve, --dte or --convert writing into it): \
                     wait for it to end, or write into another directory",
                    dir.display()
                )
            }
        }
    }
}

impl std::error::Error for LayerError {}
