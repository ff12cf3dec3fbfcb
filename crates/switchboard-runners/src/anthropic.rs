//! The `anthropic` provider: Anthropic's Messages API (`/v1/messages`) over HTTP
//! with SSE streaming. The contract's conversation is translated to the Messages
//! wire here: system messages become `system`, an assistant's tool calls
//! `tool_use` blocks, tool results `tool_result` blocks of a user turn (turns of one
//! role merged, as the API wants them to alternate), the tools' OpenAI function
//! definitions `{name, description, input_schema}`. The stream's text, thinking and
//! `tool_use` blocks become the reply; usage counts cache reads and writes as input
//! (and says them as progress); the API's errors (an `error` event, an error body)
//! are said in its words. The key goes in `x-api-key`, read at each step from
//! `api_key_env` or the keyring; 429 and 529-free retries and the idle timer are
//! the HTTP runners' own.

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};

use super::http::{Answer, HttpModel};
use super::sse::SseReader;
use super::{redact, truncate};
use crate::config::AgentConfig;
use crate::contract::{DeltaSink, Message, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use crate::event::Usage;
use crate::keys::Keys;

/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; an agent sets no other.
pub const MAX_TOKENS: u32 = 8192;

pub struct AnthropicRunner {
    http: HttpModel,
}

impl std::fmt::Debug for AnthropicRunner {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("AnthropicRunner")
            .field("endpoint", &self.http.endpoint)
            .field("model", &self.http.model)
            .finish()
    }
}

/// The Messages endpoint for a configured `url`: a root or a `/v1` base gets `/v1/messages`.
pub fn endpoint_for(url: &str) -> String {
    let base = url.trim_end_matches('/');
    if base.ends_with("/messages") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

impl AnthropicRunner {
    pub fn with_keys(agent: &AgentConfig, keys: Keys) -> Result<AnthropicRunner, RunnerError> {
        Ok(AnthropicRunner { http: HttpModel::of(agent, keys, endpoint_for)? })
    }

    async fn run(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let key = self.http.key().await?;
        let key = key.as_deref();
        let model = request.model.as_deref().or(self.http.model.as_deref()).unwrap_or_default();
        let body = request_body(model, request);
        let build = || {
            let http_request =
                self.http.client.post(&self.http.endpoint).header("anthropic-version", API_VERSION).json(&body);
            match key {
                Some(key) => http_request.header("x-api-key", key),
                None => http_request,
            }
        };
        let response = super::http::post_with_retries(build, &self.http.endpoint, key, on_delta)
            .await
            .map_err(|error| in_words(error, key))?;
        let idle_secs = request.idle_timeout_secs.unwrap_or(self.http.idle_timeout_secs);
        let mut assembly = Assembly::default();
        let response = match self.http.answer(response, idle_secs, key, "a message").await? {
            // A server that ignores `stream` answers with the whole message.
            Answer::Whole(text) => {
                let whole: WholeMessage = serde_json::from_str(&text).map_err(|error| {
                    let excerpt = truncate(&text, 200);
                    self.http.malformed(format!("the JSON answer is not a message ({error}): {excerpt}"), key)
                })?;
                assembly.whole(whole, on_delta);
                return assembly.into_reply(on_delta);
            }
            Answer::Stream(response) => response,
        };
        let mut events = SseReader::new(response.bytes_stream(), self.http.max_event_bytes);
        while let Some(event) = self.http.idle(idle_secs, events.next()).await? {
            let event = event.map_err(|error| self.http.malformed(format!("stream broke: {error}"), key))?;
            let data = event.data.trim();
            if data.is_empty() {
                continue;
            }
            let parsed: StreamEvent = serde_json::from_str(data).map_err(|error| {
                self.http.malformed(format!("event is not valid JSON ({error}): {}", truncate(data, 200)), key)
            })?;
            if let StreamEvent::Error { error } = &parsed {
                return Err(self.http.malformed(format!("the API sent an error: {}", api_error_words(error)), key));
            }
            if assembly.absorb(parsed, on_delta) {
                break;
            }
        }
        if !assembly.stopped {
            return Err(self.http.malformed("stream ended before the message was complete".into(), key));
        }
        assembly.into_reply(on_delta)
    }
}

#[async_trait]
impl Runner for AnthropicRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        super::within(self.http.timeout_secs, self.run(request, on_delta)).await
    }
}

