//! Which of an MCP tool's arguments get a call's request and its context, read
//! from the tool's input schema. Pure.

use rmcp::model::JsonObject;
use serde_json::Value;

/// The tool's first required argument whose type is `string`.
pub(super) fn first_required_string(schema: &JsonObject) -> Option<String> {
    let required = schema.get("required")?.as_array()?;
    let properties = schema.get("properties")?.as_object()?;
    required.iter().filter_map(Value::as_str).find_map(|name| {
        let is_string =
            properties.get(name).and_then(|property| property.get("type")).and_then(Value::as_str) == Some("string");
        is_string.then(|| name.to_string())
    })
}

/// The JSON Schema type of the tool's argument `name` ("any" when it names none;
/// `["string", "null"]` is a string).
pub(super) fn argument_type(schema: &JsonObject, name: &str) -> Option<String> {
    let property = schema.get("properties")?.as_object()?.get(name)?;
    let kind = match property.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let named: Vec<&str> = kinds.iter().filter_map(Value::as_str).filter(|kind| *kind != "null").collect();
            if named.len() == 1 {
                named[0].to_string()
            } else {
                "any".to_string()
            }
        }
        _ => "any".to_string(),
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::{argument_type, first_required_string};
    use serde_json::json;

    #[test]
    fn the_request_goes_into_the_first_required_string_argument() {
        let schema = |value: serde_json::Value| value.as_object().unwrap().clone();
        let cases = [
            (
                json!({"properties": {"n": {"type": "integer"}, "q": {"type": "string"}}, "required": ["n", "q"]}),
                Some("q"),
            ),
            (json!({"properties": {"q": {"type": "string"}}}), None),
            (
                json!({"properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b", "a"]}),
                Some("b"),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(first_required_string(&schema(input.clone())).as_deref(), expected, "{input}");
        }
    }

    #[test]
    fn the_context_argument_is_found_with_its_type() {
        let schema = json!({"properties": {"q": {"type": "string"}, "ctx": {"type": "object"}, "free": {}}});
        let schema = schema.as_object().unwrap();
        assert_eq!(argument_type(schema, "q").as_deref(), Some("string"));
        assert_eq!(argument_type(schema, "ctx").as_deref(), Some("object"));
        assert_eq!(argument_type(schema, "free").as_deref(), Some("any"));
        assert_eq!(argument_type(schema, "missing"), None);
        let nullable = json!({"properties": {"c": {"type": ["string", "null"]}, "d": {"type": ["object", "null"]}}});
        assert_eq!(argument_type(nullable.as_object().unwrap(), "c").as_deref(), Some("string"));
        assert_eq!(argument_type(nullable.as_object().unwrap(), "d").as_deref(), Some("object"));
    }
}
