//! What an `a2a` call has seen of its remote task: each result (a task, a message,
//! a status or artifact update) read into progress lines, the answer's text, the
//! task's context and the question of a task in `input-required`; and how a part
//! reads as text. The calls themselves are in `a2a.rs`.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::CancelOnDrop;
use crate::contract::{DeltaSink, ModelDelta, RunnerError};
use crate::truncate;

/// What the call has seen of the remote task.
pub(super) struct Progress {
    pub(super) answer: String,
    /// How many artifact parts of the task (as `GetTask` or a whole task shows them)
    /// are in the answer already.
    pub(super) task_parts_seen: usize,
    pub(super) first_event: Option<Duration>,
    pub(super) started: Instant,
    pub(super) state: Option<String>,
    /// The words of the last status, so a status said again is not a new line.
    pub(super) last_words: String,
    /// How many things the task has said (text, new states, new words): what the
    /// idle timeout of a polled task watches.
    pub(super) news: u64,
    /// The task's context, which a follow-up message names.
    pub(super) context: Option<String>,
    /// What the task asks when it stopped in `input-required`.
    pub(super) question: Option<String>,
    /// The words of the working statuses, in order: the answer of a task that
    /// ends with no artifacts and no words of its own.
    pub(super) status_words: Vec<String>,
    /// The most the answer (and the status words) may hold: `max_output_bytes`.
    pub(super) limit: usize,
    /// How much text came, counted past the limit too.
    pub(super) received: usize,
    /// The task this call continues or follows (a persistent entry's open task, a
    /// resumed call's): said already, not announced as a new one.
    pub(super) known_task: Option<String>,
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            answer: String::new(),
            task_parts_seen: 0,
            first_event: None,
            started: Instant::now(),
            state: None,
            last_words: String::new(),
            news: 0,
            context: None,
            question: None,
            status_words: Vec::new(),
            limit: usize::MAX,
            received: 0,
            known_task: None,
        }
    }
}

impl Progress {
    /// Whether the remote task reached an end of its own (done, failed, rejected,
    /// cancelled there): nothing is left to cancel.
    pub(super) fn ended_there(&self) -> bool {
        matches!(
            self.state.as_deref(),
            Some("TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_REJECTED" | "TASK_STATE_CANCELED")
        )
    }

