//! The `mcp` provider: an agent that is one tool of an MCP server, reached over
//! stdio (`command`, `args`, `env`, `cwd`; the server runs in its own process group,
//! ended with the connection) or streamable HTTP (`url`, a bearer token by the name
//! in `api_key_env`), through the official SDK's client (rmcp). The server is
//! started on the first call and kept while the runner is cached (a config change
//! evicts it; a server that died is started again on the next call). A call sends
//! the delegate's input as text (its labelled context and any earlier conversation
//! included) in the tool's request argument, and its structured context as data in
//! `context_argument` when the agent names one; progress notifications stream back
//! as progress (a nested Switchboard's root text as text, its events as data); the
//! text content is the answer, a nested Switchboard's structured usage and cost
//! the call's; `isError` is a `remote` error; dropping the call (cancel, timeout)
//! sends `notifications/cancelled`. An agent with `tasks: true` declares the tasks
//! extension; a call the server makes a task of is polled to its end (`mcp/tasks.rs`).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, ContentBlock,
    JsonObject, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::mpsc;

use rmcp::transport::async_rw::AsyncRwTransport;

mod arguments;
mod cancel;
mod progress;
mod tasks;
mod transport;

use arguments::{argument_type, first_required_string};
use cancel::CancelOnDrop;
use progress::{forward, Client, RouteGuard};
use transport::{LineWatch, Oversized, Routes, Tapped};

use crate::config::AgentConfig;
use crate::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, RemoteTask, Runner, RunnerError};
use crate::event::{Steering, Usage};
use crate::http::{error_chain, Origins};
use crate::registry::{ProcessGroup, Registry};
use crate::{cut_note, max_output_bytes, redact, remote_connected, remote_latency, server_mark, truncate, within};

/// How long a call may take when the agent sets no `timeout_secs`.
const DEFAULT_TIMEOUT_SECS: u64 = 600;

pub struct McpRunner {
    agent: AgentConfig,
    registry: Arc<Registry>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

impl std::fmt::Debug for McpRunner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("McpRunner").field("agent", &self.agent.name).finish_non_exhaustive()
    }
}

struct Connection {
    service: RunningService<RoleClient, Client>,
    tool: Tool,
    request_argument: String,
    /// Where the structured context goes, and whether as JSON text (a string argument).
    context_argument: Option<(String, bool)>,
    routes: Arc<Mutex<Routes>>,
    /// The stdio server's process group, ended when the connection is dropped.
    _group: Option<ProcessGroup>,
    /// What the stdio server wrote to stderr lately, for errors.
    stderr: Arc<Mutex<String>>,
    /// How many messages were over the cap and dropped (a waiting call fails at once).
    oversized: Arc<Oversized>,
}

impl McpRunner {
    pub fn new(agent: &AgentConfig, registry: Arc<Registry>) -> Result<McpRunner, RunnerError> {
        match (&agent.command, &agent.url) {
            (Some(_), None) | (None, Some(_)) => {}
            _ => {
                return Err(RunnerError::Config(format!(
                    "agent {:?}: an mcp agent needs either `command` (stdio) or `url` (streamable HTTP)",
                    agent.name
                )))
            }
        }
        Ok(McpRunner { agent: agent.clone(), registry, connection: tokio::sync::Mutex::new(None) })
    }

    fn endpoint(&self) -> String {
        self.agent.url.clone().or_else(|| self.agent.command.clone()).unwrap_or_default()
    }

