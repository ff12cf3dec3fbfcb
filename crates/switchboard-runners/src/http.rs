//! What every HTTP runner shares (models, MCP over HTTP, A2A): requests go only to
//! the origins the config names (the agent's `url`, and any in its
//! `allowed_origins`), so a redirect or an agent card pointing elsewhere is
//! refused in words that name both; bodies are read within a cap; errors carry
//! their whole chain.

use reqwest::Url;

use crate::config::AgentConfig;
use crate::contract::RunnerError;

/// How much of an error answer's body is read (its excerpt is shorter still).
pub(crate) const ERROR_BODY_BYTES: usize = 64 * 1024;

/// How many same-origin redirects a request follows.
const MAX_REDIRECTS: usize = 5;

/// The origins an agent's requests may go to.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    named: Vec<String>,
}

impl Origins {
    /// The agent's `url` and its `allowed_origins`.
    pub fn of(agent: &AgentConfig) -> Origins {
        let named = agent.url.iter().chain(agent.allowed_origins.iter()).filter_map(|url| origin(url)).collect();
        Origins { named }
    }

    pub(crate) fn allows(&self, url: &Url) -> bool {
        self.named.iter().any(|named| *named == origin_of(url))
    }

    /// `Ok` when `url` is at a named origin, else an error naming `what` sent us
    /// there, the origin and the ones allowed.
    pub(crate) fn check(&self, url: &str, what: &str) -> Result<(), RunnerError> {
        match Url::parse(url) {
            Ok(parsed) if self.allows(&parsed) => Ok(()),
            Ok(parsed) => Err(RunnerError::Config(format!(
                "{what} points to {}, an origin the config does not name (it names {}); add it to the agent's \
                 `allowed_origins` to allow it",
                origin_of(&parsed),
                self.named.join(", ")
            ))),
            Err(error) => Err(RunnerError::Config(format!("{what} is not a URL ({error}): {url:?}"))),
        }
    }

    /// A client that follows redirects only within these origins (at most
    /// `MAX_REDIRECTS`), refusing any other with an error naming both ends.
    pub fn client(&self, builder: reqwest::ClientBuilder) -> Result<reqwest::Client, RunnerError> {
        let origins = self.clone();
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            let from = attempt.previous().last().map(origin_of).unwrap_or_default();
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if origins.allows(attempt.url()) {
                attempt.follow()
            } else {
                let to = origin_of(attempt.url());
                attempt.error(format!(
                    "refused a redirect from {from} to {to}, an origin the config does not name \
                     (add it to the agent's `allowed_origins` to allow it)"
                ))
            }
        });
        builder
            .redirect(policy)
            .build()
            .map_err(|error| RunnerError::Internal(format!("cannot build HTTP client: {error}")))
    }
}

