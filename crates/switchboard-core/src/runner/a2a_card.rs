//! An A2A agent's card (A2A 1.0): its name, description and skills (which make a
//! tool entry's description), the JSON-RPC endpoint it answers on, and whether it
//! streams; a card that offers no A2A 1.0 JSON-RPC interface is refused in words.
//! Pure.

use serde_json::Value;

/// What the card says that a call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentCard {
    pub name: String,
    pub description: String,
    pub skills: Vec<String>,
    /// The JSON-RPC endpoint of A2A 1.0.
    pub endpoint: String,
    pub streaming: bool,
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
    let endpoint = endpoint.ok_or_else(|| {
        let offered: Vec<String> = interfaces
            .iter()
            .map(|interface| {
                let field = |name: &str| interface.get(name).and_then(Value::as_str).unwrap_or("?").to_string();
                format!("{} {}", field("protocolBinding"), field("protocolVersion"))
            })
            .collect();
        let offered = if offered.is_empty() { "none (an A2A 0.3 card?)".to_string() } else { offered.join(", ") };
        format!("the agent card offers no JSON-RPC interface of A2A 1.0 (it offers: {offered})")
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let old = json!({"name": "x", "url": "http://h/old", "protocolVersion": "0.3"});
        assert_eq!(
            parse_card(&old).unwrap_err(),
            "the agent card offers no JSON-RPC interface of A2A 1.0 (it offers: none (an A2A 0.3 card?))"
        );
    }
}
