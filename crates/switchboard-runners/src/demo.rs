//! The built-in `demo` provider: deterministic agents that need no model server, so
//! a fresh install shows the main job at once. They go through the same dispatcher
//! as every other runner: they stream text token by token, call offered agent tools,
//! report usage (one token per word), and give the same events for the same input.
//! What they do is part of the demo users rely on (README): a demo agent offered
//! agent tools calls up to two of them, unless the message says "no tools", when it
//! answers alone; a message starting with "escalate" hands the turn to the expert.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;

use crate::config::AgentConfig;
use crate::contract::{DeltaSink, Message, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use crate::event::Usage;

/// The most agent tools a demo agent calls in one step.
const MAX_DEMO_CALLS: usize = 2;

#[derive(Debug)]
pub struct DemoRunner {
    persona: String,
    delay: Duration,
}

impl DemoRunner {
    pub fn new(agent: &AgentConfig) -> DemoRunner {
        DemoRunner {
            persona: agent.model.clone().unwrap_or_else(|| "demo".into()),
            delay: Duration::from_millis(agent.delay_ms.unwrap_or(0)),
        }
    }

    /// The reply this agent gives to `request`, before streaming: pure, so the
    /// determinism of the demo is a property of this function.
    pub fn plan(&self, request: &ModelRequest) -> ModelReply {
        let last_user = request.messages.iter().rposition(|message| matches!(message, Message::User { .. }));
        let user_text = last_user.map(|index| request.messages[index].text()).unwrap_or("").trim().to_string();
        let tool_results: Vec<(String, String)> =
            last_user.map(|index| collect_tool_results(&request.messages[index..])).unwrap_or_default();
        let offered: Vec<&str> = request.tools.iter().map(|tool| tool.name.as_str()).collect();

        if !tool_results.is_empty() {
            return ModelReply { text: synthesis(&tool_results), ..ModelReply::default() };
        }
        let lower = user_text.to_lowercase();
        if lower.starts_with("escalate") && offered.contains(&"escalate") {
            let reason = user_text["escalate".len()..].trim_start_matches([':', ' ']).to_string();
            let arguments =
                json!({ "reason": if reason.is_empty() { "the user asked for the expert" } else { &reason } });
            return ModelReply {
                tool_calls: vec![ToolCall::new("call_1", "escalate", arguments.to_string())],
                ..ModelReply::default()
            };
        }
        let agent_tools: Vec<&str> = offered.iter().copied().filter(|name| name.starts_with("agent_")).collect();
        if !agent_tools.is_empty() && !lower.contains("no tools") {
            let tool_calls = agent_tools
                .iter()
                .take(MAX_DEMO_CALLS)
                .enumerate()
                .map(|(index, name)| {
                    let request = brief_for(name, &user_text);
                    ToolCall::new(format!("call_{}", index + 1), *name, json!({ "request": request }).to_string())
                })
                .collect();
            return ModelReply { tool_calls, ..ModelReply::default() };
        }
        ModelReply { text: self.answer(&user_text), ..ModelReply::default() }
    }

    fn answer(&self, request: &str) -> String {
        let words: Vec<&str> = request.split_whitespace().collect();
        let subject = request.split("\n\n").next().unwrap_or(request).trim();
        match self.persona.as_str() {
            "demo-researcher" => {
                let longest = words.iter().max_by_key(|word| word.chars().count()).copied().unwrap_or("");
                let backwards: String = subject.chars().rev().take(60).collect();
                format!(
                    "Findings on \"{subject}\":\n\n1. It has {} words and {} characters.\n2. Its longest word is `{longest}`.\n3. Read backwards it starts: \"{backwards}\".",
                    words.len(),
                    request.chars().count()
                )
            }
            "demo-summariser" => {
                let head: Vec<&str> = words.iter().take(12).copied().collect();
                let ellipsis = if words.len() > 12 { "…" } else { "" };
                format!("Summary: {}{ellipsis} ({} words in all).", head.join(" "), words.len())
            }
            "demo-expert" => format!(
                "As the escalation expert I take this turn over. You asked: \"{subject}\". A careful answer would check each assumption in it before acting."
            ),
            _ => format!("You said: \"{subject}\". Ask me something longer and I will ask my colleagues."),
        }
    }
}

fn brief_for(tool_name: &str, user_text: &str) -> String {
    match tool_name {
        "agent_researcher" => format!("Find the key facts about: {user_text}"),
        "agent_summariser" => format!("Summarise in one line: {user_text}"),
        _ => user_text.to_string(),
    }
}

fn collect_tool_results(messages: &[Message]) -> Vec<(String, String)> {
    let mut called: Vec<(&str, &str)> = Vec::new();
    let mut results = Vec::new();
    for message in messages {
        match message {
            Message::Assistant { tool_calls, .. } => {
                called.extend(tool_calls.iter().map(|call| (call.id.as_str(), call.function.name.as_str())));
            }
            Message::Tool { tool_call_id, content } => {
                let name = called.iter().find(|(id, _)| id == tool_call_id).map(|(_, name)| *name).unwrap_or("tool");
                results.push((name.trim_start_matches("agent_").to_string(), in_words(&unfence(content))));
            }
            _ => {}
        }
    }
    results
}

/// The payload of a fenced tool result: the demo reads it as a model would, skipping
/// the fence markers and the untrusted-content note.
fn unfence(content: &str) -> String {
    content
        .lines()
        .filter(|line| !line.starts_with("<<<") && !line.starts_with(crate::fence::UNTRUSTED_NOTE_PREFIX))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// A result as the demo says it: a call that did not answer (denied, failed,
/// limited), which reaches a model as a structured error, in words.
fn in_words(result: &str) -> String {
    let Ok(serde_json::Value::Object(error)) = serde_json::from_str::<serde_json::Value>(result) else {
        return result.to_string();
    };
    let status = error.get("status").and_then(serde_json::Value::as_str).unwrap_or("error");
    let message = error.get("error").and_then(|error| error.get("message")).and_then(serde_json::Value::as_str);
    match message {
        Some(message) => format!("(no answer: the call was {status}: {message})"),
        None => format!("(no answer: the call was {status})"),
    }
}

fn synthesis(tool_results: &[(String, String)]) -> String {
    let asked = match tool_results.len() {
        1 => "one agent".to_string(),
        count => format!("{count} agents"),
    };
    let mut text = format!("I asked {asked} for help. Here is what came back:\n");
    for (agent, content) in tool_results {
        text.push_str(&format!("\n**{agent}**\n\n{content}\n"));
    }
    text.push_str("\nThat is all from the demo agents.");
    text
}

fn count_words(request: &ModelRequest) -> u64 {
    let message_words: usize = request.messages.iter().map(|message| message.text().split_whitespace().count()).sum();
    (message_words + request.tools.len() * 10) as u64
}

/// Splits text into streaming tokens: each word with the whitespace before it.
pub fn tokens(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_word = false;
    for (index, character) in text.char_indices() {
        if character.is_whitespace() {
            if in_word {
                pieces.push(&text[start..index]);
                start = index;
                in_word = false;
            }
        } else {
            in_word = true;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

#[async_trait]
impl Runner for DemoRunner {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let mut reply = self.plan(request);
        if self.persona == "demo-researcher" && reply.tool_calls.is_empty() {
            for (step, message) in ["reading the request", "checking the facts"].iter().enumerate() {
                on_delta(ModelDelta::Progress {
                    message: (*message).to_string(),
                    data: Some(json!({ "step": step + 1, "of": 2 })),
                });
                self.pause().await;
            }
        }
        let pieces = tokens(&reply.text);
        for piece in &pieces {
            on_delta(ModelDelta::Text((*piece).to_string()));
            self.pause().await;
        }
        let output_tokens = pieces.len() as u64 + reply.tool_calls.len() as u64 * 8;
        reply.usage = Some(Usage::new(count_words(request), output_tokens));
        Ok(reply)
    }
}

impl DemoRunner {
    async fn pause(&self) {
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_did_not_answer_is_said_in_words_not_as_json() {
        let denied = r#"{"status":"denied","agent":"researcher","error":{"kind":"denied","message":"the user denied this call"},"partial_result":null}"#;
        assert_eq!(in_words(denied), "(no answer: the call was denied: the user denied this call)");
        assert_eq!(in_words("Findings: three."), "Findings: three.");
        assert_eq!(in_words("[1, 2]"), "[1, 2]");
    }

    #[test]
    fn tokens_keep_every_character() {
        for text in ["", "one", "one two", "  lead and trail  ", "line\n\nbreak"] {
            assert_eq!(tokens(text).concat(), text, "for {text:?}");
        }
        assert_eq!(tokens("a bb ccc"), vec!["a", " bb", " ccc"]);
    }

    #[test]
    fn the_synthesis_counts_its_agents_in_words() {
        let result = |agent: &str| (agent.to_string(), format!("{agent} says hi"));
        for (results, opening) in [
            (vec![result("researcher")], "I asked one agent for help."),
            (vec![result("researcher"), result("summariser")], "I asked 2 agents for help."),
        ] {
            let text = synthesis(&results);
            assert!(text.starts_with(opening), "{text}");
            assert!(!text.contains("(s)"), "{text}");
        }
    }
}