/// `scheme://host:port` of a URL, the port always written; the loopback names
/// (`localhost`, `127.0.0.0/8`, `[::1]`) are one host, written `localhost` (an
/// agent on loopback may name itself either way: Google's A2A server's card says
/// `localhost` to a user who typed `127.0.0.1`).
fn origin_of(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let address = host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>();
    let loopback = host.eq_ignore_ascii_case("localhost") || address.is_ok_and(|address| address.is_loopback());
    let host = if loopback { "localhost" } else { host };
    match url.port_or_known_default() {
        Some(port) => format!("{}://{host}:{port}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

/// The origin of `url`, when it is a URL.
pub(crate) fn origin(url: &str) -> Option<String> {
    Url::parse(url).ok().map(|url| origin_of(&url))
}

/// A response body read to at most `limit` bytes: `Err` with the limit when it is
/// longer (the rest is never read).
pub async fn body_within(mut response: reqwest::Response, limit: usize) -> Result<String, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| BodyError::Broken(error_chain(&error)))? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The first `limit` bytes of a response body (an error answer's words; the rest
/// is never read).
pub(crate) async fn body_prefix(mut response: reqwest::Response, limit: usize) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= limit {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    #[error("the answer is over {limit} bytes (max_output_bytes)")]
    TooLarge { limit: usize },
    #[error("the answer broke off: {0}")]
    Broken(String),
}

/// An error with its sources, `: `-joined (reqwest's own text names only the outermost).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = inner.source();
    }
    message
}

/// How many times a 429 or 503 answer is retried before it is the step's error.
pub const MAX_RETRIES: u32 = 3;
/// The longest wait between retries, whatever `Retry-After` asks for.
pub const MAX_RETRY_WAIT_SECS: u64 = 30;

/// POSTs the request `build` makes to `endpoint`, retrying 429 and 503 answers (a
/// bounded number of times, honouring `Retry-After`, said as progress); returns
/// the first other answer, a failure status as `RunnerError::Http` with the start
/// of its body. `key` is taken out of every error's text.
pub(crate) async fn post_with_retries(
    build: impl Fn() -> reqwest::RequestBuilder,
    endpoint: &str,
    key: Option<&str>,
    on_delta: crate::contract::DeltaSink<'_>,
) -> Result<reqwest::Response, RunnerError> {
    use crate::contract::ModelDelta;
    let mut retries = 0;
    loop {
        let response = build().send().await.map_err(|error| RunnerError::Unreachable {
            url: endpoint.to_string(),
            message: super::redact(&error_chain(&error), key),
        })?;
        let status = response.status();
        let busy =
            status == reqwest::StatusCode::TOO_MANY_REQUESTS || status == reqwest::StatusCode::SERVICE_UNAVAILABLE;
        if busy && retries < MAX_RETRIES {
            retries += 1;
            let wait = retry_after(response.headers()).unwrap_or(1 << (retries - 1)).min(MAX_RETRY_WAIT_SECS);
            let reason = if status == reqwest::StatusCode::TOO_MANY_REQUESTS { "rate limited" } else { "unavailable" };
            on_delta(ModelDelta::Progress {
                message: format!(
                    "{reason} (HTTP {}), retrying in {wait} s ({retries} of {MAX_RETRIES})",
                    status.as_u16()
                ),
                data: Some(serde_json::json!({ "retry": retries, "status": status.as_u16(), "wait_secs": wait })),
            });
            tokio::time::sleep(std::time::Duration::from_secs(wait)).await;
            continue;
        }
        if !status.is_success() {
            let body = body_prefix(response, ERROR_BODY_BYTES).await;
            return Err(RunnerError::Http {
                status: status.as_u16(),
                url: endpoint.to_string(),
                body: super::truncate(&super::redact(&body, key), 500),
            });
        }
        return Ok(response);
    }
}

/// `Retry-After` in seconds (the HTTP-date form is rare from model servers and
/// falls back to the default wait).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<u64> {
    headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim().parse().ok()
}

/// How a model server answered (`HttpModel::answer`).
pub(crate) enum Answer {
    /// The whole reply, as JSON text.
    Whole(String),
    /// An event stream, to read with `sse::SseReader`.
    Stream(reqwest::Response),
}

/// What an HTTP model runner (`local`, `anthropic`) is configured with: its client
/// (held to the agent's origins), endpoint, model, where its key is, its timers.
pub(crate) struct HttpModel {
    pub(crate) client: reqwest::Client,
    pub(crate) endpoint: String,
    pub(crate) model: Option<String>,
    pub(crate) agent_name: String,
    pub(crate) api_key_env: Option<String>,
    pub(crate) api_key_keyring: Option<String>,
    /// Where an `api_key_keyring` key is read at each step.
    pub(crate) keys: crate::keys::Keys,
    pub(crate) timeout_secs: u64,
    pub(crate) idle_timeout_secs: u64,
    /// The longest one stream event may be (`max_output_bytes`, 10 MB when absent).
    pub(crate) max_event_bytes: usize,
}