    /// The parts of a whole task's artifacts not seen yet, as text.
    pub(super) fn task_artifacts(&mut self, task: &Value, on_delta: DeltaSink<'_>) {
        let parts: Vec<String> = task
            .get("artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|artifact| parts_text(artifact.get("parts")))
            .collect();
        for part in parts.iter().skip(self.task_parts_seen) {
            self.text(part, on_delta);
        }
        self.task_parts_seen = self.task_parts_seen.max(parts.len());
    }

    pub(super) fn text(&mut self, text: &str, on_delta: DeltaSink<'_>) {
        self.first_event.get_or_insert_with(|| self.started.elapsed());
        self.news += 1;
        self.received = self.received.saturating_add(text.len());
        if self.received > self.limit {
            return;
        }
        self.answer.push_str(text);
        on_delta(ModelDelta::Text(text.to_string()));
    }

    /// An error once the task has sent more text than `limit` (what came is dropped).
    fn within_limit(&self, endpoint: &str) -> Result<(), RunnerError> {
        if self.received <= self.limit {
            return Ok(());
        }
        Err(RunnerError::MalformedStream {
            url: endpoint.to_string(),
            message: format!("the task's answer is over {} bytes (max_output_bytes); the call was ended", self.limit),
        })
    }

    /// Takes one result (`task`, `message`, `statusUpdate`, `artifactUpdate`);
    /// true when the call is over (an error when it ended badly).
    pub(super) fn take(
        &mut self,
        result: &Value,
        guard: &mut CancelOnDrop,
        on_delta: DeltaSink<'_>,
        endpoint: &str,
    ) -> Result<bool, RunnerError> {
        let over = self.take_unchecked(result, guard, on_delta, endpoint);
        self.within_limit(endpoint)?;
        over
    }

    fn take_unchecked(
        &mut self,
        result: &Value,
        guard: &mut CancelOnDrop,
        on_delta: DeltaSink<'_>,
        endpoint: &str,
    ) -> Result<bool, RunnerError> {
        if let Some(message) = result.get("message") {
            for text in parts_text(message.get("parts")) {
                self.text(&text, on_delta);
            }
            return Ok(true);
        }
        if let Some(task) = result.get("task") {
            if let Some(id) = task.get("id").and_then(Value::as_str) {
                // A new task is said once, with its id and where it runs as data:
                // the log keeps them, so a resumed call follows it rather than asking
                // again (a task this call only continues is not: it holds earlier turns).
                if guard.task.as_deref() != Some(id) && self.known_task.as_deref() != Some(id) {
                    on_delta(ModelDelta::Progress {
                        message: format!("the agent runs the call as task {}", truncate(id, 80)),
                        data: Some(json!({ "a2a_task": id, "server": crate::server_mark(endpoint) })),
                    });
                }
                guard.task = Some(id.to_string());
            }
            if let Some(context) = task.get("contextId").and_then(Value::as_str) {
                self.context = Some(context.to_string());
            }
            // A task that comes back whole (an agent that answers before it is asked
            // to return at once, or a first stream event) may hold its artifacts.
            if self.answer.is_empty() || self.task_parts_seen > 0 {
                self.task_artifacts(task, on_delta);
            }
            let status = json!({ "statusUpdate": { "status": task.get("status").cloned().unwrap_or_default() } });
            return self.take(&status, guard, on_delta, endpoint);
        }
        if let Some(update) = result.get("artifactUpdate") {
            for text in parts_text(update.pointer("/artifact/parts")) {
                self.text(&text, on_delta);
            }
            return Ok(false);
        }
        let Some(update) = result.get("statusUpdate") else { return Ok(false) };
        if let Some(context) = update.get("contextId").and_then(Value::as_str) {
            self.context = Some(context.to_string());
        }
        let state = update.pointer("/status/state").and_then(Value::as_str).unwrap_or("").to_string();
        let words = parts_text(update.pointer("/status/message/parts")).join("");
        // Google's A2A server (gemini-cli-a2a-server) streams its answer in status
        // messages it marks as text content: the call's text, as it comes.
        let content = update.pointer("/metadata/coderAgent/kind").and_then(Value::as_str) == Some("text-content");
        if content && state == "TASK_STATE_WORKING" {
            self.state = Some(state);
            if !words.is_empty() {
                self.text(&words, on_delta);
            }
            return Ok(false);
        }
        // An error the agent reports beside its status ends the call with it.
        if let Some(error) = update.pointer("/metadata/error").and_then(Value::as_str) {
            let why = if words.is_empty() { error.to_string() } else { words.clone() };
            return Err(RunnerError::Remote {
                url: endpoint.to_string(),
                message: format!("the task failed: {}", truncate(&why, 500)),
            });
        }
        if state == "TASK_STATE_WORKING" && !words.is_empty() && words != self.last_words {
            self.received = self.received.saturating_add(words.len());
            self.status_words.push(words.clone());
        }
        // A new state, or new words (a status polled again says nothing new).
        if self.state.as_deref() != Some(state.as_str()) || (!words.is_empty() && words != self.last_words) {
            self.first_event.get_or_insert_with(|| self.started.elapsed());
            self.news += 1;
            self.last_words.clone_from(&words);
            let line = if words.is_empty() { short_state(&state) } else { format!("{}: {words}", short_state(&state)) };
            on_delta(ModelDelta::Progress { message: truncate(&line, 500), data: Some(json!({ "a2a_state": state })) });
        }
        self.state = Some(state.clone());
        let failed = |what: &str| {
            let why = if words.is_empty() { String::new() } else { format!(": {}", truncate(&words, 500)) };
            Err(RunnerError::Remote { url: endpoint.to_string(), message: format!("the task {what}{why}") })
        };
        match state.as_str() {
            "TASK_STATE_COMPLETED" => {
                // No artifacts: the status messages' text is the answer.
                if self.answer.is_empty() {
                    self.answer = if words.is_empty() { self.status_words.concat() } else { words };
                }
                Ok(true)
            }
            "TASK_STATE_FAILED" => failed("failed"),
            "TASK_STATE_REJECTED" => failed("was rejected"),
            "TASK_STATE_CANCELED" => failed("was cancelled by the remote agent"),
            // An agent that ends each turn waiting for the next (Google's server does,
            // `final: true`) has answered: the turn is over, with no question.
            "TASK_STATE_INPUT_REQUIRED" if words.is_empty() && !self.answer.is_empty() => Ok(true),
            "TASK_STATE_INPUT_REQUIRED" => {
                self.question =
                    Some(if words.is_empty() { "The remote agent needs more input.".to_string() } else { words });
                Ok(true)
            }
            "TASK_STATE_AUTH_REQUIRED" => failed("needs authentication"),
            _ => Ok(false),
        }
    }
}

/// `TASK_STATE_WORKING` → `working`.
pub(super) fn short_state(state: &str) -> String {
    state.trim_start_matches("TASK_STATE_").to_lowercase().replace('_', "-")
}

/// The text of a part list: text parts as they are, data parts as their JSON, files
/// named with their name and media type (A2A 1.0 and 0.3 spellings).
pub(super) fn parts_text(parts: Option<&Value>) -> Vec<String> {
    parts.and_then(Value::as_array).into_iter().flatten().map(part_text).collect()
}

fn part_text(part: &Value) -> String {
    if let Some(text) = part.get("text").and_then(Value::as_str) {
        return text.to_string();
    }
    if let Some(data) = part.get("data").filter(|data| !data.is_string() && !data.is_null()) {
        return data.to_string();
    }
    let file = part.get("file").unwrap_or(part);
    let field = |names: &[&str]| names.iter().find_map(|name| file.get(*name).and_then(Value::as_str));
    let media = field(&["mediaType", "mimeType"]).unwrap_or("data");
    match field(&["filename", "name"]) {
        Some(name) => format!("[file {name} ({media})]"),
        None => format!("[{media} part]"),
    }
}

#[cfg(test)]
mod tests {
    use super::{part_text, Progress};
    use crate::contract::ModelDelta;
    use crate::registry::Registry;
    use crate::remote::a2a::{CancelOnDrop, Dialect};
    use serde_json::json;

