//! CLI agents that write JSON lines (Claude Code's and Qwen Code's `stream-json`,
//! Codex's `exec --json`, Gemini CLI's `stream-json`), read as events while they run: their text streams as text,
//! their tool use shows as progress, and their result message gives the answer,
//! the usage and the cost. A line that is not JSON is shown as progress, never
//! lost; every string is the program's output, treated as untrusted data. Pure.

use serde_json::Value;

use super::output::ReadOutput;
use crate::config::OutputFormat;
use crate::contract::ModelDelta;
use crate::event::Usage;
use crate::truncate;

/// Reads one agent's JSON lines as they arrive.
#[derive(Debug)]
pub struct EventLines {
    format: OutputFormat,
    partial: String,
    /// Text the agent wrote, in order (the answer when no result message names one).
    texts: Vec<String>,
    answer: Option<String>,
    usage: Option<Usage>,
    cost: Option<f64>,
    failure: Option<String>,
    /// Gemini: whether the last text was a streamed delta (the next one continues it).
    gemini_streaming: bool,
    /// The last error event, for a result that names none.
    last_error: Option<String>,
    /// How many result messages came (a conversation on stdin has one a message).
    results: usize,
}

/// The longest progress line shown for a tool's input.
const PROGRESS_LIMIT: usize = 160;

impl EventLines {
    pub fn new(format: OutputFormat) -> EventLines {
        EventLines {
            format,
            partial: String::new(),
            texts: Vec::new(),
            answer: None,
            usage: None,
            cost: None,
            failure: None,
            gemini_streaming: false,
            last_error: None,
            results: 0,
        }
    }

    /// Takes a piece of stdout; returns the deltas of the lines it completes.
    pub fn push(&mut self, text: &str) -> Vec<ModelDelta> {
        self.partial.push_str(text);
        let mut deltas = Vec::new();
        while let Some(end) = self.partial.find('\n') {
            let line: String = self.partial.drain(..=end).collect();
            self.line(line.trim(), &mut deltas);
        }
        deltas
    }

    /// How many result messages the program wrote so far.
    pub fn results(&self) -> usize {
        self.results
    }

    /// The answer, usage and cost once the program has exited.
    pub fn finish(mut self) -> Result<ReadOutput, String> {
        self.last_line();
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let answer = match self.answer {
            Some(answer) => answer,
            None if !self.texts.is_empty() => self.texts.join("\n\n"),
            None => return Err("the program wrote no result message and no text".into()),
        };
        Ok(ReadOutput { answer: answer.trim().to_string(), usage: self.usage, cost: self.cost })
    }

