//! The app's built-in MCP endpoint (off by default; a switch in settings): the
//! same `switchboard-mcp` server as `switchboard mcp --http`, on loopback, serving
//! the global tool-agents, to clients that hold its bearer token (made at the
//! first start, kept in the system keyring, shown once, rotatable; a client's
//! config names the variable it reads it from). Approvals are answered in the
//! window, never by a client (elicitation is not offered: a client is not the
//! user), and a client's name is shown as what it says it is. Each call that comes in is kept as a turn of the "MCP
//! calls" session (logged like any turn) and streamed to the window as
//! `OutsideCall` updates, so it shows live in the call tree, where its approvals
//! are answered and it can be cancelled like any other turn (and exported as a
//! trace like one, when trace export is on).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use specta::Type;
use switchboard_core::event::now_ms;
use switchboard_core::sessions::{ChatSessions, OutsideTurn, Show, TurnUpdate};
use switchboard_core::{Dispatcher, TurnControl};
use switchboard_mcp::http::{self, Endpoint, HttpOptions};
use switchboard_mcp::{CallObserver, IncomingCall, McpServer, ObservedCall, PipelineCall, ServerOptions};

/// The session the calls of MCP clients are kept in.
pub const SESSION_ID: &str = "mcp-calls";
const SESSION_TITLE: &str = "MCP calls";
/// The port used when the user has not chosen one.
pub const DEFAULT_PORT: u16 = 8765;

/// A call from an MCP client, as the window follows it: it started, one of its
/// events, or it ended (the core's `TurnUpdate`, as every turn is shown; the window's
/// own turns and re-runs come through their command's channel). One event name
/// for all three keeps them in order.
#[derive(Debug, Clone, Serialize, Deserialize, Type, tauri_specta::Event)]
pub struct OutsideCall {
    pub session_id: String,
    pub turn_id: String,
    pub update: TurnUpdate,
}

/// The built-in endpoint as settings show it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, Type)]
pub struct McpServerStatus {
    pub running: bool,
    /// `http://127.0.0.1:PORT/mcp` while running.
    pub url: Option<String>,
    /// A client config to paste (the `mcpServers` form of Claude Code's `.mcp.json`).
    pub client_config: Option<String>,
    /// Why it is not running although it was switched on (the port is taken…).
    pub error: Option<String>,
    /// Each MCP client's own config for the endpoint, as `switchboard mcp connect` gives it.
    #[serde(default)]
    pub clients: Vec<McpClientSetup>,
    /// The bearer token, only in the answer that made it (a first start, a
    /// rotation): shown once, to copy.
    pub token: Option<String>,
    /// Whether the token is kept in the system keyring (else it lasts this run).
    #[serde(default)]
    pub token_kept: bool,
    /// The variable clients read the token from (`SWITCHBOARD_MCP_TOKEN`).
    pub token_env: Option<String>,
}

/// The endpoint's bearer token, and whether the keyring keeps it.
#[derive(Clone)]
pub struct EndpointToken {
    value: String,
    kept: bool,
}

impl EndpointToken {
    /// The token itself, for the one answer that shows it.
    pub fn value_to_show(&self) -> String {
        self.value.clone()
    }
}

/// The endpoint's token: the keyring's, or (none there, or `rotate`) a new one,
/// stored there; for this run only when no keyring answers. `true` when made now.
pub async fn endpoint_token(keys: &switchboard_core::keys::Keys, rotate: bool) -> (EndpointToken, bool) {
    use switchboard_mcp::http::{new_token, DESKTOP_TOKEN_ENTRY};
    if !rotate {
        if let Ok(Some(value)) = switchboard_core::keys::read(keys, DESKTOP_TOKEN_ENTRY).await {
            return (EndpointToken { value, kept: true }, false);
        }
    }
    let value = new_token();
    let (store, kept_value) = (keys.clone(), value.clone());
    let stored = tauri::async_runtime::spawn_blocking(move || store.set(DESKTOP_TOKEN_ENTRY, &kept_value)).await;
    let kept = match stored {
        Ok(Ok(())) => true,
        Ok(Err(error)) => {
            tracing::warn!(%error, "the MCP endpoint's token is not kept: it lasts until the app quits");
            false
        }
        Err(_) => false,
    };
    (EndpointToken { value, kept }, true)
}

/// One MCP client's setup for the endpoint, to copy.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct McpClientSetup {
    /// `claude-code`, `codex`, `gemini` or `qwen`: the name `switchboard mcp connect` takes.
    pub client: String,
    pub label: String,
    /// Where the entry goes (`.mcp.json` in the project, `~/.codex/config.toml`…).
    pub file: String,
    pub entry: String,
    /// The client's own command that adds it, where it has one.
    pub command: Option<String>,
    /// Whether it reads the structured result, and what it does with approvals.
    pub notes: String,
}

