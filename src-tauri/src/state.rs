//! What the app keeps between commands: the live config (the core's: load, the
//! first-start default, the broken-file fallback, the watcher, edits) with the
//! window told of each change, the chat sessions, the preferences, the built-in
//! MCP endpoint while it is on, and trace export.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::config::{EffectiveApprovals, Problem};
use switchboard_core::live::{ConfigChange, LiveConfig, Snapshot};
use switchboard_core::sessions::ChatSessions;
use switchboard_core::Config;
use switchboard_mcp::McpServer;
use switchboard_otel::Telemetry;

use crate::error::AppError;
use crate::mcp::{self, McpServerStatus};
use crate::prefs::PreferencesFile;

/// The config as the settings area shows it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ConfigState {
    pub path: String,
    pub version: Option<String>,
    /// The config in force (the last good one when the file on disk is broken).
    pub config: Config,
    pub warnings: Vec<Problem>,
    /// Why the file on disk is not in force, if it is not.
    pub error: Option<AppError>,
    /// The app created the config at this start (the demo agents) and nothing has
    /// been edited since: the UI offers the setup wizard.
    pub first_start: bool,
    /// The approval in force for each entry and agent, as the dispatcher decides it.
    pub approvals: EffectiveApprovals,
}

/// Emitted when the config file changed on disk and was reloaded (or refused).
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct ConfigChanged {
    pub version: Option<String>,
    pub changed_agents: Vec<String>,
    pub error: Option<AppError>,
}

/// What the app keeps between commands.
pub struct AppState {
    pub(crate) live: LiveConfig,
    pub(crate) sessions: Arc<ChatSessions>,
    pub(crate) preferences: PreferencesFile,
    /// The built-in MCP endpoint while it is switched on.
    mcp: tokio::sync::Mutex<Option<mcp::Running>>,
    /// Its bearer token, once read or made (for this run only without a keyring).
    mcp_token: tokio::sync::Mutex<Option<mcp::EndpointToken>>,
    /// Its server, for a config change to announce list changes.
    mcp_server: Arc<Mutex<Option<McpServer>>>,
    /// How an MCP call's updates reach the window.
    pub(crate) emit_outside: mcp::Emitter,
    /// Trace export, when the config or the `OTEL_*` variables ask for it.
    pub(crate) telemetry: Option<Arc<Telemetry>>,
    /// Why export is off although it was asked for.
    pub(crate) telemetry_problem: Option<String>,
    /// The system's save dialog, set once the app is built (exports open it from Rust).
    pub(crate) save_dialog: std::sync::OnceLock<crate::commands::export::SaveDialog>,
}

/// Trace export as settings and the status bar show it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, Type)]
pub struct TelemetryStatus {
    /// The OTLP endpoint spans go to; none when export is off.
    pub exporting_to: Option<String>,
    pub spans_sent: u32,
    /// The last failed export (until one succeeds): a warning, never a turn's error.
    pub last_error: Option<String>,
    /// Why export is off although it was asked for (a header's variable not set…).
    pub problem: Option<String>,
}

impl AppState {
    /// Opens the live config at `config_path` (created on a first start at the
    /// default location; a broken file shown, not replaced) and watches it;
    /// `on_change` is told about every change, from disk or from an edit here.
    pub fn open(
        config_path: PathBuf,
        data_dir: PathBuf,
        preferences: PreferencesFile,
        on_change: impl Fn(ConfigChanged) + Send + Sync + 'static,
        emit_outside: mcp::Emitter,
    ) -> Result<AppState, AppError> {
        let live = LiveConfig::open(&config_path);
        let mcp_server: Arc<Mutex<Option<McpServer>>> = Arc::default();
        let announce = mcp_server.clone();
        let watching = live.watch(move |change| {
            if let ConfigChange::Applied { .. } = change {
                // The MCP endpoint's clients are told that the tool list changed.
                if let Some(server) = announce.lock().unwrap().clone() {
                    tauri::async_runtime::spawn(async move { server.config_changed().await });
                }
            }
            on_change(ConfigChanged::from(change));
        });
        if let Err(error) = watching {
            tracing::warn!(%error, "config hot reload is off");
        }
        let sessions = Arc::new(ChatSessions::open(data_dir.join("sessions"))?);
        let (telemetry, telemetry_problem) = match Telemetry::from_config(&live.dispatcher().config()) {
            Ok(telemetry) => (telemetry.map(Arc::new), None),
            Err(problem) => (None, Some(problem)),
        };
        // Every turn (chat, re-run, MCP call) is traced through the sessions' pipeline.
        sessions
            .set_tracer(telemetry.clone().map(|telemetry| telemetry as Arc<dyn switchboard_core::sessions::Tracer>));
        Ok(AppState {
            live,
            sessions,
            preferences,
            mcp: tokio::sync::Mutex::new(None),
            mcp_token: tokio::sync::Mutex::new(None),
            mcp_server,
            emit_outside,
            telemetry,
            telemetry_problem,
            save_dialog: std::sync::OnceLock::new(),
        })
    }

