//! The `local` provider: OpenAI-compatible chat completions over HTTP with SSE
//! streaming. Tool-call deltas are assembled by index, the usage chunk is read
//! whether its `choices` is empty or not, a server that ignores `stream` and sends
//! one JSON completion is understood, 429 and 503 are retried (a bounded number of
//! times, honouring `Retry-After`, said as progress), a silent stream is ended
//! after `idle_timeout_secs`, and every failure (HTTP status, broken chunk, early
//! end, a body that is no chat answer) becomes a classified `RunnerError` whose
//! text never carries the API key or a bearer token.

use super::sse::SseReader;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::http::{Answer, HttpModel};
use super::truncate;
use crate::config::AgentConfig;
use crate::contract::{DeltaSink, Message, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use crate::event::Usage;
use crate::keys::{Keys, SystemKeyring};

/// Used when an agent sets no `timeout_secs`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;
/// Used when an agent sets no `idle_timeout_secs`.
pub const DEFAULT_IDLE_TIMEOUT_SECS: u64 = 60;
pub use super::http::{MAX_RETRIES, MAX_RETRY_WAIT_SECS};

pub struct LocalRunner {
    http: HttpModel,
}

/// The chat-completions endpoint for a configured `url`: a server root gets
/// `/v1/chat/completions`, an OpenAI-style base ending in `/v1` gets `/chat/completions`.
pub fn endpoint_for(url: &str) -> String {
    let base = url.trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    }
}

impl std::fmt::Debug for LocalRunner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("LocalRunner")
            .field("endpoint", &self.http.endpoint)
            .field("model", &self.http.model)
            .finish()
    }
}

impl LocalRunner {
    /// A runner that reads an `api_key_keyring` key from the system keyring.
    pub fn new(agent: &AgentConfig) -> Result<LocalRunner, RunnerError> {
        LocalRunner::with_keys(agent, SystemKeyring::shared())
    }

    /// A runner that reads an `api_key_keyring` key from `keys`.
    pub fn with_keys(agent: &AgentConfig, keys: Keys) -> Result<LocalRunner, RunnerError> {
        Ok(LocalRunner { http: HttpModel::of(agent, keys, endpoint_for)? })
    }

    fn body<'a>(&'a self, request: &'a ModelRequest) -> RequestBody<'a> {
        RequestBody {
            model: request.model.as_deref().or(self.http.model.as_deref()).unwrap_or_default(),
            messages: &request.messages,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            tools: request.tools.iter().map(|tool| Function { kind: "function", function: tool }).collect(),
        }
    }

    /// Sends the request, retrying 429 and 503 answers; returns the first other answer.
    async fn send(
        &self,
        request: &ModelRequest,
        key: Option<&str>,
        on_delta: DeltaSink<'_>,
    ) -> Result<reqwest::Response, RunnerError> {
        let build = || {
            let http_request = self.http.client.post(&self.http.endpoint).json(&self.body(request));
            match key {
                Some(key) => http_request.bearer_auth(key),
                None => http_request,
            }
        };
        super::http::post_with_retries(build, &self.http.endpoint, key, on_delta).await
    }

    async fn run(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let key = self.http.key().await?;
        let key = key.as_deref();
        let idle_secs = request.idle_timeout_secs.unwrap_or(self.http.idle_timeout_secs);
        let response = self.send(request, key, on_delta).await?;
        let response = match self.http.answer(response, idle_secs, key, "a chat completion").await? {
            // A server that ignores `stream` answers with the whole completion.
            Answer::Whole(body) => return self.completion(&body, key, on_delta),
            Answer::Stream(response) => response,
        };
        let mut events = SseReader::new(response.bytes_stream(), self.http.max_event_bytes);
        let mut assembly = Assembly::default();
        while let Some(event) = self.http.idle(idle_secs, events.next()).await? {
            let event = event.map_err(|error| self.http.malformed(format!("stream broke: {error}"), key))?;
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            if data == "[DONE]" {
                assembly.done = true;
                break;
            }
            let chunk: Chunk = serde_json::from_str(data).map_err(|error| {
                self.http.malformed(format!("chunk is not valid JSON ({error}): {}", truncate(data, 200)), key)
            })?;
            if let Some(error) = chunk.error {
                return Err(self.http.malformed(format!("server sent an error in the stream: {error}"), key));
            }
            assembly.absorb(chunk, on_delta);
        }
        if !assembly.done && !assembly.finished {
            return Err(self.http.malformed("stream ended before the response was complete".into(), key));
        }
        assembly.into_reply()
    }

