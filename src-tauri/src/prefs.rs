//! The window's preferences (theme: light, dark or the system's; side panel
//! width, last session, the agent each chat talks to, the built-in MCP
//! endpoint's switch and port) in
//! `prefs.json` in the app's data folder, kept through `tauri-plugin-store` and
//! used from Rust only: the webview asks for them and sends changes, names no
//! file, and holds no store permission. The file is read again for each request
//! (another instance, or a person, may have changed it); a missing or damaged
//! file reads as no preferences; a change keeps the fields it does not name.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use specta::Type;
use tauri::Runtime;
use tauri_plugin_store::Store;

use crate::error::{AppError, AppErrorKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    Light,
    Dark,
    /// Follow the system's light or dark setting (what a theme never set means too).
    System,
}

/// How many chats may keep an agent of their own (older choices are dropped by the UI).
pub const MAX_CHAT_AGENTS: usize = 1000;

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
    /// The agent each chat's messages go to, by session id (the primary when a
    /// chat has none). A change replaces the whole map; at most `MAX_CHAT_AGENTS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_agents: Option<std::collections::BTreeMap<String, String>>,
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

/// Where the preferences are kept: the plugin's store (any runtime, so the
/// state that holds it is not generic).
trait Backing: Send + Sync {
    /// The file's keys and values as they are on disk now.
    fn read(&self) -> Result<Map<String, Value>, tauri_plugin_store::Error>;
    /// Replaces what the file holds with `values` and saves it.
    fn write(&self, values: Map<String, Value>) -> Result<(), tauri_plugin_store::Error>;
}

impl<R: Runtime> Backing for Arc<Store<R>> {
    fn read(&self) -> Result<Map<String, Value>, tauri_plugin_store::Error> {
        self.reload_ignore_defaults()?;
        Ok(self.entries().into_iter().collect())
    }

    fn write(&self, values: Map<String, Value>) -> Result<(), tauri_plugin_store::Error> {
        self.clear();
        for (key, value) in values {
            self.set(key, value);
        }
        self.save()
    }
}

/// The preferences of one app, with a lock so two changes never interleave.
pub struct PreferencesFile {
    backing: Box<dyn Backing>,
    lock: Mutex<()>,
}

impl std::fmt::Debug for PreferencesFile {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PreferencesFile").finish_non_exhaustive()
    }
}

impl PreferencesFile {
    /// The preferences in `store` (the plugin's store of `prefs.json`, built with
    /// auto-save off: a change is saved as it is made).
    pub fn new<R: Runtime>(store: Arc<Store<R>>) -> PreferencesFile {
        PreferencesFile { backing: Box::new(store), lock: Mutex::new(()) }
    }

    pub fn read(&self) -> Preferences {
        let _guard = self.lock.lock().unwrap();
        self.read_unlocked()
    }

    fn read_unlocked(&self) -> Preferences {
        let values = match self.backing.read() {
            Ok(values) => values,
            Err(tauri_plugin_store::Error::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                return Preferences::default()
            }
            Err(error) => {
                tracing::warn!(%error, "preferences unreadable; using defaults");
                return Preferences::default();
            }
        };
        serde_json::from_value(Value::Object(values)).unwrap_or_else(|error| {
            tracing::warn!(%error, "preferences unreadable; using defaults");
            Preferences::default()
        })
    }

    /// Sets the fields `change` names and saves the file; returns the result.
    pub fn update(&self, change: Preferences) -> Result<Preferences, AppError> {
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
        if let Some(chosen) = change.chat_agents {
            if chosen.len() > MAX_CHAT_AGENTS || chosen.iter().any(|(id, agent)| id.len() > 200 || agent.len() > 200) {
                return Err(AppError::new(
                    AppErrorKind::Io,
                    format!("at most {MAX_CHAT_AGENTS} chats keep an agent of their own, each named in 200 bytes"),
                ));
            }
            preferences.chat_agents = Some(chosen);
        }
        if change.mcp_server.is_some() {
            preferences.mcp_server = change.mcp_server;
        }
        if change.mcp_port.is_some() {
            preferences.mcp_port = change.mcp_port;
        }
        let values = serde_json::to_value(&preferences)
            .ok()
            .and_then(|value| value.as_object().cloned())
            .expect("preferences serialize as an object");
        self.backing
            .write(values)
            .map_err(|error| AppError::new(AppErrorKind::Io, format!("the preferences could not be saved: {error}")))?;
        Ok(preferences)
    }
}