    /// The live connection, made (or made again, when the server went away) now.
    async fn connection(&self) -> Result<Arc<Connection>, RunnerError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref().filter(|connection| !connection.service.is_transport_closed()) {
            return Ok(connection.clone());
        }
        *slot = None;
        let connection = Arc::new(self.connect().await?);
        *slot = Some(connection.clone());
        Ok(connection)
    }

    async fn connect(&self) -> Result<Connection, RunnerError> {
        let routes = Arc::new(Mutex::new(Routes::default()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let oversized = Arc::new(tokio::sync::watch::channel(0).0);
        let (service, group) = self.open(routes.clone(), oversized.clone(), stderr.clone()).await?;
        let unreachable = |message: String| RunnerError::Unreachable { url: self.endpoint(), message };
        let tools = service.list_all_tools().await.map_err(|error| unreachable(format!("tools/list: {error}")))?;
        let tool = match &self.agent.tool {
            Some(name) => tools.iter().find(|tool| tool.name == *name).cloned(),
            None if tools.len() == 1 => tools.first().cloned(),
            None => None,
        };
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        let tool = tool.ok_or_else(|| {
            let wanted = match &self.agent.tool {
                Some(name) => format!("has no tool {name:?}"),
                None => "has more than one tool; name one with `tool`".into(),
            };
            RunnerError::Config(format!(
                "agent {:?}: the MCP server {wanted} (it has: {})",
                self.agent.name,
                names.join(", ")
            ))
        })?;
        let request_argument = match &self.agent.request_argument {
            Some(argument) => argument.clone(),
            None => first_required_string(&tool.input_schema).ok_or_else(|| {
                RunnerError::Config(format!(
                    "agent {:?}: tool {:?} has no required string argument for the request; set `request_argument`",
                    self.agent.name, tool.name
                ))
            })?,
        };
        let context_argument = match &self.agent.context_argument {
            Some(name) if *name == request_argument => {
                return Err(RunnerError::Config(format!(
                    "agent {:?}: `context_argument` {name:?} is also the request's argument; name another",
                    self.agent.name
                )))
            }
            Some(name) => Some((
                name.clone(),
                argument_type(&tool.input_schema, name).ok_or_else(|| {
                    RunnerError::Config(format!(
                        "agent {:?}: tool {:?} has no argument {name:?} for the context (`context_argument`)",
                        self.agent.name, tool.name
                    ))
                })? == "string",
            )),
            None => None,
        };
        Ok(Connection { service, tool, request_argument, context_argument, routes, _group: group, stderr, oversized })
    }

    /// The longest message read from the server: a result of `max_output_bytes`
    /// and 64 KiB for its envelope.
    fn message_limit(&self) -> usize {
        max_output_bytes(&self.agent).saturating_add(64 * 1024)
    }

    /// A session with the server: over streamable HTTP, or with a stdio server
    /// started now in its own process group (returned, so it ends with the session).
    async fn open(
        &self,
        routes: Arc<Mutex<Routes>>,
        oversized: Arc<Oversized>,
        stderr: Arc<Mutex<String>>,
    ) -> Result<(RunningService<RoleClient, Client>, Option<ProcessGroup>), RunnerError> {
        let Some(url) = &self.agent.url else {
            let (service, group) = self.spawn(routes, oversized, stderr).await?;
            return Ok((service, Some(group)));
        };
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
        config.max_sse_event_size = self.message_limit();
        config.max_json_response_size = self.message_limit();
        if let Some(variable) = &self.agent.api_key_env {
            let token = std::env::var(variable)
                .map_err(|_| RunnerError::Config(format!("agent {:?}: {variable} is not set", self.agent.name)))?;
            config = config.auth_header(token);
        }
        // Redirects are followed only within the origins the config names.
        let client = Origins::of(&self.agent).client(reqwest::Client::builder())?;
        let transport = Tapped { inner: StreamableHttpClientTransport::with_client(client, config), routes };
        let service = Client { tasks: self.agent.tasks == Some(true) }.serve(transport).await.map_err(|error| {
            RunnerError::Unreachable {
                url: self.endpoint(),
                message: format!("no MCP session: {}", error_chain(&error)),
            }
        })?;
        Ok((service, None))
    }

    async fn spawn(
        &self,
        routes: Arc<Mutex<Routes>>,
        oversized: Arc<Oversized>,
        stderr: Arc<Mutex<String>>,
    ) -> Result<(RunningService<RoleClient, Client>, ProcessGroup), RunnerError> {
        let command_name = self.agent.command.clone().unwrap_or_default();
        // The same environment rules as any subprocess agent: a minimal base, its
        // key variable and its own `env`, nothing else of the app's.
        let environment = crate::environment::of(&self.agent.name, self.agent.api_key_env.as_deref(), &self.agent.env)?;
        let mut command = tokio::process::Command::new(&command_name);
        command
            .args(&self.agent.args)
            .env_clear()
            .envs(environment)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        if let Some(cwd) = &self.agent.cwd {
            command.current_dir(cwd);
        }
        let mut child = command.spawn().map_err(|error| RunnerError::Unreachable {
            url: command_name.clone(),
            message: format!("cannot start the MCP server of agent {:?}: {error}", self.agent.name),
        })?;
        let group = ProcessGroup::of(&child, &self.registry);
        let (stdout, stdin) = (child.stdout.take().expect("piped"), child.stdin.take().expect("piped"));
        if let Some(mut pipe) = child.stderr.take() {
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buffer = [0u8; 4096];
                while let Ok(read) = pipe.read(&mut buffer).await {
                    if read == 0 {
                        break;
                    }
                    let mut kept = stderr.lock().unwrap();
                    kept.push_str(&String::from_utf8_lossy(&buffer[..read]));
                    if kept.len() > 8192 {
                        let cut = kept.len() - 4096;
                        let cut = (cut..kept.len()).find(|index| kept.is_char_boundary(*index)).unwrap_or(0);
                        kept.drain(..cut);
                    }
                }
            });
        }
        // The child is reaped by its own task once it exits (the group ends it).
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let limit = self.message_limit();
        let stdout = LineWatch { inner: stdout, limit, line: 0, oversized };
        let transport = AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(limit);
        let service = Client { tasks: self.agent.tasks == Some(true) }
            .serve(Tapped { inner: transport, routes })
            .await
            .map_err(|error| RunnerError::Unreachable {
                url: command_name,
                message: format!(
                    "the MCP server of agent {:?} did not start a session: {}",
                    self.agent.name,
                    error_chain(&error)
                ),
            })?;
        Ok((service, group))
    }

    async fn call(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let started = std::time::Instant::now();
        let connection = self.connection().await?;
        let connected = started.elapsed();
        on_delta(remote_connected(&self.endpoint(), connected));
        if let Some(task) = request.remote_task.as_ref().filter(|task| self.started_here(task, on_delta)) {
            let (peer, guarded) = (connection.service.peer(), |notice| self.cancel_guard(&connection, notice));
            if let Some(result) = tasks::reattach(peer, &task.id, guarded, &self.endpoint(), on_delta).await {
                let total = started.elapsed();
                on_delta(remote_latency(&self.endpoint(), connected, total, total));
                return self.reply(result?, String::new());
            }
        }
        let text = request.prompt_text();
        let mut arguments = JsonObject::new();
        arguments.insert(connection.request_argument.clone(), Value::String(text));
        if let (Some((name, as_text)), Some(context)) = (&connection.context_argument, &request.context) {
            let value = if *as_text { Value::String(context.to_string()) } else { context.clone() };
            arguments.insert(name.clone(), value);
        }
        let params = CallToolRequestParams::new(connection.tool.name.clone()).with_arguments(arguments);
        let request_message = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = connection.service.peer().clone();
        // Watched from before the request goes, so a message dropped as too large
        // while it is sent is seen.
        let mut oversized = connection.oversized.subscribe();
        let handle = peer
            .send_request_with_option(request_message, PeerRequestOptions::no_options())
            .await
            .map_err(|error| self.failure(&connection, format!("tools/call: {error}")))?;
        let (progress_sender, mut progress) = mpsc::unbounded_channel();
        connection.routes.lock().unwrap().claim(&handle.progress_token, progress_sender);
        let (id, reason) = (handle.id.clone(), Some("cancelled by the caller".to_string()));
        let mut guard = self.cancel_guard(&connection, async move {
            let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), reason)).await;
        });
        let _route = RouteGuard { routes: connection.routes.clone(), token: handle.progress_token.clone() };
        let idle = Duration::from_secs(request.idle_timeout_secs.or(self.agent.idle_timeout_secs).unwrap_or(600));
        let limit = max_output_bytes(&self.agent);
        let mut response = handle.rx;
        let mut streamed = String::new();
        let mut first_event: Option<Duration> = None;
        let mut last_news = tokio::time::Instant::now();
        let result = loop {
            tokio::select! {
                // Progress read before the answer is in the channel before the answer
                // is delivered (`mcp_transport.rs`): it goes out first, in order.
                biased;
                Some(notification) = progress.recv() => {
                    first_event.get_or_insert_with(|| started.elapsed());
                    forward(notification, on_delta, &mut streamed, limit);
                    last_news = tokio::time::Instant::now();
                }
                answer = &mut response => break answer,
                Ok(()) = oversized.changed() => {
                    return Err(RunnerError::MalformedStream {
                        url: self.endpoint(),
                        message: format!(
                            "the server sent a message of more than {} bytes (max_output_bytes and 64 KiB): \
                             too large, dropped; raise the agent's max_output_bytes to take it",
                            self.message_limit()
                        ),
                    });
                }
                () = tokio::time::sleep_until(last_news + idle) => {
                    return Err(RunnerError::Idle { url: self.endpoint(), secs: idle.as_secs() });
                }
            }
        };
        while let Ok(notification) = progress.try_recv() {
            forward(notification, on_delta, &mut streamed, limit);
        }
        guard.disarm(); // answered: nothing to cancel
        let result = match result {
            Ok(Ok(ServerResult::CallToolResult(result))) => result,
            // The server made a task of it (the agent asked for tasks): polled to its end.
            Ok(Ok(ServerResult::CreateTaskResult(created))) => {
                let peer = connection.service.peer().clone();
                tasks::follow(
                    &peer,
                    created.task,
                    |notice| self.cancel_guard(&connection, notice),
                    &self.endpoint(),
                    self.agent.url.is_some(),
                    on_delta,
                )
                .await?
            }
            Ok(Ok(other)) => return Err(self.failure(&connection, format!("tools/call answered {other:?}"))),
            // Over HTTP the SDK closes the connection on a message over its limits,
            // and says why only in its log: the likely cause is named.
            Ok(Err(rmcp::ServiceError::TransportClosed)) if self.agent.url.is_some() => {
                let message = format!(
                    "tools/call: the connection closed before the answer (the server went away, or sent a message \
                     over {} bytes: max_output_bytes and 64 KiB)",
                    self.message_limit()
                );
                return Err(self.failure(&connection, message));
            }
            Ok(Err(error)) => return Err(self.failure(&connection, format!("tools/call: {error}"))),
            Err(_) => return Err(self.failure(&connection, "the MCP session ended before the answer".into())),
        };
        let total = started.elapsed();
        on_delta(remote_latency(&self.endpoint(), connected, first_event.unwrap_or(total), total));
        self.reply(result, streamed)
    }

    /// The server's tools, as `switchboard agent probe` lists them: connects (or
    /// reuses the connection) and asks `tools/list`.
    pub async fn probe(&self) -> Result<Vec<Tool>, RunnerError> {
        let connection = match self.connection().await {
            Ok(connection) => connection,
            // A server that answers but lacks the configured tool still has a list
            // to show: a session of its own, ended when the list is read.
            Err(RunnerError::Config(_)) => {
                let (service, _group) =
                    self.open(Arc::default(), Arc::new(tokio::sync::watch::channel(0).0), Arc::default()).await?;
                return service.list_all_tools().await.map_err(|error| RunnerError::Unreachable {
                    url: self.endpoint(),
                    message: format!("tools/list: {error}"),
                });
            }
            Err(error) => return Err(error),
        };
        connection
            .service
            .list_all_tools()
            .await
            .map_err(|error| self.failure(&connection, format!("tools/list: {error}")))
    }

    /// Whether a resumed call's task can be followed here: it was started on this
    /// agent's HTTP server (a stdio server's tasks ended with the process that
    /// started it); said as progress when not.
    fn started_here(&self, task: &RemoteTask, on_delta: DeltaSink<'_>) -> bool {
        let here = self.agent.url.is_some() && task.server == server_mark(&self.endpoint());
        if !here {
            let message = format!(
                "task {} was started on another server than this agent's (its url changed, or it is not over \
                 HTTP): the call is asked again",
                truncate(&task.id, 80)
            );
            on_delta(ModelDelta::Progress { message, data: None });
        }
        here
    }

    /// The guard of a call on `connection`: its notice holds the connection, so the
    /// session is still open when the notice goes out, even if the cache (or the
    /// whole dispatcher) was dropped with the call, as a shell does when it exits.
    fn cancel_guard(
        &self,
        connection: &Arc<Connection>,
        notice: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> CancelOnDrop {
        let open = connection.clone();
        CancelOnDrop::new(&self.registry, async move {
            notice.await;
            drop(open);
        })
    }

    /// An error for a call that got no answer, with the server's last words.
    fn failure(&self, connection: &Connection, message: String) -> RunnerError {
        let stderr = connection.stderr.lock().unwrap().clone();
        let tail: String =
            stderr.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
        let message = if tail.is_empty() { message } else { format!("{message}; it wrote: {}", truncate(&tail, 500)) };
        RunnerError::Unreachable { url: self.endpoint(), message }
    }

    fn reply(&self, result: CallToolResult, streamed: String) -> Result<ModelReply, RunnerError> {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|content| match content {
                ContentBlock::Text(text) => Some(text.text.clone()),
                ContentBlock::Image(image) => Some(format!("[image: {}]", image.mime_type)),
                ContentBlock::Audio(audio) => Some(format!("[audio: {}]", audio.mime_type)),
                _ => None,
            })
            .collect();
        let mut text = text.join("\n");
        if text.is_empty() {
            text = streamed;
        }
        let limit = max_output_bytes(&self.agent);
        if text.len() > limit {
            let cut = (0..=limit).rev().find(|index| text.is_char_boundary(*index)).unwrap_or(0);
            let dropped = text.len() - cut;
            text.truncate(cut);
            text.push_str(&cut_note(limit, Some(dropped as u64)));
        }
        if result.is_error == Some(true) {
            return Err(RunnerError::Remote { url: self.endpoint(), message: truncate(&redact(&text, None), 1000) });
        }
        let structured = result.structured_content.as_ref();
        let usage = structured
            .and_then(|content| content.get("usage_total").or_else(|| content.get("usage")))
            .and_then(|usage| serde_json::from_value::<Usage>(usage.clone()).ok());
        let cost = structured.and_then(|content| content.get("cost_total")).and_then(Value::as_f64);
        Ok(ModelReply { text, tool_calls: vec![], usage, cost })
    }
}

#[async_trait]
impl Runner for McpRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secs = self.agent.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        within(secs, self.call(request, on_delta)).await
    }

    fn accepts_tools(&self) -> bool {
        false
    }

    fn steering(&self) -> Steering {
        Steering::not(
            "an MCP tool call takes its arguments once: MCP has no message into a running call, only its cancellation",
        )
    }
}
