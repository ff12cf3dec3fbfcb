//! The window's preferences (theme: light, dark or the system's; side panel width, last session, the built-in
//! MCP endpoint's switch and port) in `prefs.json`
//! in the app's data folder, read and written by Rust only: the webview asks for
//! them and sends changes, and never names a file. A missing or damaged file reads
//! as no preferences; a change keeps the fields it does not name.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use specta::Type;
use switchboard_core::config::store::{write_atomic, ConfigError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    Light,
    Dark,
    /// Follow the system's light or dark setting (what a theme never set means too).
    System,
}

/// The preferences; an absent field is one never set (or, in a change, one left as it is).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
#[serde(rename_all = "camelCase")]
pub struct Preferences {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right_width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_session: Option<String>,
    /// The built-in MCP endpoint is on (off when never set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<bool>,
    /// Its loopback port (8765 when never set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_port: Option<u16>,
    /// Keys an older or newer version wrote; kept.
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

/// The preferences file of one app, with a lock so two changes never interleave.
#[derive(Debug)]
pub struct PreferencesFile {
    path: PathBuf,
    lock: Mutex<()>,
}

impl PreferencesFile {
    pub fn new(data_dir: &Path) -> PreferencesFile {
        PreferencesFile { path: data_dir.join("prefs.json"), lock: Mutex::new(()) }
    }

    pub fn read(&self) -> Preferences {
        let _guard = self.lock.lock().unwrap();
        self.read_unlocked()
    }

    fn read_unlocked(&self) -> Preferences {
        let Ok(bytes) = std::fs::read(&self.path) else { return Preferences::default() };
        serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(%error, path = %self.path.display(), "preferences unreadable; using defaults");
            Preferences::default()
        })
    }

    /// Sets the fields `change` names and writes the file; returns the result.
    pub fn update(&self, change: Preferences) -> Result<Preferences, ConfigError> {
        let _guard = self.lock.lock().unwrap();
        let mut preferences = self.read_unlocked();
        if change.theme.is_some() {
            preferences.theme = change.theme;
        }
        if change.right_width.is_some() {
            preferences.right_width = change.right_width;
        }
        if change.last_session.is_some() {
            preferences.last_session = change.last_session;
        }
        if change.mcp_server.is_some() {
            preferences.mcp_server = change.mcp_server;
        }
        if change.mcp_port.is_some() {
            preferences.mcp_port = change.mcp_port;
        }
        let bytes = serde_json::to_vec_pretty(&preferences).expect("preferences serialize");
        write_atomic(&self.path, &bytes)?;
        Ok(preferences)
    }
}
