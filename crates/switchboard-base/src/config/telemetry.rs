//! The `telemetry` section: where each call tree is exported as OpenTelemetry
//! traces (OTLP over HTTP), which headers go with it (each by the name of the
//! environment variable that holds its value, never the value), and whether
//! message content is included (off unless asked, as the GenAI conventions
//! advise). The standard `OTEL_EXPORTER_OTLP_*` variables work without it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use specta::Type;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct TelemetryConfig {
    /// `false` turns export off even when the `OTEL_EXPORTER_OTLP_*` variables are set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// The OTLP/HTTP endpoint: a base URL (`http://127.0.0.1:4318`, `/v1/traces` is added)
    /// or the full traces URL. Else `$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `$OTEL_EXPORTER_OTLP_ENDPOINT`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Headers sent with each export: header name → the environment variable holding its value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Put requests and answers on the spans (`gen_ai.input.messages`, `gen_ai.output.messages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_content: Option<bool>,
    /// The service name of the traces (else `$OTEL_SERVICE_NAME`, else `switchboard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    #[serde(flatten)]
    #[specta(skip)]
    pub extra: Map<String, Value>,
}

/// Whether `name` can name an environment variable.
pub fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|character| character.is_ascii_alphanumeric() || character == '_')
        && !name.starts_with(|character: char| character.is_ascii_digit())
}