impl HttpModel {
    /// `agent`'s settings, its `url` made an endpoint by `endpoint_for`.
    pub(crate) fn of(
        agent: &AgentConfig,
        keys: crate::keys::Keys,
        endpoint_for: fn(&str) -> String,
    ) -> Result<HttpModel, RunnerError> {
        let url =
            agent.url.as_deref().ok_or_else(|| RunnerError::Config(format!("agent {:?} has no url", agent.name)))?;
        let client = Origins::of(agent)
            .client(reqwest::Client::builder().connect_timeout(std::time::Duration::from_secs(10)))?;
        Ok(HttpModel {
            client,
            endpoint: endpoint_for(url),
            model: agent.model.clone(),
            agent_name: agent.name.clone(),
            api_key_env: agent.api_key_env.clone(),
            api_key_keyring: agent.api_key_keyring.clone(),
            keys,
            timeout_secs: agent.timeout_secs.unwrap_or(super::local::DEFAULT_TIMEOUT_SECS),
            idle_timeout_secs: agent.idle_timeout_secs.unwrap_or(super::local::DEFAULT_IDLE_TIMEOUT_SECS),
            max_event_bytes: super::max_output_bytes(agent),
        })
    }

    /// The API key, read from its environment variable or its keyring entry at
    /// each request (the errors name where it was looked for, never its value).
    pub(crate) async fn key(&self) -> Result<Option<String>, RunnerError> {
        crate::keys::api_key(&self.keys, &self.agent_name, self.api_key_env.as_deref(), self.api_key_keyring.as_deref())
            .await
    }

    /// Waits for `next`, ending the step when the server stays silent too long.
    pub(crate) async fn idle<T>(
        &self,
        secs: u64,
        next: impl std::future::Future<Output = T>,
    ) -> Result<T, RunnerError> {
        tokio::time::timeout(std::time::Duration::from_secs(secs), next)
            .await
            .map_err(|_| RunnerError::Idle { url: self.endpoint.clone(), secs })
    }

    /// How a successful answer came: the whole reply as JSON (a server that ignores
    /// `stream`, read within the event cap and the idle timer), or an event stream
    /// to read. Any other content type is an error naming it and the start of the
    /// body; `reply` says what a reply is here ("a chat completion", "a message").
    pub(crate) async fn answer(
        &self,
        response: reqwest::Response,
        idle_secs: u64,
        key: Option<&str>,
        reply: &str,
    ) -> Result<Answer, RunnerError> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("application/json") {
            let body = self
                .idle(idle_secs, body_within(response, self.max_event_bytes))
                .await?
                .map_err(|error| self.malformed(error.to_string(), key))?;
            return Ok(Answer::Whole(body));
        }
        if !content_type.is_empty() && !content_type.starts_with("text/event-stream") {
            let body = self.idle(idle_secs, body_prefix(response, ERROR_BODY_BYTES)).await?;
            let excerpt = super::truncate(body.trim(), 200);
            let message = format!("the server answered with {content_type}, not an event stream or {reply}: {excerpt}");
            return Err(self.malformed(message, key));
        }
        Ok(Answer::Stream(response))
    }

    pub(crate) fn malformed(&self, message: String, key: Option<&str>) -> RunnerError {
        RunnerError::MalformedStream { url: self.endpoint.clone(), message: super::redact(&message, key) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let mut agent = AgentConfig::new("a", crate::config::Provider::A2a);
        agent.url = Some("http://127.0.0.1:8000/a2a/".into());
        agent.allowed_origins = vec!["https://agents.example.com".into()];
        let origins = Origins::of(&agent);
        let cases = [
            ("http://127.0.0.1:8000/other/path", true),
            ("http://127.0.0.1:8001/", false),
            ("https://127.0.0.1:8000/", false),
            ("http://0.0.0.0:8000/", false),
            ("https://agents.example.com:443/rpc", true),
            ("https://agents.example.com.evil/rpc", false),
            ("http://localhost:8000/", true),
            ("http://[::1]:8000/", true),
            ("http://127.0.0.2:8000/", true),
            ("http://localhost.example.com:8000/", false),
        ];
        for (url, allowed) in cases {
            assert_eq!(origins.allows(&Url::parse(url).unwrap()), allowed, "{url}");
        }
        let refused = origins.check("http://0.0.0.0:47412/", "the agent card's endpoint").unwrap_err().to_string();
        assert!(refused.contains("http://0.0.0.0:47412") && refused.contains("http://localhost:8000"), "{refused}");
    }
}