    fn line(&mut self, line: &str, deltas: &mut Vec<ModelDelta>) {
        if line.is_empty() {
            return;
        }
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            deltas.push(ModelDelta::Progress { message: shorten(line), data: None });
            return;
        };
        match self.format {
            OutputFormat::ClaudeStreamJson => self.claude(&event, deltas),
            OutputFormat::CodexJson => self.codex(&event, deltas),
            OutputFormat::GeminiStreamJson => self.gemini(&event, deltas),
            OutputFormat::Text => {}
        }
    }

    /// `{"type":"assistant","message":{"content":[{"type":"text"|"tool_use",…}]}}`, then
    /// `{"type":"result","result":…,"is_error":…,"total_cost_usd":…,"usage":{…}}`.
    fn claude(&mut self, event: &Value, deltas: &mut Vec<ModelDelta>) {
        match event["type"].as_str() {
            Some("system") if event["subtype"] == "init" => {
                // The session a `--resume` continues; said once, as progress.
                if let Some(session) = event["session_id"].as_str() {
                    deltas.push(ModelDelta::Progress {
                        message: format!("session {} started", shorten(session)),
                        data: Some(serde_json::json!({ "session_id": session })),
                    });
                }
            }
            Some("assistant") => {
                for item in event["message"]["content"].as_array().into_iter().flatten() {
                    match item["type"].as_str() {
                        Some("text") => self.text(item["text"].as_str(), deltas),
                        Some("thinking") => {
                            if let Some(thinking) = item["thinking"].as_str() {
                                deltas.push(ModelDelta::Reasoning(thinking.to_string()));
                            }
                        }
                        Some("tool_use") => {
                            let name = item["name"].as_str().unwrap_or("a tool");
                            deltas.push(ModelDelta::Progress {
                                message: shorten(&format!("{name}: {}", item["input"])),
                                data: Some(serde_json::json!({ "tool": name })),
                            });
                        }
                        _ => {}
                    }
                }
            }
            Some("result") => {
                let result = event["result"].as_str().unwrap_or_default().to_string();
                let subtype = event["subtype"].as_str().unwrap_or_default();
                if event["is_error"].as_bool() == Some(true) || subtype.starts_with("error") {
                    // `result` says why; when it is null, `errors` does ("Reached
                    // maximum number of turns (1)"), else the subtype.
                    let errors: Vec<&str> =
                        event["errors"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                    let why = if !result.is_empty() {
                        result.clone()
                    } else if !errors.is_empty() {
                        errors.join("; ")
                    } else {
                        subtype.replace('_', " ")
                    };
                    self.failure = Some(reported(&why));
                }
                // Qwen Code reports a failed model call as a successful result
                // whose text is "[API Error: 400 …]", and exits 0.
                if self.failure.is_none() && result.starts_with("[API Error: ") {
                    self.failure = Some(reported(&result));
                }
                self.denied(&event["permission_denials"], deltas);
                // A conversation has a result a message: the answer is the last;
                // usage is each one's own (summed), the cost the session's so far.
                self.results += 1;
                self.answer = Some(result);
                let usage = &event["usage"];
                let count = |field: &str| usage[field].as_u64().unwrap_or(0);
                if usage.is_object() {
                    let input =
                        count("input_tokens") + count("cache_creation_input_tokens") + count("cache_read_input_tokens");
                    let this = Usage::new(input, count("output_tokens"));
                    self.usage.get_or_insert_with(Usage::default).add(&this);
                }
                self.cost = event["total_cost_usd"].as_f64();
            }
            _ => {}
        }
    }

    /// `{"type":"item.completed","item":{"type":"agent_message","text":…}}`,
    /// `{"type":"item.started","item":{"type":"command_execution","command":…}}`,
    /// `{"type":"turn.completed","usage":{…}}`, `{"type":"turn.failed","error":{…}}`.
    fn codex(&mut self, event: &Value, deltas: &mut Vec<ModelDelta>) {
        let item = &event["item"];
        match (event["type"].as_str(), item["type"].as_str()) {
            (Some("item.completed"), Some("agent_message")) => {
                self.text(item["text"].as_str(), deltas);
                self.answer = item["text"].as_str().map(str::to_owned);
            }
            (Some("item.completed"), Some("reasoning")) => {
                if let Some(text) = item["text"].as_str() {
                    deltas.push(ModelDelta::Reasoning(text.to_string()));
                }
            }
            (Some("item.started"), Some(kind)) => {
                let what = item["command"].as_str().map(str::to_owned).unwrap_or_else(|| kind.replace('_', " "));
                deltas.push(ModelDelta::Progress {
                    message: shorten(&what),
                    data: Some(serde_json::json!({ "item": kind })),
                });
            }
            (Some("turn.completed"), _) => {
                let usage = &event["usage"];
                let count = |field: &str| usage[field].as_u64().unwrap_or(0);
                let turn = Usage::new(count("input_tokens"), count("output_tokens"));
                self.usage.get_or_insert_with(Usage::default).add(&turn);
            }
            // A notice ("Model metadata for `m` not found…"), not a failure.
            (Some("item.completed"), Some("error")) => {
                let message = item["message"].as_str().unwrap_or("error");
                deltas.push(ModelDelta::Progress { message: shorten(message), data: None });
            }
            // Retries say "Reconnecting… 1/5" here: news, and the cause only if
            // nothing better comes.
            (Some("error"), _) => {
                let message = codex_message(event["message"].as_str().unwrap_or("error"));
                deltas.push(ModelDelta::Progress { message: shorten(&message), data: None });
                self.last_error = Some(message);
            }
            (Some("turn.failed"), _) => {
                let message = codex_message(event["error"]["message"].as_str().unwrap_or("the turn failed"));
                self.failure = Some(reported(&message));
            }
            _ => {}
        }
    }

    /// Gemini CLI's `-o stream-json`: `init`, `message` (the assistant's with
    /// `delta: true` as it streams), `tool_use`, `tool_result`, `error`, then
    /// `result` with its `status`, `stats` (tokens) and, on failure, `error`.
    fn gemini(&mut self, event: &Value, deltas: &mut Vec<ModelDelta>) {
        match event["type"].as_str() {
            Some("message") if event["role"] == "assistant" => {
                if let Some(text) = event["content"].as_str().filter(|text| !text.is_empty()) {
                    // Deltas of one reply join without a separator.
                    match self.texts.last_mut() {
                        Some(last) if event["delta"] == true && self.gemini_streaming => last.push_str(text),
                        _ => self.texts.push(text.to_string()),
                    }
                    self.gemini_streaming = event["delta"] == true;
                    deltas.push(ModelDelta::Text(text.to_string()));
                }
            }
            Some("tool_use") => {
                self.gemini_streaming = false;
                let name = event["tool_name"].as_str().unwrap_or("a tool");
                deltas.push(ModelDelta::Progress {
                    message: shorten(&format!("{name}: {}", event["parameters"])),
                    data: Some(serde_json::json!({ "tool": name })),
                });
            }
            Some("tool_result") if event["status"] != "success" => {
                let why = event["error"]["message"].as_str().or(event["output"].as_str()).unwrap_or("failed");
                deltas.push(ModelDelta::Progress { message: shorten(&format!("tool failed: {why}")), data: None });
            }
            Some("error") => {
                let message = event["message"].as_str().unwrap_or("error");
                deltas.push(ModelDelta::Progress { message: shorten(message), data: None });
                self.last_error = Some(message.to_string());
            }
            Some("result") => {
                let stats = &event["stats"];
                if stats.is_object() {
                    let count = |field: &str| stats[field].as_u64().unwrap_or(0);
                    let input = count("input_tokens").max(count("input"));
                    let output = count("output_tokens");
                    self.usage = Some(Usage::new(input, output));
                }
                if event["status"] != "success" {
                    let why = event["error"]["message"]
                        .as_str()
                        .map(gemini_message)
                        .or_else(|| self.last_error.clone())
                        .unwrap_or_else(|| format!("status {}", event["status"]));
                    self.failure = Some(reported(&why));
                }
            }
            _ => {}
        }
    }

    /// Tools the program was not allowed to use (Claude Code's `permission_denials`):
    /// said as progress, since nobody could have said yes during the call.
    fn denied(&mut self, denials: &Value, deltas: &mut Vec<ModelDelta>) {
        for denial in denials.as_array().into_iter().flatten() {
            let tool = denial["tool_name"].as_str().unwrap_or("a tool");
            deltas.push(ModelDelta::Progress {
                message: shorten(&format!(
                    "not allowed to use {tool} unattended (raise the agent's autonomy to let it)"
                )),
                data: Some(serde_json::json!({ "denied_tool": tool })),
            });
        }
    }

    /// Reads what is left without a line end once the program has exited.
    fn last_line(&mut self) {
        let rest = std::mem::take(&mut self.partial);
        self.line(rest.trim(), &mut Vec::new());
    }

    /// Why the program failed, in its own words, once it exited with a failure:
    /// its failure result, else the last error it reported; `None` when it said
    /// nothing (its stderr is then the best word).
    pub fn failure_reason(mut self) -> Option<String> {
        self.last_line();
        self.failure.or_else(|| self.last_error.as_deref().map(reported))
    }

    fn text(&mut self, text: Option<&str>, deltas: &mut Vec<ModelDelta>) {
        if let Some(text) = text.filter(|text| !text.is_empty()) {
            self.texts.push(text.to_string());
            deltas.push(ModelDelta::Text(text.to_string()));
        }
    }
}