/// Every client's setup for the endpoint at `url`.
fn client_setups(url: &str) -> Vec<McpClientSetup> {
    use switchboard_mcp::connect::{setup, Launch, McpClient};
    let launch =
        Launch::Http { url: url.to_string(), token_env: Some(switchboard_mcp::http::DESKTOP_TOKEN_ENV.to_string()) };
    McpClient::ALL
        .into_iter()
        .map(|client| {
            let shown = setup(client, &launch);
            let file = if client.in_project() { shown.file.to_string() } else { format!("~/{}", shown.file) };
            McpClientSetup {
                client: client.name().into(),
                label: client.label().into(),
                file,
                entry: shown.entry,
                command: shown.command,
                notes: shown.notes.into(),
            }
        })
        .collect()
}

/// The running endpoint and its server, while the switch is on.
pub struct Running {
    pub server: McpServer,
    endpoint: Endpoint,
    token: EndpointToken,
}

impl Running {
    /// Its status; with the token itself when `reveal` (the answer that made it).
    pub fn status(&self, reveal: bool) -> McpServerStatus {
        let url = self.endpoint.url();
        let clients = client_setups(&url);
        McpServerStatus {
            running: true,
            client_config: clients.first().map(|claude| claude.entry.clone()),
            url: Some(url),
            error: None,
            clients,
            token: reveal.then(|| self.token.value.clone()),
            token_kept: self.token.kept,
            token_env: Some(switchboard_mcp::http::DESKTOP_TOKEN_ENV.to_string()),
        }
    }

    pub fn port(&self) -> u16 {
        self.endpoint.address.port()
    }

    /// Stops accepting and returns once the accept loop has ended, so the port is
    /// closed when the switch says off (calls already running end gracefully).
    pub async fn stop(self) {
        self.endpoint.shutdown.cancel();
        let _ = self.endpoint.task.await;
    }
}

/// How updates reach the window (an emit of `OutsideCall` on the app's handle).
pub type Emitter = Arc<dyn Fn(OutsideCall) + Send + Sync>;

/// What the endpoint shares with the rest of the app.
pub struct Shared {
    pub emit: Emitter,
    pub dispatcher: Arc<Dispatcher>,
    pub sessions: Arc<ChatSessions>,
}

/// Starts the endpoint on loopback `port` (0 picks a free one), behind `token`.
pub async fn start(shared: Shared, port: u16, token: EndpointToken) -> Result<Running, String> {
    let Shared { emit, dispatcher, sessions } = shared;
    let observer = Arc::new(WindowObserver { emit, sessions, dispatcher: dispatcher.clone() });
    let options = ServerOptions {
        as_agent: None,
        approve: switchboard_core::ApprovalPolicy::Ask,
        observer: Some(observer),
        clients_answer_approvals: false,
        keepalive: None,
        task_ttl: None,
    };
    let server = McpServer::new(dispatcher, options);
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let http_options = HttpOptions {
        address,
        bearer_token: Some(token.value.clone()),
        allow_remote: false,
        session_idle: switchboard_mcp::sessions::DEFAULT_IDLE,
        max_sessions: switchboard_mcp::sessions::DEFAULT_CAP,
    };
    let endpoint = http::serve(server.clone(), http_options).await.map_err(|error| error.to_string())?;
    Ok(Running { server, endpoint, token })
}

struct WindowObserver {
    emit: Emitter,
    sessions: Arc<ChatSessions>,
    dispatcher: Arc<Dispatcher>,
}

impl CallObserver for WindowObserver {
    fn started(&self, call: &IncomingCall, control: &TurnControl) -> Box<dyn ObservedCall> {
        let turn = OutsideTurn {
            session_id: SESSION_ID.into(),
            turn_id: switchboard_core::sessions::new_turn_id("mcp-", now_ms()),
        };
        // Any holder of the token may call; its name is only what it says.
        let client: String = call.client.chars().take(80).collect();
        let line = format!("MCP client {client:?} (unverified name) → {}: {}", call.tool, call.request);
        let (emit, session_id, turn_id) = (self.emit.clone(), turn.session_id.clone(), turn.turn_id.clone());
        let show: Show = Arc::new(move |update: TurnUpdate| {
            emit(OutsideCall { session_id: session_id.clone(), turn_id: turn_id.clone(), update })
        });
        // Logged, traced (when export is on), then shown, as every turn is; a call
        // the log refused still answers its client, unseen in the window.
        let pipeline = self.sessions.ensure(SESSION_ID, SESSION_TITLE).and_then(|()| {
            let config = self.dispatcher.config();
            self.sessions.begin_outside_turn(&config, &turn, (&line, &call.agent), control, show)
        });
        let pipeline = match pipeline {
            Ok(pipeline) => Some(pipeline),
            Err(error) => {
                tracing::warn!(%error, "an MCP call could not be logged, so it is not shown");
                None
            }
        };
        Box::new(PipelineCall::new(pipeline, &call.agent))
    }

    fn answers_approvals(&self) -> bool {
        true
    }
}
