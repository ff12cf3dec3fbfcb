//! Secrets kept out of everything a runner hands on. Every runner `build` makes
//! is wrapped in `Redacting`, so its deltas, its errors and its reply (what
//! becomes events, logs, stderr, traces and the next model's input) have the
//! agent's secrets taken out: the value of its `api_key_env` and of each `env`
//! entry taken from the app (`${NAME}`) or named like a secret, written plainly,
//! JSON-escaped or percent-encoded. What a server writes (errors, progress lines)
//! also loses any `Bearer <token>` and `token=<value>`-like value, known or not.
//! Linear in the text: one `str::replace` per form of each secret, and regular
//! expressions from the `regex` crate, which runs in linear time.

use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use regex::Regex;

use super::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError};
use crate::config::AgentConfig;

/// What a secret becomes.
pub const REDACTED: &str = "[redacted]";
/// Secrets shorter than this are not looked for (they would match ordinary words).
const SHORTEST: usize = 4;

/// The secrets one agent's runner holds, in every form looked for.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    forms: Vec<String>,
}

impl Secrets {
    /// The given values (those long enough), each in its plain, JSON-escaped and
    /// percent-encoded forms, longest first.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Secrets {
        let mut forms = Vec::new();
        for value in values.into_iter().filter(|value| value.trim().len() >= SHORTEST) {
            let json = serde_json::to_string(value).unwrap_or_default();
            let percent: String = value
                .bytes()
                .map(|byte| match byte {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (byte as char).to_string(),
                    _ => format!("%{byte:02X}"),
                })
                .collect();
            forms.extend([value.to_string(), json.trim_matches('"').to_string(), percent]);
        }
        forms.sort_by_key(|form| std::cmp::Reverse(form.len()));
        forms.dedup();
        Secrets { forms }
    }

    /// The secrets `agent`'s runner holds now (read from the environment).
    pub fn of(agent: &AgentConfig) -> Secrets {
        let mut values: Vec<String> = agent.api_key_env.iter().filter_map(|name| std::env::var(name).ok()).collect();
        for (name, value) in &agent.env {
            match value.strip_prefix("${").and_then(|rest| rest.strip_suffix('}')) {
                Some(variable) => values.extend(std::env::var(variable).ok()),
                None if looks_secret(name) => values.push(value.clone()),
                None => {}
            }
        }
        Secrets::new(values.iter().map(String::as_str))
    }

    /// `text` with every known secret taken out.
    pub fn known(&self, text: &str) -> String {
        let mut text = text.to_string();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        text
    }

    /// `text` a server or a program wrote (an error, a progress line): known
    /// secrets, and any bearer token or `token=`-like value, taken out.
    pub fn words(&self, text: &str) -> String {
        let text = self.known(text);
        let text = bearer().replace_all(&text, |captures: &regex::Captures| format!("{}{REDACTED}", &captures[1]));
        named_value()
            .replace_all(&text, |captures: &regex::Captures| format!("{}{}{REDACTED}", &captures[1], &captures[2]))
            .into_owned()
    }

    /// How long the held-back tail of streamed text must be: a secret split
    /// across two deltas is whole in the text before it is sent on.
    fn longest(&self) -> usize {
        self.forms.first().map_or(0, String::len)
    }

    fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }
}

/// An environment variable name that holds a secret by its looks.
fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"].iter().any(|word| name.contains(word))
}

fn bearer() -> &'static Regex {
    static BEARER: OnceLock<Regex> = OnceLock::new();
    BEARER.get_or_init(|| Regex::new(r#"(?i)(\bbearer\s+)[^\s"',;}\]]+"#).expect("a valid pattern"))
}

fn named_value() -> &'static Regex {
    static NAMED: OnceLock<Regex> = OnceLock::new();
    NAMED.get_or_init(|| {
        Regex::new(
            r#"(?i)(\b(?:access_token|refresh_token|id_token|token|api[_-]?key|apikey|x-api-key|secret|client_secret|password|passwd)\b)(\\?["']?\s*[:=]\s*\\?["']?)[^\s"'\\&,;}\]]{4,}"#,
        )
        .expect("a valid pattern")
    })
}

/// `text` with `key` (when long enough) and any bearer token or `token=`-like
/// value taken out: for error texts that quote a server.
pub fn redact(text: &str, key: Option<&str>) -> String {
    Secrets::new(key).words(text)
}

/// A runner whose deltas, errors and reply have its agent's secrets taken out.
pub(super) struct Redacting {
    pub inner: Arc<dyn Runner>,
    pub agent: AgentConfig,
}

#[async_trait]
impl Runner for Redacting {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secrets = Secrets::of(&self.agent);
        let mut held = HeldText::default();
        let outcome = {
            let mut redacting = |delta: ModelDelta| match delta {
                ModelDelta::Text(text) => held.push(&secrets, text, ModelDelta::Text, on_delta),
                ModelDelta::Reasoning(text) => held.push(&secrets, text, ModelDelta::Reasoning, on_delta),
                other => {
                    held.flush(&secrets, on_delta);
                    on_delta(redact_delta(&secrets, other));
                }
            };
            self.inner.stream(request, &mut redacting).await
        };
        held.flush(&secrets, on_delta);
        match outcome {
            Ok(mut reply) => {
                if !secrets.is_empty() {
                    reply.text = secrets.known(&reply.text);
                    for call in &mut reply.tool_calls {
                        call.function.arguments = secrets.known(&call.function.arguments);
                    }
                }
                Ok(reply)
            }
            Err(error) => Err(redact_error(&secrets, error)),
        }
    }

    fn accepts_tools(&self) -> bool {
        self.inner.accepts_tools()
    }
}

