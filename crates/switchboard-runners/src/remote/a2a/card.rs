//! An A2A agent's card (A2A 1.0, or 0.3): its name, description and skills (which make a
//! tool entry's description), the JSON-RPC endpoint it answers on, and whether it
//! streams, and the protocol version it speaks (`Dialect`: what differs on the
//! wire between 1.0 and 0.3, with 0.3 results read into the 1.0 shape); a card
//! that offers no JSON-RPC interface of either is refused in words.
//! Pure.

use serde_json::{json, Value};

/// What the card says that a call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCard {
    pub name: String,
    pub description: String,
    pub skills: Vec<String>,
    /// The JSON-RPC endpoint of A2A 1.0.
    pub endpoint: String,
    pub streaming: bool,
    pub dialect: Dialect,
}

/// The protocol version a card's endpoint speaks: 1.0, or 0.3 (older agents, and
/// 1.x SDKs serving them in compatibility mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    V1,
    V03,
}

impl Dialect {
    /// The method name in this version (given as its 1.0 name).
    pub fn method(self, name: &'static str) -> &'static str {
        match (self, name) {
            (Dialect::V1, name) => name,
            (Dialect::V03, "SendMessage") => "message/send",
            (Dialect::V03, "SendStreamingMessage") => "message/stream",
            (Dialect::V03, "GetTask") => "tasks/get",
            (Dialect::V03, "CancelTask") => "tasks/cancel",
            (Dialect::V03, name) => name,
        }
    }

    /// The `A2A-Version` header (0.3 servers take its absence as 0.3).
    pub fn header(self) -> Option<&'static str> {
        match self {
            Dialect::V1 => Some("1.0"),
            Dialect::V03 => None,
        }
    }

    /// A user message with `text`, identified by `id`.
    pub fn user_message(self, id: String, text: &str) -> Value {
        match self {
            Dialect::V1 => json!({ "messageId": id, "role": "ROLE_USER", "parts": [{ "text": text }] }),
            Dialect::V03 => {
                json!({ "kind": "message", "messageId": id, "role": "user", "parts": [{ "kind": "text", "text": text }] })
            }
        }
    }

    /// The `SendMessage` configuration that returns at once (to poll).
    pub fn return_at_once(self) -> Value {
        match self {
            Dialect::V1 => json!({ "returnImmediately": true }),
            Dialect::V03 => json!({ "blocking": false }),
        }
    }

    /// A result in the 1.0 shape: a 0.3 result's `kind` becomes its wrapper key
    /// (`task`, `message`, `statusUpdate`, `artifactUpdate`) and its state the 1.0
    /// name (`working` → `TASK_STATE_WORKING`). A bare task (GetTask) keeps its shape.
    pub fn normalize(self, result: &Value) -> Value {
        if self == Dialect::V1 {
            return result.clone();
        }
        let mut result = result.clone();
        if let Some(state) = result.pointer_mut("/status/state") {
            if let Some(old) = state.as_str() {
                *state = Value::String(format!("TASK_STATE_{}", old.to_uppercase().replace('-', "_")));
            }
        }
        let key = match result.get("kind").and_then(Value::as_str) {
            Some("message") => "message",
            Some("status-update") => "statusUpdate",
            Some("artifact-update") => "artifactUpdate",
            Some("task") if result.get("status").is_some() => return json!({ "task": result }),
            _ => return result,
        };
        json!({ key: result })
    }
}

impl AgentCard {
    /// A tool entry's description made from the card (name, description, skills).
    pub fn tool_description(&self) -> String {
        let skills =
            if self.skills.is_empty() { String::new() } else { format!(" Skills: {}.", self.skills.join("; ")) };
        format!("{}: {}{skills}", self.name, self.description)
    }
}

