//! The streamable HTTP endpoint (`/mcp`), for clients that connect over the network
//! stack: bound to loopback unless the user names another address, guarded
//! against DNS rebinding (the Host header must name the bound address or
//! localhost; a browser's Origin must be a loopback one), optionally behind a
//! bearer token (compared in constant time), with session ids from the SDK
//! (random UUID v4). hyper serves it; rmcp's service speaks the protocol.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// The path the endpoint answers on.
pub const PATH: &str = "/mcp";

/// The keyring entry (service `switchboard`) that keeps the app's endpoint token.
pub const DESKTOP_TOKEN_ENTRY: &str = "mcp-endpoint-token";
/// The variable an MCP client reads the app's endpoint token from (its config
/// names it; the token itself is never in the client's file).
pub const DESKTOP_TOKEN_ENV: &str = "SWITCHBOARD_MCP_TOKEN";

/// A new bearer token: 32 bytes from the OS's random source, as 64 hex digits.
pub fn new_token() -> String {
    format!("{}{}", switchboard_core::sources::random_nonce(), switchboard_core::sources::random_nonce())
}

/// How the endpoint is exposed.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub address: SocketAddr,
    /// Required as `Authorization: Bearer <token>` when set.
    pub bearer_token: Option<String>,
    /// Allow a non-loopback address (the user asked for it explicitly).
    pub allow_remote: bool,
    /// How long a silent session lives (`sessions::DEFAULT_IDLE` is the usual).
    pub session_idle: std::time::Duration,
    /// How many sessions are kept at once (`sessions::DEFAULT_CAP`).
    pub max_sessions: usize,
}

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "{0} is not a loopback address: the MCP endpoint serves loopback only unless started with --allow-remote \
         (and then it needs --token-env)"
    )]
    NotLoopback(SocketAddr),
    #[error("a non-loopback MCP endpoint needs a bearer token (--token-env NAME)")]
    RemoteWithoutToken,
    #[error("cannot listen on {address}: {source}")]
    Bind { address: SocketAddr, source: std::io::Error },
}

/// A running endpoint: its address, and a token that stops it.
#[derive(Debug)]
pub struct Endpoint {
    pub address: SocketAddr,
    pub shutdown: CancellationToken,
    pub task: tokio::task::JoinHandle<()>,
}

impl Endpoint {
    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.address)
    }
}

/// Binds the endpoint and serves it in a task until `Endpoint::shutdown` is cancelled.
pub async fn serve(server: McpServer, options: HttpOptions) -> Result<Endpoint, HttpError> {
    if !options.address.ip().is_loopback() {
        if !options.allow_remote {
            return Err(HttpError::NotLoopback(options.address));
        }
        if options.bearer_token.is_none() {
            return Err(HttpError::RemoteWithoutToken);
        }
    }
    let listener = TcpListener::bind(options.address)
        .await
        .map_err(|source| HttpError::Bind { address: options.address, source })?;
    let address = listener.local_addr().map_err(|source| HttpError::Bind { address: options.address, source })?;
    let shutdown = CancellationToken::new();
    let mut sessions = LocalSessionManager::default();
    // A session silent this long ends (a running call's progress and keep-alive
    // notifications are activity); past the cap, the oldest is closed.
    sessions.session_config.keep_alive = Some(options.session_idle);
    // No SSE priming events (an id with empty data, so a client may resume a
    // stream): the TypeScript SDK that Gemini CLI 0.61 bundles parses their empty
    // data as JSON, fails, and drops the server. A stream that breaks is not
    // resumed; its call is cancelled as when the client goes.
    sessions.session_config.sse_retry = None;
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string(), "[::1]".to_string()];
    hosts.push(address.ip().to_string());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"])
        .with_cancellation_token(shutdown.child_token());
    // The same for standalone streams (see the session config above).
    config.sse_retry = None;
    let factory_server = server.clone();
    let sessions = crate::sessions::CappedSessions::new(sessions, options.max_sessions);
    let service = StreamableHttpService::new(move || Ok(factory_server.clone()), Arc::new(sessions), config);
    let guard = Arc::new(Guard { token_digest: options.bearer_token.as_deref().map(digest) });
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = stop.cancelled() => break,
            };
            let Ok((stream, _peer)) = accepted else { continue };
            let (service, guard) = (service.clone(), guard.clone());
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let (service, guard) = (service.clone(), guard.clone());
                async move {
                    if let Some(refusal) = guard.check(&request) {
                        return Ok::<_, Infallible>(refusal);
                    }
                    if modern_initialize(&request) {
                        return Ok(removed_method(request).await);
                    }
                    let json = request
                        .headers()
                        .get(hyper::header::CONTENT_TYPE)
                        .and_then(|value| value.to_str().ok())
                        .is_some_and(|kind| kind.starts_with("application/json"));
                    let response = service.handle(request).await;
                    // The SDK answers a JSON body it cannot parse with 415, as if the
                    // type were wrong: it is a JSON-RPC parse error, HTTP 400.
                    if json && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE {
                        return Ok(parse_error());
                    }
                    Ok(response)
                }
            });
            let connection_stop = stop.clone();
            tokio::spawn(async move {
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
                tokio::pin!(connection);
                tokio::select! {
                    _ = &mut connection => {}
                    () = connection_stop.cancelled() => connection.as_mut().graceful_shutdown(),
                }
            });
        }
    });
    Ok(Endpoint { address, shutdown, task })
}

