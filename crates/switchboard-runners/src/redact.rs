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

use crate::config::AgentConfig;
use crate::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError};
use crate::event::Steering;

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
        Secrets::with_key(agent, None)
    }

    /// The secrets `agent`'s runner holds now: those of the environment, and its
    /// key from the keyring when it has one there (read from `keys`).
    pub async fn of_agent(agent: &AgentConfig, keys: &crate::keys::Keys) -> Secrets {
        let key = match &agent.api_key_keyring {
            Some(entry) => crate::keys::read(keys, entry).await.ok().flatten(),
            None => None,
        };
        Secrets::with_key(agent, key)
    }

    /// The secrets of the environment, and `key` (an agent's key read elsewhere).
    pub fn with_key(agent: &AgentConfig, key: Option<String>) -> Secrets {
        let mut values: Vec<String> = agent.api_key_env.iter().filter_map(|name| std::env::var(name).ok()).collect();
        values.extend(key);
        for (name, value) in &agent.env {
            match crate::config::env_reference(value) {
                Some(variable) => values.extend(std::env::var(variable).ok()),
                None if looks_secret(name) => values.push(value.clone()),
                None => {}
            }
        }
        Secrets::new(values.iter().map(String::as_str))
    }

    /// `text` with every known secret taken out, and a secret's start where the
    /// text was cut (at its end, or before a `…` or an `[output cut` note) too.
    pub fn known(&self, text: &str) -> String {
        let mut text = self.whole(text);
        if self.forms.is_empty() {
            return text;
        }
        let mut cuts: Vec<usize> = text.match_indices('…').map(|(at, _)| at).collect();
        cuts.extend(text.match_indices("\n[output cut").map(|(at, _)| at));
        cuts.push(text.len());
        cuts.sort_unstable();
        for &cut in cuts.iter().rev() {
            if let Some(start) = self.cut_secret_before(&text[..cut]) {
                text.replace_range(start..cut, REDACTED);
            }
        }
        text
    }

    /// `text` with every whole secret taken out.
    fn whole(&self, text: &str) -> String {
        let mut text = text.to_string();
        for form in &self.forms {
            if text.contains(form.as_str()) {
                text = text.replace(form.as_str(), REDACTED);
            }
        }
        text
    }

    /// Where the start of a secret (at least `SHORTEST` bytes of one) that `head`
    /// ends with begins.
    fn cut_secret_before(&self, head: &str) -> Option<usize> {
        self.forms.iter().find_map(|form| {
            (SHORTEST..form.len())
                .rev()
                .find(|length| form.is_char_boundary(*length) && head.ends_with(&form[..*length]))
                .map(|length| head.len() - length)
        })
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
    BEARER.get_or_init(|| Regex::new(r#"(?i)(\bbearer\s+)[^\s"',;}\]\[][^\s"',;}\]]*"#).expect("a valid pattern"))
}

fn named_value() -> &'static Regex {
    static NAMED: OnceLock<Regex> = OnceLock::new();
    NAMED.get_or_init(|| {
        Regex::new(
            r#"(?i)(\b(?:access_token|refresh_token|id_token|token|api[_-]?key|apikey|x-api-key|secret|client_secret|password|passwd)\b)(\\?["']?\s*[:=]\s*\\?["']?)[^\s"'\\&,;}\]\[][^\s"'\\&,;}\]]{3,}"#,
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
    /// Where the agent's `api_key_keyring` key is read, to be taken out too.
    pub keys: crate::keys::Keys,
}

#[async_trait]
impl Runner for Redacting {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let secrets = Secrets::of_agent(&self.agent, &self.keys).await;
        let mut held = HeldText::default();
        let outcome = {
            let mut redacting = |delta: ModelDelta| match delta {
                ModelDelta::Text(text) => held.push(&secrets, text, ModelDelta::Text, on_delta),
                ModelDelta::Reasoning(text) => held.push(&secrets, text, ModelDelta::Reasoning, on_delta),
                other => on_delta(redact_delta(&secrets, other)),
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

    fn steering(&self) -> Steering {
        self.inner.steering()
    }
}

/// Streamed text not sent on yet, per kind (text, reasoning): a tail that may be
/// the start of a secret. Other deltas pass at once and do not release it, so a
/// secret split around a progress line is still whole when it is redacted (the
/// held tail, under the longest secret's length, may reach the stream after them).
#[derive(Default)]
struct HeldText {
    text: String,
    reasoning: String,
}

impl HeldText {
    fn push(&mut self, secrets: &Secrets, text: String, make: fn(String) -> ModelDelta, on_delta: DeltaSink<'_>) {
        if secrets.is_empty() {
            return on_delta(make(text));
        }
        let held =
            if matches!(make(String::new()), ModelDelta::Reasoning(_)) { &mut self.reasoning } else { &mut self.text };
        held.push_str(&text);
        // Whole secrets only: the held tail may be a secret's start still coming.
        *held = secrets.whole(held);
        let keep = secrets.longest().saturating_sub(1).min(held.len());
        let mut cut = held.len() - keep;
        while !held.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            let rest = held.split_off(cut);
            on_delta(make(std::mem::replace(held, rest)));
        }
    }

    fn flush(&mut self, secrets: &Secrets, on_delta: DeltaSink<'_>) {
        for (held, make) in [
            (&mut self.reasoning, ModelDelta::Reasoning as fn(String) -> ModelDelta),
            (&mut self.text, ModelDelta::Text),
        ] {
            if !held.is_empty() {
                on_delta(make(secrets.known(&std::mem::take(held))));
            }
        }
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
        ModelDelta::Steered { message, by, taken, why } => {
            ModelDelta::Steered { message, by, taken, why: why.map(|why| secrets.words(&why)) }
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

/// `error` with `agent`'s secrets taken out: for the paths that use a runner's
/// parts directly (`agent probe`, the connection test), not through `build`.
pub fn error_of(agent: &AgentConfig, error: RunnerError) -> RunnerError {
    redact_error(&Secrets::of(agent), error)
}

/// `error` with `agent`'s secrets and `key` (its key, read elsewhere) taken out.
pub fn error_with_key(agent: &AgentConfig, key: Option<&str>, error: RunnerError) -> RunnerError {
    redact_error(&Secrets::with_key(agent, key.map(str::to_string)), error)
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
        RunnerError::NotStarted { agent, message } => RunnerError::NotStarted { agent, message: words(message) },
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

    /// A runner that streams `deltas` and answers `reply`.
    struct Scripted(Vec<ModelDelta>, String);

    #[async_trait]
    impl Runner for Scripted {
        async fn stream(&self, _: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
            self.0.iter().cloned().for_each(&mut *on_delta);
            Ok(ModelReply { text: self.1.clone(), ..ModelReply::default() })
        }
    }

    #[tokio::test]
    async fn a_secret_split_across_deltas_and_around_other_deltas_is_taken_out() {
        // A secret by its variable's looks (no process environment to change).
        let mut agent = AgentConfig::new("echo", crate::config::Provider::Demo);
        agent.env.insert("SERVICE_API_KEY".into(), "sk-0123456789é".into());
        let progress = || ModelDelta::Progress { message: "working".into(), data: None };
        let deltas = vec![
            ModelDelta::Text("The key is sk-01".into()),
            progress(),
            ModelDelta::Reasoning("I think sk-0123".into()),
            ModelDelta::Text("2345".into()),
            progress(),
            ModelDelta::Reasoning("456789é, yes".into()),
            ModelDelta::Text("6789é, said".into()),
            ModelDelta::Text(" the model.".into()),
        ];
        let wrapped = Redacting {
            inner: Arc::new(Scripted(deltas, "sk-0123456789é".into())),
            agent,
            keys: crate::keys::MemoryKeys::shared(),
        };
        let mut sent = Vec::new();
        let reply = wrapped.stream(&ModelRequest::default(), &mut |delta| sent.push(delta)).await.unwrap();
        let joined = |reasoning: bool| -> String {
            sent.iter()
                .filter_map(|delta| match delta {
                    ModelDelta::Text(text) if !reasoning => Some(text.as_str()),
                    ModelDelta::Reasoning(text) if reasoning => Some(text.as_str()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(joined(false), "The key is [redacted], said the model.");
        assert_eq!(joined(true), "I think [redacted], yes");
        assert_eq!(reply.text, "[redacted]");
        assert!(sent.iter().filter(|delta| matches!(delta, ModelDelta::Text(_))).count() >= 2, "text still streams");
    }

    #[test]
    fn a_secret_cut_by_a_truncation_and_text_already_redacted_are_kept_right() {
        let secrets = Secrets::new(["sk-0123456789abcdef"]);
        let cases = [
            ("401: invalid key sk-0123456…", "401: invalid key [redacted]…"),
            ("the tail ends in sk-0123", "the tail ends in [redacted]"),
            ("x sk-01234\n[output cut at 10 bytes]", "x [redacted]\n[output cut at 10 bytes]"),
            ("Bearer [redacted] (token=[redacted];", "Bearer [redacted] (token=[redacted];"),
            ("a word that starts nothing: sk-9", "a word that starts nothing: sk-9"),
        ];
        for (text, expected) in cases {
            assert_eq!(secrets.words(text), expected, "{text}");
        }
    }
}