/// The card's name, description, skills, its A2A 1.0 JSON-RPC endpoint and
/// whether it streams; why not, in words, when it has no such endpoint.
pub fn parse_card(card: &Value) -> Result<AgentCard, String> {
    let text = |pointer: &str| card.pointer(pointer).and_then(Value::as_str).unwrap_or("").to_string();
    let interfaces = card.get("supportedInterfaces").and_then(Value::as_array).cloned().unwrap_or_default();
    let endpoint = interfaces.iter().find_map(|interface| {
        let binding = interface.get("protocolBinding").and_then(Value::as_str);
        let version = interface.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        (binding == Some("JSONRPC") && version.starts_with("1."))
            .then(|| interface.get("url")?.as_str().map(str::to_owned))?
    });
    // An agent of 0.3 (or a 1.x server offering it too): its JSON-RPC interface.
    let older = || {
        let listed = interfaces.iter().find_map(|interface| {
            let binding = interface.get("protocolBinding").and_then(Value::as_str);
            let version = interface.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
            (binding == Some("JSONRPC") && version.starts_with("0.3")).then(|| interface.get("url")?.as_str())?
        });
        let top = || {
            let version = card.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
            let transport = card.get("preferredTransport").and_then(Value::as_str).unwrap_or("JSONRPC");
            (version.starts_with("0.3") && transport == "JSONRPC").then(|| card.get("url")?.as_str())?
        };
        listed.or_else(top).map(str::to_owned)
    };
    let (endpoint, dialect) = match endpoint {
        Some(endpoint) => (Some(endpoint), Dialect::V1),
        None => (older(), Dialect::V03),
    };
    let endpoint = endpoint.ok_or_else(|| {
        let offered: Vec<String> = interfaces
            .iter()
            .map(|interface| {
                let field = |name: &str| interface.get(name).and_then(Value::as_str).unwrap_or("?").to_string();
                format!("{} {}", field("protocolBinding"), field("protocolVersion"))
            })
            .collect();
        let offered = if offered.is_empty() { "none".to_string() } else { offered.join(", ") };
        format!("the agent card offers no JSON-RPC interface of A2A 1.0 or 0.3 (it offers: {offered})")
    })?;
    let skills = card
        .get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|skill| {
            let name = skill.get("name").and_then(Value::as_str).unwrap_or("");
            let description = skill.get("description").and_then(Value::as_str).unwrap_or("");
            if description.is_empty() {
                name.to_string()
            } else {
                format!("{name} ({description})")
            }
        })
        .collect();
    Ok(AgentCard {
        name: text("/name"),
        description: text("/description"),
        skills,
        endpoint,
        streaming: card.pointer("/capabilities/streaming").and_then(Value::as_bool).unwrap_or(false),
        dialect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_card_gives_the_json_rpc_endpoint_of_a2a_1_0_or_says_what_it_offers() {
        let card = json!({
            "name": "Scripted", "description": "Answers.",
            "supportedInterfaces": [
                {"url": "http://h/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                {"url": "http://h/old", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": true},
            "skills": [{"name": "echo", "description": "Echoes."}]
        });
        let parsed = parse_card(&card).unwrap();
        assert_eq!((parsed.endpoint.as_str(), parsed.streaming), ("http://h/rpc", true));
        assert_eq!(parsed.tool_description(), "Scripted: Answers. Skills: echo (Echoes.).");
        assert_eq!(parsed.dialect, Dialect::V1);
        let old = json!({"name": "x", "url": "http://h/old", "protocolVersion": "0.3.0"});
        let parsed = parse_card(&old).unwrap();
        assert_eq!((parsed.endpoint.as_str(), parsed.dialect), ("http://h/old", Dialect::V03));
        let grpc = json!({"name": "x", "supportedInterfaces": [{"url": "u", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]});
        assert_eq!(
            parse_card(&grpc).unwrap_err(),
            "the agent card offers no JSON-RPC interface of A2A 1.0 or 0.3 (it offers: GRPC 1.0)"
        );
    }

    #[test]
    fn a_0_3_result_reads_as_its_1_0_shape() {
        let update = json!({"kind": "status-update", "final": false, "status": {"state": "input-required"}});
        assert_eq!(
            Dialect::V03.normalize(&update),
            json!({"statusUpdate": {"kind": "status-update", "final": false, "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}})
        );
        let task = json!({"kind": "task", "id": "t", "status": {"state": "working"}});
        assert_eq!(Dialect::V03.normalize(&task)["task"]["status"]["state"], "TASK_STATE_WORKING");
        assert_eq!(Dialect::V03.method("CancelTask"), "tasks/cancel");
        assert_eq!(Dialect::V1.normalize(&task), task);
    }
}
