//! `switchboard mcp`: serves the tool-agents of one agent (or the global entries)
//! to MCP clients, on stdio or on a loopback streamable HTTP endpoint, following
//! the config file as it changes (clients are told when their tool list did).

use std::net::SocketAddr;
use std::path::Path;

use std::process::ExitCode;
use std::sync::Arc;

use switchboard_core::live::{ConfigChange, LiveConfig};
use switchboard_core::sessions::{Show, TurnPipeline};
use switchboard_core::{Dispatcher, TurnControl};
use switchboard_mcp::http::{self, HttpOptions};
use switchboard_mcp::{CallObserver, IncomingCall, McpServer, ObservedCall, PipelineCall, ServerOptions};
use switchboard_otel::Telemetry;
use tokio_util::sync::CancellationToken;

use crate::{load, Failure, McpArgs};
use switchboard_core::runner::ending_signal;

pub(crate) fn mcp(path: &Path, arguments: McpArgs) -> Result<ExitCode, Failure> {
    let loaded = load(path)?;
    for warning in &loaded.warnings {
        eprintln!("{}: {warning}", path.display());
    }
    if let Some(agent) = &arguments.as_agent {
        if loaded.config.agent(agent).is_none() {
            return Err(Failure { code: 1, message: format!("--as {agent:?}: no agent of that name is configured") });
        }
    }
    let bearer_token = match &arguments.token_env {
        Some(name) => match std::env::var(name) {
            // A token anyone could guess (blank, or a few characters) protects nothing.
            Ok(token) if token.trim().len() >= 8 && token.trim() == token => Some(token),
            Ok(value) if !value.is_empty() => {
                let message = format!(
                    "--token-env {name}: the token is too weak (at least 8 characters, no spaces around it; \
                     `openssl rand -hex 32` makes one)"
                );
                return Err(Failure { code: 1, message });
            }
            _ => return Err(Failure { code: 1, message: format!("--token-env {name}: that variable is not set") }),
        },
        None => None,
    };
    let approve = arguments.approve;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|error| Failure { code: 1, message: format!("cannot start the runtime: {error}") })?;
    let live = LiveConfig::from_loaded(path, &loaded);
    let dispatcher = live.dispatcher().clone();
    let keepalive = Some(std::time::Duration::from_secs(arguments.keepalive.max(1)));
    let telemetry = crate::traces::start(&loaded.config);
    let observer = telemetry
        .clone()
        .map(|telemetry| Arc::new(Traced { telemetry, dispatcher: dispatcher.clone() }) as Arc<dyn CallObserver>);
    let options = ServerOptions {
        as_agent: arguments.as_agent.clone(),
        approve,
        observer,
        clients_answer_approvals: true,
        keepalive,
        task_ttl: Some(std::time::Duration::from_secs(arguments.task_ttl.max(1))),
    };
    let exiting = dispatcher.clone();
    let server = McpServer::new(dispatcher, options);
    let outcome = runtime.block_on(async {
        let handle = tokio::runtime::Handle::current();
        let watched = server.clone();
        let shown = path.display().to_string();
        live.watch(move |change| match change {
            ConfigChange::Applied { .. } => {
                let server = watched.clone();
                let shown = shown.clone();
                handle.spawn(async move {
                    if server.config_changed().await {
                        eprintln!("switchboard mcp: {shown} changed; clients were told the tool list changed");
                    }
                });
            }
            ConfigChange::Rejected { error } => {
                eprintln!("switchboard mcp: {error}\n(the last good config stays in force)");
            }
        })
        .map_err(Failure::from)?;
        let served = match arguments.http {
            Some(address) => serve_http(server, address, bearer_token, &arguments).await,
            None => {
                let shutdown = CancellationToken::new();
                tokio::select! {
                    served = switchboard_mcp::stdio::serve(server, shutdown.clone()) => {
                        served.map_err(|message| Failure { code: 1, message })
                    }
                    _ = ending_signal() => {
                        shutdown.cancel();
                        Ok(())
                    }
                }
            }
        };
        // Remote MCP tools of calls cancelled with the session are told to stop while
        // the runtime still runs (its shutdown would drop the notices unsent).
        tokio::task::yield_now().await;
        let registry = exiting.runners().registry().clone();
        let _ = tokio::task::spawn_blocking(move || registry.finish_pending()).await;
        served
    });
    // Every call was cancelled with the session; an agent that ignored SIGTERM gets
    // its SIGKILL before this program exits.
    runtime.shutdown_timeout(std::time::Duration::from_secs(3));
    exiting.runners().shutdown();
    crate::traces::finish(telemetry);
    outcome.map(|()| ExitCode::SUCCESS)
}

async fn serve_http(
    server: McpServer,
    address: SocketAddr,
    bearer_token: Option<String>,
    arguments: &McpArgs,
) -> Result<(), Failure> {
    let options = HttpOptions {
        address,
        bearer_token,
        allow_remote: arguments.allow_remote,
        session_idle: std::time::Duration::from_secs(arguments.session_idle.max(1)),
        max_sessions: arguments.max_sessions.max(1),
    };
    let endpoint =
        http::serve(server, options).await.map_err(|error| Failure { code: 1, message: error.to_string() })?;
    // The address line is for people and scripts alike (a port of 0 picks one).
    eprintln!("switchboard mcp: serving on {}", endpoint.url());
    ending_signal().await;
    endpoint.shutdown.cancel();
    let _ = endpoint.task.await;
    Ok(())
}

/// Each served call exported as a trace (when telemetry is on), through the turn
/// pipeline every turn goes through (no session log: `switchboard mcp` keeps none).
struct Traced {
    telemetry: Arc<Telemetry>,
    dispatcher: Arc<Dispatcher>,
}

impl CallObserver for Traced {
    fn started(&self, call: &IncomingCall, _control: &TurnControl) -> Box<dyn ObservedCall> {
        let shown_nowhere: Show = Arc::new(|_| {});
        let config = self.dispatcher.config();
        let pipeline = TurnPipeline::unlogged(Some(self.telemetry.as_ref()), &config, None, shown_nowhere);
        Box::new(PipelineCall::new(Some(pipeline), &call.agent))
    }

    fn answers_approvals(&self) -> bool {
        false
    }
}