fn shorten(text: &str) -> String {
    truncate(text, PROGRESS_LIMIT)
}

/// Codex passes a server's error body on as its message
/// (`{"error":{"message":"…"}}`): the message inside, when there is one.
fn codex_message(message: &str) -> String {
    serde_json::from_str::<Value>(message)
        .ok()
        .and_then(|body| body["error"]["message"].as_str().or(body["message"].as_str()).map(str::to_owned))
        .unwrap_or_else(|| message.to_string())
}

/// Gemini CLI wraps a server's error body: `[API Error: {"error":{"code":400,
/// "message":"…"}}]`; the code and message inside, when it holds them.
fn gemini_message(message: &str) -> String {
    let inner = message.trim().trim_start_matches("[API Error: ").trim_end_matches(']');
    match serde_json::from_str::<Value>(inner) {
        Ok(body) if body["error"]["message"].is_string() => match body["error"]["code"].as_u64() {
            Some(code) => format!("API Error {code}: {}", body["error"]["message"].as_str().unwrap_or_default()),
            None => body["error"]["message"].as_str().unwrap_or_default().to_string(),
        },
        _ => message.to_string(),
    }
}

/// The longest excerpt of a program's own error kept in the call's error.
const ERROR_LIMIT: usize = 2_000;

/// The program's own error, as the call's error says it.
fn reported(why: &str) -> String {
    format!("the agent reported an error: {}", error_excerpt(why))
}

fn error_excerpt(text: &str) -> String {
    truncate(text.trim(), ERROR_LIMIT)
}

#[cfg(test)]
mod tests;