/// An error body in the API's shape (`{"type":"error","error":{"type","message"}}`)
/// said in its words; any other body as it was.
fn in_words(error: RunnerError, key: Option<&str>) -> RunnerError {
    match error {
        RunnerError::Http { status, url, body } => {
            let said = serde_json::from_str::<Value>(&body)
                .ok()
                .filter(|value| value["error"].is_object())
                .map(|value| redact(&api_error_words(&value["error"]), key));
            RunnerError::Http { status, url, body: said.unwrap_or(body) }
        }
        other => other,
    }
}

fn api_error_words(error: &Value) -> String {
    let kind = error["type"].as_str().unwrap_or("error");
    let message = error["message"].as_str().unwrap_or("(no message)");
    truncate(&format!("{kind}: {message}"), 500)
}

/// The request body in the Messages shape.
fn request_body(model: &str, request: &ModelRequest) -> Value {
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            Message::System { .. } => continue,
            Message::User { content } => ("user", vec![json!({ "type": "text", "text": content })]),
            Message::Tool { tool_call_id, content } => {
                ("user", vec![json!({ "type": "tool_result", "tool_use_id": tool_call_id, "content": content })])
            }
            Message::Assistant { content, tool_calls } => {
                let mut blocks = Vec::new();
                if let Some(text) = content.as_deref().filter(|text| !text.is_empty()) {
                    blocks.push(json!({ "type": "text", "text": text }));
                }
                for call in tool_calls {
                    // The model's own arguments; text that is no JSON object goes as a string.
                    let input = serde_json::from_str::<Value>(&call.function.arguments)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({ "arguments": call.function.arguments }));
                    blocks
                        .push(json!({ "type": "tool_use", "id": call.id, "name": call.function.name, "input": input }));
                }
                if blocks.is_empty() {
                    continue;
                }
                ("assistant", blocks)
            }
        };
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> =
        turns.into_iter().map(|(role, content)| json!({ "role": role, "content": content })).collect();
    let tools: Vec<Value> = request
        .tools
        .iter()
        .map(|tool| {
            let schema =
                if tool.parameters.is_object() { tool.parameters.clone() } else { json!({ "type": "object" }) };
            json!({ "name": tool.name, "description": tool.description, "input_schema": schema })
        })
        .collect();
    let mut body = json!({ "model": model, "max_tokens": MAX_TOKENS, "stream": true, "messages": messages });
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !tools.is_empty() {
        body["tools"] = json!(tools);
    }
    body
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: WholeMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop {},
    Ping {},
    Error {
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize, Default)]
struct WholeMessage {
    #[serde(default)]
    content: Vec<Block>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    ThinkingDelta {
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

/// A tool call being streamed: its id, name, and its input's JSON so far (or the
/// whole input, from a block that came complete).
struct PendingCall {
    id: String,
    name: String,
    json: String,
    input: Value,
}

#[derive(Default)]
struct Assembly {
    text: String,
    calls: BTreeMap<usize, PendingCall>,
    input: u64,
    output: u64,
    cache_write: u64,
    cache_read: u64,
    seen_usage: bool,
    stopped: bool,
}

impl Assembly {
    fn usage(&mut self, usage: Option<WireUsage>) {
        let Some(usage) = usage else { return };
        self.seen_usage = true;
        // Later reports restate the totals: the largest of each is the count.
        self.input = self.input.max(usage.input_tokens.unwrap_or(0));
        self.output = self.output.max(usage.output_tokens.unwrap_or(0));
        self.cache_write = self.cache_write.max(usage.cache_creation_input_tokens.unwrap_or(0));
        self.cache_read = self.cache_read.max(usage.cache_read_input_tokens.unwrap_or(0));
    }

    fn block(&mut self, index: usize, block: Block, on_delta: DeltaSink<'_>) {
        match block {
            Block::Text { text } if !text.is_empty() => {
                self.text.push_str(&text);
                on_delta(ModelDelta::Text(text));
            }
            Block::Thinking { thinking } if !thinking.is_empty() => on_delta(ModelDelta::Reasoning(thinking)),
            Block::ToolUse { id, name, input } => {
                self.calls.insert(index, PendingCall { id, name, json: String::new(), input });
            }
            _ => {}
        }
    }

    /// One stream event; true once the message stopped.
    fn absorb(&mut self, event: StreamEvent, on_delta: DeltaSink<'_>) -> bool {
        match event {
            StreamEvent::MessageStart { message } => self.usage(message.usage),
            StreamEvent::ContentBlockStart { index, content_block } => self.block(index, content_block, on_delta),
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                BlockDelta::TextDelta { text } => {
                    self.text.push_str(&text);
                    on_delta(ModelDelta::Text(text));
                }
                BlockDelta::ThinkingDelta { thinking } => on_delta(ModelDelta::Reasoning(thinking)),
                BlockDelta::InputJsonDelta { partial_json } => {
                    if let Some(call) = self.calls.get_mut(&index) {
                        call.json.push_str(&partial_json);
                    }
                }
                BlockDelta::Other => {}
            },
            StreamEvent::MessageDelta { usage } => self.usage(usage),
            StreamEvent::MessageStop {} => {
                self.stopped = true;
                return true;
            }
            StreamEvent::ContentBlockStop {}
            | StreamEvent::Ping {}
            | StreamEvent::Error { .. }
            | StreamEvent::Other => {}
        }
        false
    }

    fn whole(&mut self, message: WholeMessage, on_delta: DeltaSink<'_>) {
        self.usage(message.usage);
        for (index, block) in message.content.into_iter().enumerate() {
            self.block(index, block, on_delta);
        }
        self.stopped = true;
    }

    fn into_reply(self, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        if self.cache_read > 0 || self.cache_write > 0 {
            on_delta(ModelDelta::Progress {
                message: format!("prompt cache: {} tokens read, {} written", self.cache_read, self.cache_write),
                data: Some(json!({
                    "cache_read_input_tokens": self.cache_read,
                    "cache_creation_input_tokens": self.cache_write,
                })),
            });
        }
        let tool_calls = self
            .calls
            .into_values()
            .map(|call| {
                let arguments = if call.json.trim().is_empty() {
                    if call.input.is_null() {
                        "{}".to_string()
                    } else {
                        call.input.to_string()
                    }
                } else {
                    call.json
                };
                ToolCall::new(call.id, call.name, arguments)
            })
            .collect();
        let input = self.input.saturating_add(self.cache_read).saturating_add(self.cache_write);
        Ok(ModelReply {
            text: self.text,
            tool_calls,
            usage: self.seen_usage.then(|| Usage::new(input, self.output)),
            cost: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_conversation_becomes_the_messages_wire() {
        let request = ModelRequest {
            messages: vec![
                Message::system("Be brief."),
                Message::user("Count the files."),
                Message::Assistant {
                    content: Some("Asking.".into()),
                    tool_calls: vec![ToolCall::new("call_1", "agent_counter", r#"{"request":"count"}"#)],
                },
                Message::Tool { tool_call_id: "call_1".into(), content: "3 files".into() },
                Message::user("And now?"),
            ],
            tools: vec![crate::contract::ToolSpec {
                name: "agent_counter".into(),
                description: "Counts.".into(),
                parameters: json!({ "type": "object" }),
            }],
            ..ModelRequest::default()
        };
        let body = request_body("claude-m", &request);
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(
            body["tools"][0],
            json!({ "name": "agent_counter", "description": "Counts.", "input_schema": { "type": "object" } })
        );
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "assistant", "user"], "the tool result and the next message are one user turn");
        assert_eq!(body["messages"][1]["content"][1]["input"], json!({ "request": "count" }));
        assert_eq!(body["messages"][2]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][2]["content"][1]["text"], "And now?");
    }

    #[test]
    fn cache_reads_and_writes_count_as_input_and_are_said() {
        let mut assembly = Assembly::default();
        let mut said = Vec::new();
        let mut sink = |delta: ModelDelta| said.push(delta);
        let start: StreamEvent = serde_json::from_value(json!({ "type": "message_start", "message": { "usage": {
            "input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000 } } }))
        .unwrap();
        assembly.absorb(start, &mut sink);
        let done: StreamEvent =
            serde_json::from_value(json!({ "type": "message_delta", "delta": {}, "usage": { "output_tokens": 7 } }))
                .unwrap();
        assembly.absorb(done, &mut sink);
        assert!(assembly.absorb(serde_json::from_value(json!({ "type": "message_stop" })).unwrap(), &mut sink));
        let reply = assembly.into_reply(&mut sink).unwrap();
        assert_eq!(reply.usage.map(|usage| (usage.input_tokens, usage.output_tokens)), Some((1110, 7)));
        assert!(said.iter().any(
            |delta| matches!(delta, ModelDelta::Progress { message, .. } if message.contains("1000 tokens read"))
        ));
    }

    #[test]
    fn endpoints_from_root_and_base() {
        assert_eq!(endpoint_for("https://api.anthropic.com"), "https://api.anthropic.com/v1/messages");
        assert_eq!(endpoint_for("http://127.0.0.1:9/v1/"), "http://127.0.0.1:9/v1/messages");
    }
}
