//! What the setup wizard and the agent form's "test connection" need from the
//! outside world: the OpenAI-compatible servers that answer on the usual local
//! ports (and on those the user lists in `SWITCHBOARD_LOCAL_SERVERS`), the command-line
//! agents on PATH, a connection test of one agent (`connection.rs`), and whether
//! each configured agent could answer now, without a model call (`health.rs`). Every
//! probe is bounded in time; nothing here writes the config.

pub mod connection;
pub mod health;

use std::ffi::OsString;
use std::time::Duration;

use serde::Serialize;
use specta::Type;

use crate::config::AgentConfig;

/// Extra servers to look for, comma-separated base URLs (`http://10.0.0.5:9000`).
pub const LOCAL_SERVERS_ENV: &str = "SWITCHBOARD_LOCAL_SERVERS";

/// The servers people usually run, by the port they listen on.
pub const USUAL_SERVERS: [(&str, u16); 5] =
    [("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234), ("vLLM", 8000), ("LiteLLM", 4000)];

/// The most of a `/models` answer read (a real one is a few kilobytes).
const MODEL_LIST_BYTES: usize = 4 * 1024 * 1024;

/// How long one server may take to list its models before it counts as absent.
const PROBE_TIMEOUT: Duration = Duration::from_millis(1500);

/// A server that answered `/v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct LocalServer {
    /// What usually runs there ("Ollama"), or "Server" for a listed URL.
    pub kind: String,
    /// The OpenAI-compatible base URL an agent's `url` takes.
    pub url: String,
    pub models: Vec<String>,
}

/// A command-line agent found on PATH, with the agent config that runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct FoundCliAgent {
    pub program: String,
    pub path: String,
    pub agent: AgentConfig,
}

/// What the wizard found.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct SetupDiscovery {
    pub servers: Vec<LocalServer>,
    pub cli_agents: Vec<FoundCliAgent>,
    /// The places that were looked at, for the wizard to say where it looked.
    pub looked_at: Vec<String>,
}

/// One place to look for a server.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub kind: String,
    pub url: String,
}

/// The usual local ports, then the URLs of `listed` (the value of
/// `SWITCHBOARD_LOCAL_SERVERS`, comma-separated).
pub fn candidates(listed: Option<&str>) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = USUAL_SERVERS
        .iter()
        .map(|(kind, port)| Candidate { kind: kind.to_string(), url: format!("http://127.0.0.1:{port}/v1") })
        .collect();
    for url in listed.unwrap_or_default().split(',').map(str::trim).filter(|url| !url.is_empty()) {
        candidates.push(Candidate { kind: "Server".into(), url: openai_base(url) });
    }
    candidates
}

/// The `/v1` base of a server URL as a user writes it (`http://host:port`,
/// `…/v1`, or a full `…/chat/completions` endpoint).
pub fn openai_base(url: &str) -> String {
    let base = url.trim().trim_end_matches('/');
    if let Some(endpoint_base) = base.strip_suffix("/chat/completions") {
        // A full endpoint says where the base is (Gemini's is `…/v1beta/openai`).
        return endpoint_base.to_string();
    }
    if base.ends_with("/v1") {
        base.to_string()
    } else {
        format!("{base}/v1")
    }
}

/// Looks at every candidate at once and at PATH (`path`, the value of `PATH`).
pub async fn discover(candidates: &[Candidate], path: Option<OsString>) -> SetupDiscovery {
    let client = match reqwest::Client::builder().timeout(PROBE_TIMEOUT).no_proxy().build() {
        Ok(client) => client,
        Err(_) => reqwest::Client::new(),
    };
    let probes = candidates.iter().map(|candidate| {
        let client = client.clone();
        async move {
            let models =
                list_models(&client, &candidate.url, None, crate::config::Provider::OpenAiCompatible).await.ok()?;
            Some(LocalServer { kind: candidate.kind.clone(), url: candidate.url.clone(), models })
        }
    });
    let servers = futures::future::join_all(probes).await.into_iter().flatten().collect();
    SetupDiscovery {
        servers,
        cli_agents: find_cli_agents(path),
        looked_at: candidates.iter().map(|candidate| candidate.url.clone()).collect(),
    }
}

