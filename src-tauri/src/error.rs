//! The one error shape the window shows: every command's failure (a config
//! that does not parse or validate, a stale edit, a refused edit, a session that
//! is not there, a file that cannot be written) as an `AppError` with its kind.

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::edit::EditError;
use switchboard_core::config::store::ConfigError;
use switchboard_core::sessions::SessionError;

/// The one error shape the UI shows as it is.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct AppError {
    pub kind: AppErrorKind,
    pub message: String,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
}

/// What went wrong, for the UI to switch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AppErrorKind {
    /// The config file is not valid JSON (`line`, `column` say where).
    ConfigSyntax,
    /// A field of the config has the wrong type (`line`, `column` say where).
    ConfigType,
    /// The config parses but breaks a rule (every problem in `message`).
    ConfigInvalid,
    /// The file changed on disk since it was read; nothing was written.
    ConfigConflict,
    /// A file could not be read or written.
    Io,
    /// No such session or turn (an id that cannot name a session included).
    NotFound,
    /// A session with that id exists already.
    SessionExists,
    /// An edit that cannot be made as asked (an entry that exists already, an
    /// agent that is not there, the primary removed…); nothing was written.
    EditRefused,
    /// The system keyring is not there, is locked, or refused the key (the
    /// message says which; it never holds the key).
    Keyring,
    /// A request the window made cannot be read (a date that is not YYYY-MM-DD).
    BadRequest,
    /// The call runs but cannot take a message (the message says why).
    NotSteerable,
}

impl AppError {
    pub(crate) fn new(kind: AppErrorKind, message: String) -> AppError {
        AppError { kind, message, path: None, line: None, column: None }
    }
}

impl From<SessionError> for AppError {
    fn from(error: SessionError) -> AppError {
        let kind = match &error {
            SessionError::NotFound(_)
            | SessionError::BadId(_)
            | SessionError::NoTurn { .. }
            | SessionError::NoCall { .. } => AppErrorKind::NotFound,
            SessionError::Exists(_) => AppErrorKind::SessionExists,
            SessionError::NotResumable { .. } => AppErrorKind::BadRequest,
            SessionError::Io { .. } => AppErrorKind::Io,
        };
        AppError::new(kind, error.to_string())
    }
}

impl From<ConfigError> for AppError {
    fn from(error: ConfigError) -> AppError {
        AppError::from(&error)
    }
}

impl From<&ConfigError> for AppError {
    fn from(error: &ConfigError) -> AppError {
        let message = error.to_string();
        let (kind, path, line, column) = match error {
            ConfigError::Io { path, .. } => (AppErrorKind::Io, Some(path), None, None),
            ConfigError::Syntax { path, line, column, .. } => {
                (AppErrorKind::ConfigSyntax, Some(path), Some(*line), Some(*column))
            }
            ConfigError::Type { path, line, column, .. } => {
                (AppErrorKind::ConfigType, Some(path), Some(*line), Some(*column))
            }
            ConfigError::Invalid { path, .. } => (AppErrorKind::ConfigInvalid, Some(path), None, None),
            ConfigError::Conflict { path } => (AppErrorKind::ConfigConflict, Some(path), None, None),
        };
        AppError {
            kind,
            message,
            path: path.map(|path| path.display().to_string()),
            line: line.map(|line| line as u32),
            column: column.map(|column| column as u32),
        }
    }
}

impl From<EditError> for AppError {
    fn from(error: EditError) -> AppError {
        match error {
            EditError::Config(error) => AppError::from(error),
            EditError::NotFound(message) | EditError::AlreadyExists(message) | EditError::Refused(message) => {
                AppError::new(AppErrorKind::EditRefused, message)
            }
        }
    }
}