    pub(crate) fn config_state(&self) -> ConfigState {
        ConfigState::from(self.live.snapshot())
    }

    /// The built-in MCP endpoint's status now.
    pub(crate) async fn mcp_status(&self) -> McpServerStatus {
        self.mcp.lock().await.as_ref().map(|running| running.status(false)).unwrap_or_default()
    }

    /// A new token for the built-in MCP endpoint (the old one stops working; a
    /// running endpoint starts again on its port with the new one); shown once.
    pub(crate) async fn rotate_mcp_token(&self) -> McpServerStatus {
        let keys = self.live.dispatcher().runners().registry().keys().clone();
        let (token, _) = mcp::endpoint_token(&keys, true).await;
        *self.mcp_token.lock().await = Some(token.clone());
        let running_port = self.mcp.lock().await.as_ref().map(mcp::Running::port);
        match running_port {
            Some(port) => self.switch_mcp_with(true, port, Some(token)).await,
            None => McpServerStatus { token: Some(token.value_to_show()), ..McpServerStatus::default() },
        }
    }

    /// Switches the built-in MCP endpoint on (on `port`) or off.
    pub(crate) async fn switch_mcp(&self, enabled: bool, port: u16) -> McpServerStatus {
        self.switch_mcp_with(enabled, port, None).await
    }

    /// `switch_mcp`, showing `fresh` (a token made now) in the answer.
    async fn switch_mcp_with(&self, enabled: bool, port: u16, fresh: Option<mcp::EndpointToken>) -> McpServerStatus {
        let mut running = self.mcp.lock().await;
        if let Some(previous) = running.take() {
            previous.stop().await;
            *self.mcp_server.lock().unwrap() = None;
        }
        if !enabled {
            return McpServerStatus::default();
        }
        let shared = mcp::Shared {
            emit: self.emit_outside.clone(),
            dispatcher: self.live.dispatcher().clone(),
            sessions: self.sessions.clone(),
        };
        let (token, made_now) = {
            let mut kept = self.mcp_token.lock().await;
            match (&fresh, kept.clone()) {
                (Some(fresh), _) => (fresh.clone(), true),
                (None, Some(token)) => (token, false),
                (None, None) => {
                    let keys = self.live.dispatcher().runners().registry().keys().clone();
                    let (token, made_now) = mcp::endpoint_token(&keys, false).await;
                    *kept = Some(token.clone());
                    (token, made_now)
                }
            }
        };
        let started = mcp::start(shared, port, token).await;
        match started {
            Ok(endpoint) => {
                let status = endpoint.status(made_now);
                *self.mcp_server.lock().unwrap() = Some(endpoint.server.clone());
                *running = Some(endpoint);
                status
            }
            Err(error) => McpServerStatus { error: Some(error), ..McpServerStatus::default() },
        }
    }

    /// What the app does as it exits: every agent and kept MCP stdio server still
    /// running is ended (one that ignores SIGTERM gets its SIGKILL), and the last
    /// turns' spans are sent. The runner cache's reaper ends the agents if the app
    /// is killed instead.
    pub(crate) fn exit(&self) {
        self.live.dispatcher().runners().shutdown();
        if let Some(Err(error)) = self.telemetry.as_ref().map(|telemetry| telemetry.finish()) {
            tracing::warn!(%error, "the last traces could not be sent");
        }
    }
}

impl From<Snapshot> for ConfigState {
    fn from(snapshot: Snapshot) -> ConfigState {
        ConfigState {
            path: snapshot.path.display().to_string(),
            version: snapshot.version.map(|version| version.0),
            config: (*snapshot.config).clone(),
            warnings: snapshot.warnings,
            error: snapshot.error.as_deref().map(AppError::from),
            first_start: snapshot.first_start,
            approvals: snapshot.config.effective_approvals(),
        }
    }
}

impl From<&ConfigChange> for ConfigChanged {
    fn from(change: &ConfigChange) -> ConfigChanged {
        match change {
            ConfigChange::Applied { version, changed_agents } => {
                ConfigChanged { version: Some(version.0.clone()), changed_agents: changed_agents.clone(), error: None }
            }
            ConfigChange::Rejected { error } => {
                ConfigChanged { version: None, changed_agents: vec![], error: Some(AppError::from(error.as_ref())) }
            }
        }
    }
}