struct Guard {
    token_digest: Option<[u8; 32]>,
}

impl Guard {
    /// A refusal for requests that may not reach the protocol: another path, or a
    /// missing or wrong bearer token. (Host and Origin are checked by the SDK.)
    fn check(&self, request: &Request<Incoming>) -> Option<Response<BoxBody<Bytes, Infallible>>> {
        if request.uri().path() != PATH {
            return Some(plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp"));
        }
        let expected = self.token_digest?;
        let presented = request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(digest);
        // Comparing digests keeps the time independent of where the tokens differ.
        let matches = presented
            .is_some_and(|presented| presented.iter().zip(expected.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0);
        (!matches).then(|| plain(StatusCode::UNAUTHORIZED, "unauthorized: a valid bearer token is required"))
    }
}

/// An `initialize` from a client that says it speaks 2026-07-28 (or later): that
/// revision removed the method; older clients' `initialize` is served as ever.
fn modern_initialize(request: &Request<Incoming>) -> bool {
    let header = |name: &str| request.headers().get(name).and_then(|value| value.to_str().ok());
    let modern = header("mcp-protocol-version").is_some_and(|version| version >= "2026-07-28" && version.len() == 10);
    modern && header("mcp-method") == Some("initialize")
}

/// HTTP 404 with a JSON-RPC "method not found" (-32601) for a removed method,
/// answering the request's id (its body read up to 64 KiB).
async fn removed_method(request: Request<Incoming>) -> Response<BoxBody<Bytes, Infallible>> {
    let body = http_body_util::Limited::new(request.into_body(), 64 * 1024).collect().await;
    let id = body
        .ok()
        .and_then(|body| serde_json::from_slice::<serde_json::Value>(&body.to_bytes()).ok())
        .and_then(|message| message.get("id").cloned())
        .unwrap_or(serde_json::Value::Null);
    let error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32601, "message": "initialize is not a method of MCP 2026-07-28 (a client of that revision sends server/discover)" }
    });
    let mut response = Response::new(Full::new(Bytes::from(error.to_string())).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

/// HTTP 400 with a JSON-RPC parse error (-32700), for a body that is not JSON-RPC.
fn parse_error() -> Response<BoxBody<Bytes, Infallible>> {
    let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the body is not a JSON-RPC message"}}"#;
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("application/json"));
    response
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn plain(status: StatusCode, text: &'static str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(hyper::header::CONTENT_TYPE, hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"));
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(hyper::header::WWW_AUTHENTICATE, hyper::header::HeaderValue::from_static("Bearer"));
    }
    response
}
