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
use crate::runner::truncate;

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
                self.answer = Some(result);
                let usage = &event["usage"];
                let count = |field: &str| usage[field].as_u64().unwrap_or(0);
                if usage.is_object() {
                    let input =
                        count("input_tokens") + count("cache_creation_input_tokens") + count("cache_read_input_tokens");
                    self.usage = Some(Usage::new(input, count("output_tokens")));
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
mod tests {
    use super::*;

    fn texts(deltas: &[ModelDelta]) -> Vec<String> {
        deltas
            .iter()
            .map(|delta| match delta {
                ModelDelta::Text(text) => format!("text {text}"),
                ModelDelta::Reasoning(text) => format!("thinking {text}"),
                ModelDelta::Progress { message, .. } => format!("progress {message}"),
                ModelDelta::InputRequired { question, .. } => format!("question {question}"),
                ModelDelta::Steered { message, .. } => format!("steered {message}"),
            })
            .collect()
    }

    #[test]
    fn claude_stream_json_lines_become_text_progress_and_a_result() {
        let mut lines = EventLines::new(OutputFormat::ClaudeStreamJson);
        let stream = concat!(
            r#"{"type":"system","subtype":"init","model":"claude"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Looking."},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}"#,
            "\n",
            "a warning that is not JSON\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Two files."}]}}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"There are two files.","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":7}}"#
        );
        // Split mid-line, as pipes do.
        let (first, second) = stream.split_at(70);
        let mut deltas = lines.push(first);
        deltas.extend(lines.push(second));
        assert_eq!(
            texts(&deltas),
            vec![
                r#"text Looking."#,
                r#"progress Bash: {"command":"ls"}"#,
                "progress a warning that is not JSON",
                "text Two files."
            ]
        );
        let read = lines.finish().unwrap();
        assert_eq!(
            (read.answer.as_str(), read.usage, read.cost),
            ("There are two files.", Some(Usage::new(100, 7)), Some(0.0123))
        );

        let mut failed = EventLines::new(OutputFormat::ClaudeStreamJson);
        failed.push(r#"{"type":"result","is_error":true,"result":"credit balance too low"}"#);
        assert!(failed.finish().unwrap_err().contains("credit balance too low"));
        assert!(EventLines::new(OutputFormat::ClaudeStreamJson).finish().is_err(), "nothing at all is no answer");
    }

    #[test]
    fn gemini_stream_json_lines_become_text_progress_usage_and_its_error() {
        let mut lines = EventLines::new(OutputFormat::GeminiStreamJson);
        let deltas = lines.push(concat!(
            r#"{"type":"init","session_id":"s","model":"gemini-2.5-flash"}"#,
            "\n",
            r#"{"type":"message","role":"user","content":"say hello"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"Answ","delta":true}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"er.","delta":true}"#,
            "\n",
            r#"{"type":"tool_use","tool_name":"list_directory","tool_id":"list_directory__1","parameters":{"dir_path":"."}}"#,
            "\n",
            r#"{"type":"tool_result","tool_id":"run_shell_command__2","status":"error","error":{"type":"tool_not_registered","message":"Tool \"run_shell_command\" not found."}}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"Done.","delta":true}"#,
            "\n",
            r#"{"type":"result","status":"success","stats":{"total_tokens":18,"input_tokens":11,"output_tokens":7,"cached":0,"input":11}}"#,
            "\n"
        ));
        assert_eq!(
            texts(&deltas),
            vec![
                "text Answ",
                "text er.",
                r#"progress list_directory: {"dir_path":"."}"#,
                r#"progress tool failed: Tool "run_shell_command" not found."#,
                "text Done."
            ]
        );
        let read = lines.finish().unwrap();
        assert_eq!((read.answer.as_str(), read.usage), ("Answer.\n\nDone.", Some(Usage::new(11, 7))));

        let mut failed = EventLines::new(OutputFormat::GeminiStreamJson);
        failed.push(concat!(
            r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":400,\"message\":\"Bad request\",\"status\":\"invalid_request_error\"}}]"},"stats":{}}"#,
            "\n"
        ));
        assert_eq!(failed.failure_reason().unwrap(), "the agent reported an error: API Error 400: Bad request");
    }

    #[test]
    fn qwen_reports_a_failed_model_call_as_a_result_and_it_is_read_as_a_failure() {
        let mut lines = EventLines::new(OutputFormat::ClaudeStreamJson);
        lines.push(r#"{"type":"result","subtype":"success","is_error":false,"result":"[API Error: 400 Simulated bad request]","usage":{"input_tokens":0,"output_tokens":0}}"#);
        assert!(lines.finish().unwrap_err().contains("[API Error: 400 Simulated bad request]"));
        let mut limited = EventLines::new(OutputFormat::ClaudeStreamJson);
        limited.push(r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"]}"#);
        assert!(
            limited.failure_reason().unwrap().contains("Reached maximum number of turns (1)"),
            "errors when result is absent"
        );
    }

    #[test]
    fn codex_json_lines_become_text_progress_and_usage() {
        let mut lines = EventLines::new(OutputFormat::CodexJson);
        let deltas = lines.push(concat!(
            r#"{"type":"thread.started","thread_id":"t"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"1","type":"command_execution","command":"cargo test"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"2","type":"agent_message","text":"All tests pass."}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":30}}"#,
            "\n"
        ));
        assert_eq!(texts(&deltas), vec!["progress cargo test", "text All tests pass."]);
        let read = lines.finish().unwrap();
        assert_eq!((read.answer.as_str(), read.usage), ("All tests pass.", Some(Usage::new(1200, 30))));
        let mut failed = EventLines::new(OutputFormat::CodexJson);
        failed.push("{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream error\"}}\n");
        assert!(failed.finish().unwrap_err().contains("stream error"));
        // A retry notice first, then the cause, a server's error body inside.
        let mut retried = EventLines::new(OutputFormat::CodexJson);
        retried.push(concat!(
            r#"{"type":"error","message":"Reconnecting... 1/1"}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"{\"error\":{\"message\":\"Bad request\",\"type\":\"invalid_request_error\"}}"}}"#,
            "\n"
        ));
        assert_eq!(retried.failure_reason().unwrap(), "the agent reported an error: Bad request");
    }
}