    #[test]
    fn parts_read_as_text_data_or_a_named_file_in_either_spelling() {
        let cases = [
            (json!({"text": "hello"}), "hello"),
            (json!({"data": {"rivers": 2}, "mediaType": "application/json"}), r#"{"rivers":2}"#),
            (json!({"kind": "data", "data": [1, 2]}), "[1,2]"),
            (
                json!({"url": "https://x/c.png", "mediaType": "image/png", "filename": "c.png"}),
                "[file c.png (image/png)]",
            ),
            (
                json!({"kind": "file", "file": {"name": "r.pdf", "mimeType": "application/pdf"}}),
                "[file r.pdf (application/pdf)]",
            ),
            (json!({"raw": "AAAA", "mediaType": "audio/wav"}), "[audio/wav part]"),
            (json!({}), "[data part]"),
        ];
        for (part, expected) in cases {
            assert_eq!(part_text(&part), expected, "{part}");
        }
    }

    #[test]
    fn a_task_that_comes_back_whole_is_answered_by_its_artifacts_once() {
        let mut guard = CancelOnDrop {
            endpoint: "http://a".into(),
            dialect: Dialect::V1,
            token: None,
            task: None,
            registry: Registry::new(),
        };
        let mut progress = Progress::default();
        let mut texts = Vec::new();
        let mut sink = |delta: ModelDelta| {
            if let ModelDelta::Text(text) = delta {
                texts.push(text);
            }
        };
        let task = json!({"task": {
            "id": "t1",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"parts": [{"text": "Two rivers."}, {"text": " Both long."}]}]
        }});
        assert!(progress.take(&task, &mut guard, &mut sink, "http://a").unwrap(), "completed");
        assert_eq!(progress.answer, "Two rivers. Both long.");
        // The same task polled again adds nothing.
        progress.task_artifacts(&task["task"], &mut sink);
        assert_eq!(progress.answer, "Two rivers. Both long.");
        assert_eq!(texts, ["Two rivers.", " Both long."]);
        guard.task = None;
    }

