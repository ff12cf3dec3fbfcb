//! Whether traces are exported, and where: the config's `telemetry` section first,
//! then the standard `OTEL_EXPORTER_OTLP_*` and `OTEL_SERVICE_NAME` variables.
//! Header values come from the environment variables the config names. Pure: the
//! environment is passed in.

use std::collections::HashMap;

use switchboard_core::config::TelemetryConfig;

/// Where and how spans are sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSettings {
    /// The full OTLP/HTTP traces URL (`…/v1/traces`).
    pub endpoint: String,
    /// Headers from the config (values read from their variables); the SDK adds
    /// `OTEL_EXPORTER_OTLP_HEADERS` itself.
    pub headers: HashMap<String, String>,
    pub service_name: String,
    pub include_content: bool,
}

const TRACES_PATH: &str = "/v1/traces";

/// The settings in force, `Ok(None)` when export is off; `Err` says what is wrong
/// (a header's variable that is not set).
pub fn resolve(
    config: Option<&TelemetryConfig>,
    variable: impl Fn(&str) -> Option<String>,
) -> Result<Option<ExportSettings>, String> {
    let variable = |name: &str| variable(name).filter(|value| !value.is_empty());
    if config.and_then(|telemetry| telemetry.enabled) == Some(false) {
        return Ok(None);
    }
    let endpoint = match config.and_then(|telemetry| telemetry.endpoint.clone()) {
        Some(endpoint) => traces_url(&endpoint),
        None => match (variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), variable("OTEL_EXPORTER_OTLP_ENDPOINT")) {
            (Some(traces), _) => traces,
            (None, Some(base)) => format!("{}{TRACES_PATH}", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        },
    };
    let mut headers = HashMap::new();
    for (header, name) in config.map(|telemetry| &telemetry.headers).into_iter().flatten() {
        let value = variable(name)
            .ok_or_else(|| format!("telemetry.headers.{header}: the environment variable {name} is not set"))?;
        headers.insert(header.clone(), value);
    }
    let service_name = config
        .and_then(|telemetry| telemetry.service_name.clone())
        .or_else(|| variable("OTEL_SERVICE_NAME"))
        .unwrap_or_else(|| "switchboard".into());
    let include_content = config.and_then(|telemetry| telemetry.include_content).unwrap_or(false);
    Ok(Some(ExportSettings { endpoint, headers, service_name, include_content }))
}

/// A base URL gets `/v1/traces`; a URL that names it already is kept.
fn traces_url(endpoint: &str) -> String {
    let trimmed = endpoint.trim_end_matches('/');
    if trimmed.ends_with(TRACES_PATH) {
        trimmed.to_string()
    } else {
        format!("{trimmed}{TRACES_PATH}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn environment(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn off_unless_the_config_or_the_standard_variables_say_where() {
        assert_eq!(resolve(None, environment(&[])), Ok(None));
        let base = resolve(None, environment(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")]));
        assert_eq!(base.unwrap().unwrap().endpoint, "http://127.0.0.1:4318/v1/traces");
        let both = environment(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9/custom"),
            ("OTEL_SERVICE_NAME", "team-agents"),
        ]);
        let settings = resolve(None, both).unwrap().unwrap();
        assert_eq!((settings.endpoint.as_str(), settings.service_name.as_str()), ("http://b:9/custom", "team-agents"));
        assert!(!settings.include_content, "content is off unless asked");
    }

    #[test]
    fn the_config_wins_and_reads_header_values_from_their_variables() {
        let telemetry = TelemetryConfig {
            endpoint: Some("http://collector:4318/v1/traces".into()),
            headers: BTreeMap::from([("x-api-key".to_string(), "COLLECTOR_KEY".to_string())]),
            include_content: Some(true),
            ..TelemetryConfig::default()
        };
        let env = environment(&[("COLLECTOR_KEY", "k-123"), ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318")]);
        let settings = resolve(Some(&telemetry), env).unwrap().unwrap();
        assert_eq!(settings.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(settings.headers.get("x-api-key").map(String::as_str), Some("k-123"));
        assert!(settings.include_content);
        let missing = resolve(Some(&telemetry), environment(&[])).unwrap_err();
        assert_eq!(missing, "telemetry.headers.x-api-key: the environment variable COLLECTOR_KEY is not set");
        let off = TelemetryConfig { enabled: Some(false), ..telemetry };
        assert_eq!(resolve(Some(&off), environment(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x")])), Ok(None));
    }
}