    /// A whole (non-streamed) chat completion, as some servers send despite `stream`.
    fn completion(&self, body: &str, key: Option<&str>, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let completion: Completion = serde_json::from_str(body).map_err(|error| {
            self.http
                .malformed(format!("the JSON answer is not a chat completion ({error}): {}", truncate(body, 200)), key)
        })?;
        if let Some(error) = completion.error {
            return Err(self.http.malformed(format!("server sent an error: {error}"), key));
        }
        let Some(message) = completion.choices.into_iter().next().and_then(|choice| choice.message) else {
            return Err(self.http.malformed(format!("the JSON answer has no message: {}", truncate(body, 200)), key));
        };
        // Shaped as one chunk holding the whole message, so it is read like a stream.
        let delta = Delta {
            content: message.content,
            reasoning_content: message.reasoning_content,
            tool_calls: message.tool_calls,
        };
        let chunk = Chunk {
            choices: vec![Choice { delta: Some(delta), finish_reason: Some("stop".into()) }],
            usage: completion.usage,
            error: None,
        };
        let mut assembly = Assembly::default();
        assembly.absorb(chunk, on_delta);
        assembly.into_reply()
    }
}

#[async_trait]
impl Runner for LocalRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secs = self.http.timeout_secs;
        super::within(secs, self.run(request, on_delta)).await
    }
}

/// The request body, serialized straight from borrowed parts (no JSON tree built).
#[derive(Debug, Serialize)]
struct RequestBody<'a> {
    model: &'a str,
    messages: &'a [Message],
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Function<'a>>,
}

/// A tool in the OpenAI wire shape: `{"type": "function", "function": {name, description, parameters}}`.
#[derive(Debug, Serialize)]
struct Function<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: &'a crate::contract::ToolSpec,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

/// A whole chat completion (`stream` ignored by the server).
#[derive(Debug, Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<CompletionChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct CompletionChoice {
    #[serde(default)]
    message: Option<Delta>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default, alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// The reply being put together from chunks.
#[derive(Debug, Default)]
struct Assembly {
    text: String,
    /// Tool calls by their `index`, in order of first appearance.
    tool_calls: Vec<(usize, String, String, String)>,
    usage: Option<Usage>,
    finished: bool,
    done: bool,
}

impl Assembly {
    fn absorb(&mut self, chunk: Chunk, on_delta: DeltaSink<'_>) {
        if let Some(usage) = chunk.usage {
            let total = usage.total_tokens.unwrap_or(usage.prompt_tokens.saturating_add(usage.completion_tokens));
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
                total_tokens: total,
            });
        }
        for choice in chunk.choices {
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                self.text.push_str(&text);
                on_delta(ModelDelta::Text(text));
            }
            if let Some(text) = delta.reasoning_content.filter(|text| !text.is_empty()) {
                on_delta(ModelDelta::Reasoning(text));
            }
            for (position, call) in delta.tool_calls.into_iter().enumerate() {
                let index = call.index.unwrap_or(position);
                let slot = match self.tool_calls.iter().position(|(existing, ..)| *existing == index) {
                    Some(found) => found,
                    None => {
                        self.tool_calls.push((index, String::new(), String::new(), String::new()));
                        self.tool_calls.len() - 1
                    }
                };
                let entry = &mut self.tool_calls[slot];
                if let Some(id) = call.id.filter(|id| !id.is_empty()) {
                    entry.1 = id;
                }
                if let Some(function) = call.function {
                    if let Some(name) = function.name {
                        entry.2.push_str(&name);
                    }
                    if let Some(arguments) = function.arguments {
                        entry.3.push_str(&arguments);
                    }
                }
            }
        }
    }

    fn into_reply(self) -> Result<ModelReply, RunnerError> {
        let tool_calls = self
            .tool_calls
            .into_iter()
            .enumerate()
            .map(|(position, (_, id, name, arguments))| {
                let id = if id.is_empty() { format!("call_{position}") } else { id };
                ToolCall::new(id, name, arguments)
            })
            .collect();
        Ok(ModelReply { text: self.text, tool_calls, usage: self.usage, cost: None })
    }
}

#[cfg(test)]
mod tests {
    use super::endpoint_for;

    #[test]
    fn endpoints_from_root_and_base() {
        let cases = [
            ("http://localhost:8080", "http://localhost:8080/v1/chat/completions"),
            ("http://localhost:8080/", "http://localhost:8080/v1/chat/completions"),
            ("http://127.0.0.1:4010/v1", "http://127.0.0.1:4010/v1/chat/completions"),
            ("http://127.0.0.1:4010/v1/", "http://127.0.0.1:4010/v1/chat/completions"),
            ("http://host/api/v1/chat/completions", "http://host/api/v1/chat/completions"),
        ];
        for (url, expected) in cases {
            assert_eq!(endpoint_for(url), expected, "for {url}");
        }
    }
}