/// The model ids `GET {base}/models` lists.
pub(crate) async fn list_models(
    client: &reqwest::Client,
    base: &str,
    key: Option<&str>,
    provider: crate::config::Provider,
) -> Result<Vec<String>, ModelsError> {
    let url = format!("{}/models", openai_base(base));
    let mut request = client.get(&url);
    // Anthropic's API lists its models in the same shape, behind its own headers.
    let anthropic = provider == crate::config::Provider::Anthropic;
    if anthropic {
        request = request.header("anthropic-version", crate::runner::anthropic::API_VERSION);
    }
    if let Some(key) = key {
        request = if anthropic { request.header("x-api-key", key) } else { request.bearer_auth(key) };
    }
    let response = request.send().await.map_err(|_| ModelsError::Unreachable)?;
    let status = response.status();
    if !status.is_success() {
        return Err(ModelsError::Status(status.as_u16()));
    }
    // A model list is small; a server that sends more is not one (and is not read on).
    let text = crate::runner::http::body_within(response, MODEL_LIST_BYTES).await.map_err(|_| ModelsError::NotAList)?;
    let body: serde_json::Value = serde_json::from_str(&text).map_err(|_| ModelsError::NotAList)?;
    let data = body.get("data").and_then(|data| data.as_array()).ok_or(ModelsError::NotAList)?;
    Ok(data.iter().filter_map(|model| model.get("id")?.as_str().map(str::to_string)).take(500).collect())
}

#[derive(Debug)]
pub(crate) enum ModelsError {
    Unreachable,
    Status(u16),
    NotAList,
}

/// The command-line agents with a preset, when their program is on `path`.
pub fn find_cli_agents(path: Option<OsString>) -> Vec<FoundCliAgent> {
    let path = path.unwrap_or_default();
    let mut found = Vec::new();
    for (provider, program) in crate::config::preset_programs() {
        if let Some(location) = crate::runner::cli::presets::find_program(program.command, &path) {
            found.push(FoundCliAgent {
                program: program.command.into(),
                path: location.display().to_string(),
                agent: AgentConfig::new(program.agent_name, provider),
            });
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Provider;

    #[test]
    fn a_server_url_becomes_its_openai_base() {
        for (written, base) in [
            ("http://127.0.0.1:4000", "http://127.0.0.1:4000/v1"),
            ("http://127.0.0.1:4000/", "http://127.0.0.1:4000/v1"),
            ("http://host/v1", "http://host/v1"),
            ("http://host/v1/chat/completions", "http://host/v1"),
            (" http://host:1/api/v1/ ", "http://host:1/api/v1"),
            (
                "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions",
                "https://generativelanguage.googleapis.com/v1beta/openai",
            ),
        ] {
            assert_eq!(openai_base(written), base, "{written}");
        }
    }

    #[test]
    fn listed_servers_follow_the_usual_ports() {
        let found = candidates(Some("http://10.0.0.5:9000, ,http://h/v1"));
        let urls: Vec<&str> = found.iter().map(|candidate| candidate.url.as_str()).collect();
        assert_eq!(urls[0], "http://127.0.0.1:11434/v1");
        assert_eq!(&urls[5..], ["http://10.0.0.5:9000/v1", "http://h/v1"]);
        assert_eq!(candidates(None).len(), USUAL_SERVERS.len());
    }

    #[test]
    fn cli_agents_are_found_only_on_the_given_path() {
        use std::os::unix::fs::PermissionsExt;
        // The files on the path with their modes, and the agents found.
        type Case = (&'static [(&'static str, u32)], &'static [(&'static str, Provider)]);
        let cases: [Case; 5] = [
            (&[("aider", 0o755)], &[("aider", Provider::AiderCli)]),
            (
                &[("qwen", 0o755), ("gemini", 0o755), ("codex", 0o755), ("claude", 0o755)],
                &[
                    ("claude-code", Provider::ClaudeCode),
                    ("codex", Provider::Codex),
                    ("gemini", Provider::GeminiCli),
                    ("qwen", Provider::QwenCode),
                ],
            ),
            (&[("smolagent", 0o755)], &[("smolagents", Provider::Smolagents)]),
            (
                &[("smolagent", 0o755), ("aider", 0o755), ("other", 0o755)],
                &[("aider", Provider::AiderCli), ("smolagents", Provider::Smolagents)],
            ),
            (&[("smolagent", 0o644)], &[]),
        ];
        for (files, expected) in cases {
            let directory = tempfile::tempdir().unwrap();
            for (file, mode) in files {
                let path = directory.path().join(file);
                std::fs::write(&path, "#!/bin/sh\n").unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).unwrap();
            }
            let found = find_cli_agents(Some(directory.path().as_os_str().to_owned()));
            let got: Vec<(&str, Provider)> =
                found.iter().map(|agent| (agent.agent.name.as_str(), agent.agent.provider)).collect();
            assert_eq!(got, expected, "{files:?}");
            for agent in &found {
                assert_eq!(agent.path, directory.path().join(&agent.program).display().to_string());
            }
        }
    }
}