/// Streamed text not sent on yet: a tail that may be the start of a secret.
#[derive(Default)]
struct HeldText {
    text: String,
    reasoning: bool,
}

impl HeldText {
    fn push(&mut self, secrets: &Secrets, text: String, make: fn(String) -> ModelDelta, on_delta: DeltaSink<'_>) {
        if secrets.is_empty() {
            return on_delta(make(text));
        }
        let reasoning = matches!(make(String::new()), ModelDelta::Reasoning(_));
        if reasoning != self.reasoning {
            self.flush(secrets, on_delta);
            self.reasoning = reasoning;
        }
        self.text.push_str(&text);
        self.text = secrets.known(&self.text);
        let keep = secrets.longest().saturating_sub(1).min(self.text.len());
        let mut cut = self.text.len() - keep;
        while !self.text.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            let rest = self.text.split_off(cut);
            on_delta(make(std::mem::replace(&mut self.text, rest)));
        }
    }

    fn flush(&mut self, secrets: &Secrets, on_delta: DeltaSink<'_>) {
        if self.text.is_empty() {
            return;
        }
        let text = secrets.known(&std::mem::take(&mut self.text));
        on_delta(if self.reasoning { ModelDelta::Reasoning(text) } else { ModelDelta::Text(text) });
    }
}

fn redact_delta(secrets: &Secrets, delta: ModelDelta) -> ModelDelta {
    match delta {
        ModelDelta::Progress { message, data } => ModelDelta::Progress {
            message: secrets.words(&message),
            data: data.map(|data| redact_value(secrets, data)),
        },
        ModelDelta::InputRequired { question, answer } => {
            ModelDelta::InputRequired { question: secrets.words(&question), answer }
        }
        other => other,
    }
}

/// A JSON value with the secrets taken out of its strings (keys too).
fn redact_value(secrets: &Secrets, value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(secrets.words(&text)),
        Value::Array(items) => Value::Array(items.into_iter().map(|item| redact_value(secrets, item)).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter().map(|(key, item)| (secrets.known(&key), redact_value(secrets, item))).collect(),
        ),
        other => other,
    }
}

fn redact_error(secrets: &Secrets, error: RunnerError) -> RunnerError {
    let words = |text: String| secrets.words(&text);
    match error {
        RunnerError::Unreachable { url, message } => {
            RunnerError::Unreachable { url: words(url), message: words(message) }
        }
        RunnerError::Idle { url, secs } => RunnerError::Idle { url: words(url), secs },
        RunnerError::Http { status, url, body } => RunnerError::Http { status, url: words(url), body: words(body) },
        RunnerError::MalformedStream { url, message } => {
            RunnerError::MalformedStream { url: words(url), message: words(message) }
        }
        RunnerError::Subprocess { agent, status, stderr } => {
            RunnerError::Subprocess { agent, status: words(status), stderr: words(stderr) }
        }
        RunnerError::Remote { url, message } => RunnerError::Remote { url: words(url), message: words(message) },
        RunnerError::Config(message) => RunnerError::Config(words(message)),
        RunnerError::Internal(message) => RunnerError::Internal(words(message)),
        timeout @ RunnerError::Timeout { .. } => timeout,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_taken_out_in_every_form_a_server_echoes() {
        let secrets = Secrets::new(["sk-live/12\"34", "tok-abcdef"]);
        let cases = [
            ("invalid key sk-live/12\"34", "invalid key [redacted]"),
            (r#"{"key":"sk-live/12\"34"}"#, r#"{"key":"[redacted]"}"#),
            ("GET /?key=sk-live%2F12%2234", "GET /?key=[redacted]"),
            ("authorization: bearer tok1, BEARER tok2", "authorization: bearer [redacted], BEARER [redacted]"),
            (
                r#"{"headers":{"authorization":"Bearer sk-abc"}}"#,
                r#"{"headers":{"authorization":"Bearer [redacted]"}}"#,
            ),
            ("bad token=unknown-value here", "bad token=[redacted] here"),
            (r#"{"api_key": "unknown-value"}"#, r#"{"api_key": "[redacted]"}"#),
            (r#"{\"access_token\":\"unknown-value\"}"#, r#"{\"access_token\":\"[redacted]\"}"#),
            ("the bare value tok-abcdef", "the bare value [redacted]"),
            ("nothing secret here; tokens are words", "nothing secret here; tokens are words"),
        ];
        for (text, expected) in cases {
            assert_eq!(secrets.words(text), expected, "{text}");
        }
        assert_eq!(redact("a key too short to look for: ab", Some("ab")), "a key too short to look for: ab");
    }

    #[test]
    fn a_secret_split_across_streamed_deltas_is_taken_out() {
        let secrets = Secrets::new(["sk-0123456789"]);
        let mut held = HeldText::default();
        let mut sent = Vec::new();
        let mut sink = |delta: ModelDelta| sent.push(delta);
        for piece in ["The key is sk-01", "2345", "6789, said", " the model."] {
            held.push(&secrets, piece.to_string(), ModelDelta::Text, &mut sink);
        }
        held.flush(&secrets, &mut sink);
        let text: String = sent
            .iter()
            .map(|delta| match delta {
                ModelDelta::Text(text) => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(text, "The key is [redacted], said the model.");
        assert!(sent.len() >= 2, "text still streams: {sent:?}");
    }

    #[test]
    fn a_long_text_is_redacted_in_linear_time() {
        let secrets = Secrets::new(["sk-0123456789"]);
        let text = "bearer ".repeat(200_000) + &"token=".repeat(200_000);
        let redacted = secrets.words(&text);
        assert!(redacted.len() < text.len() * 3);
    }
}
