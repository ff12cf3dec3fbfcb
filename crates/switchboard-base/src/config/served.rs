//! How the MCP server offers an entry to its clients (the entry's `serve`), over
//! the defaults: the tool's name (`agent_<name>` otherwise), the JSON Schema of its
//! arguments (`request` and `context` otherwise: the arguments, as JSON text, are
//! then the agent's request), and whether a call runs as a task of the MCP tasks
//! extension. Models are offered the entry as before: this is what an MCP client
//! of `switchboard mcp` (or the app's endpoint) sees, as a tool of its own shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use specta::Type;
use specta_typescript::Unknown;

/// The longest tool name MCP allows (and its characters: ASCII letters, digits,
/// `_`, `-` and `.`).
pub const MAX_SERVED_NAME_LEN: usize = 128;
/// The largest argument schema taken (it is sent in every `tools/list`).
pub const MAX_ARGUMENTS_SCHEMA_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, Default)]
pub struct ServedTool {
    /// The tool's name for MCP clients, instead of `agent_<name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The JSON Schema (an object schema) of the tool's arguments, instead of
    /// `request` and `context`; the arguments a client sends, as JSON text, are the
    /// agent's request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[specta(type = Option<Unknown>)]
    pub arguments: Option<Value>,
    /// Whether a call runs as a task: `optional` (when the client declares the
    /// extension; the default), `forbidden` (always answered in place), `required`
    /// (a client that does not declare the extension is refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskSupport>,
}

/// The values of MCP 2025-11-25's `execution.taskSupport`. The tool list does not
/// carry them (rmcp 3.11's `Tool` has no such field, and 2026-07-28 dropped it): a
/// client learns `required` from the -32021 answer, `forbidden` from the answer
/// coming on the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, Default)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    Forbidden,
    #[default]
    Optional,
    Required,
}

impl ServedTool {
    /// What is wrong with it, each with the field it concerns (`name`, `arguments`).
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        if let Some(name) = &self.name {
            let allowed = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.');
            if name.is_empty() || name.len() > MAX_SERVED_NAME_LEN || !name.bytes().all(allowed) {
                problems.push((
                    "name",
                    format!(
                        "{name:?} is not an MCP tool name: 1 to {MAX_SERVED_NAME_LEN} ASCII letters, digits, '_', '-' or '.'"
                    ),
                ));
            }
        }
        if let Some(schema) = &self.arguments {
            if let Err(why) = check_schema(schema) {
                problems.push(("arguments", why));
            }
        }
        problems
    }

    /// The names of the arguments `arguments` requires (none when it has no schema).
    pub fn required_arguments(&self) -> Vec<&str> {
        let required = self.arguments.as_ref().and_then(|schema| schema.get("required")).and_then(Value::as_array);
        required.into_iter().flatten().filter_map(Value::as_str).collect()
    }
}

fn check_schema(schema: &Value) -> Result<(), String> {
    let Some(object) = schema.as_object() else {
        return Err("must be a JSON Schema object, such as {\"type\": \"object\", \"properties\": {…}}".into());
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return Err("must say \"type\": \"object\": a tool's arguments are an object".into());
    }
    if object.get("properties").is_some_and(|properties| !properties.is_object()) {
        return Err("\"properties\" must be an object".into());
    }
    if let Some(required) = object.get("required") {
        let names = required.as_array().filter(|names| names.iter().all(Value::is_string));
        if names.is_none() {
            return Err("\"required\" must be a list of argument names".into());
        }
    }
    if serde_json::to_string(schema).map_or(0, |text| text.len()) > MAX_ARGUMENTS_SCHEMA_BYTES {
        return Err(format!("is over {} KiB", MAX_ARGUMENTS_SCHEMA_BYTES / 1024));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_schemas_are_checked() {
        let served = |name: &str, arguments: Value| ServedTool {
            name: Some(name.into()),
            arguments: Some(arguments),
            task: None,
        };
        let object = json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] });
        assert!(served("greet", object.clone()).problems().is_empty());
        assert_eq!(served("greet", object).required_arguments(), vec!["name"]);
        for (name, arguments, field) in [
            ("has space", json!({ "type": "object" }), "name"),
            ("", json!({ "type": "object" }), "name"),
            (&"x".repeat(129), json!({ "type": "object" }), "name"),
            ("ok", json!({ "type": "string" }), "arguments"),
            ("ok", json!(["not", "a", "schema"]), "arguments"),
            ("ok", json!({ "type": "object", "properties": [] }), "arguments"),
            ("ok", json!({ "type": "object", "required": [1] }), "arguments"),
        ] {
            let problems = served(name, arguments).problems();
            assert_eq!(problems.iter().map(|(field, _)| *field).collect::<Vec<_>>(), vec![field], "{problems:?}");
        }
        let task: ServedTool = serde_json::from_value(json!({ "task": "required" })).unwrap();
        assert_eq!(task.task, Some(TaskSupport::Required));
    }
}