    #[test]
    fn a_status_polled_again_is_no_news_and_only_an_end_there_leaves_nothing_to_cancel() {
        let mut guard = CancelOnDrop {
            endpoint: "http://a".into(),
            dialect: Dialect::V1,
            token: None,
            task: None,
            registry: Registry::new(),
        };
        let mut progress = Progress::default();
        let mut lines = Vec::new();
        let mut sink = |delta: ModelDelta| {
            if let ModelDelta::Progress { message, .. } = delta {
                lines.push(message);
            }
        };
        let status = |state: &str, words: &str| json!({"statusUpdate": {"status": {"state": state, "message": {"parts": [{"text": words}]}}}});
        for (state, words) in
            [("TASK_STATE_WORKING", "step 1"), ("TASK_STATE_WORKING", "step 1"), ("TASK_STATE_WORKING", "step 2")]
        {
            assert!(!progress.take(&status(state, words), &mut guard, &mut sink, "http://a").unwrap());
            assert!(!progress.ended_there());
        }
        assert_eq!(progress.news, 2, "the repeated status is not news");
        assert!(progress.take(&status("TASK_STATE_FAILED", "no"), &mut guard, &mut sink, "http://a").is_err());
        assert!(progress.ended_there());
        assert_eq!(lines, ["working: step 1", "working: step 2", "failed: no"]);
    }

    #[test]
    fn an_agent_that_answers_in_status_messages_is_answered_by_them() {
        let mut guard = CancelOnDrop {
            endpoint: "http://a".into(),
            dialect: Dialect::V03,
            token: None,
            task: None,
            registry: Registry::new(),
        };
        let (mut texts, mut lines) = (Vec::new(), Vec::new());
        let mut sink = |delta: ModelDelta| match delta {
            ModelDelta::Text(text) => texts.push(text),
            ModelDelta::Progress { message, .. } => lines.push(message),
            _ => {}
        };
        // Google's A2A server, as it streams (0.3 results, normalized as the runner does).
        let update = |state: &str, kind: &str, words: Option<&str>, last: bool| {
            let mut status = json!({"state": state});
            if let Some(words) = words {
                status["message"] =
                    json!({"kind": "message", "role": "agent", "parts": [{"kind": "text", "text": words}]});
            }
            Dialect::V03.normalize(&json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": status,
                "final": last, "metadata": {"coderAgent": {"kind": kind}}}))
        };
        let mut progress = Progress::default();
        let stream = [
            update("working", "state-change", None, false),
            update("working", "text-content", Some("Hell"), false),
            update("working", "text-content", Some("o."), false),
        ];
        for result in &stream {
            assert!(!progress.take(result, &mut guard, &mut sink, "http://a").unwrap());
        }
        let end = update("input-required", "state-change", None, true);
        assert!(progress.take(&end, &mut guard, &mut sink, "http://a").unwrap(), "the turn is over");
        assert_eq!(progress.question, None, "nobody is asked anything");
        assert_eq!(progress.answer, "Hello.");

        // A task that asks a real question with nothing answered still asks it.
        let mut asking = Progress::default();
        let question = update("input-required", "state-change", Some("Which file?"), true);
        assert!(asking.take(&question, &mut guard, &mut sink, "http://a").unwrap());
        assert_eq!(asking.question.as_deref(), Some("Which file?"));
        let mut silent = Progress::default();
        assert!(silent.take(&end, &mut guard, &mut sink, "http://a").unwrap());
        assert!(silent.question.is_some(), "waiting with nothing said is a question");

        // Its error, said beside a working status, fails the call with its words.
        let mut failing = Progress::default();
        let mut error = update("working", "state-change", Some("Agent Error, unknown agent message: 400"), false);
        error["statusUpdate"]["metadata"]["error"] = json!("[API Error: An unknown error occurred.]");
        let failed = failing.take(&error, &mut guard, &mut sink, "http://a").unwrap_err().to_string();
        assert!(failed.contains("Agent Error, unknown agent message: 400"), "{failed}");

        // Any agent: a task that completes with no artifacts is answered by what its
        // working statuses said.
        let mut plain = Progress::default();
        let working = json!({"statusUpdate": {"status": {"state": "TASK_STATE_WORKING", "message": {"parts": [{"text": "Two rivers."}]}}}});
        let done = json!({"statusUpdate": {"status": {"state": "TASK_STATE_COMPLETED"}}});
        assert!(!plain.take(&working, &mut guard, &mut sink, "http://a").unwrap());
        assert!(plain.take(&done, &mut guard, &mut sink, "http://a").unwrap());
        assert_eq!(plain.answer, "Two rivers.");
        assert_eq!(texts, ["Hell", "o."], "the content streamed as text");
        assert!(lines.contains(&"working: Two rivers.".to_string()), "{lines:?}");
        guard.task = None;
    }
}
