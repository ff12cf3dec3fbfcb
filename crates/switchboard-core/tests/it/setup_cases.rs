//! The setup wizard's discovery and the form's connection test against real HTTP on
//! loopback: a small OpenAI-compatible server that lists models on `GET /v1/models`
//! (or refuses with a status) and streams a reply on `POST …/chat/completions`,
//! and a port where nothing listens.

use switchboard_core::setup::connection::test_connection;
use switchboard_core::setup::{discover, Candidate};
use switchboard_core::{AgentConfig, Provider};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::loopback::text_stream;

/// Serves `models` on `/v1/models` with `models_status`, and a streamed "ok" on
/// every POST; returns the server's root URL.
async fn model_server(models: &'static [&'static str], models_status: u16) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let root = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buffer = vec![0u8; 64 * 1024];
                let mut read = 0;
                // One request per connection is enough here: read its head (and body).
                while !String::from_utf8_lossy(&buffer[..read]).contains("\r\n\r\n") {
                    match socket.read(&mut buffer[read..]).await {
                        Ok(0) | Err(_) => return,
                        Ok(count) => read += count,
                    }
                }
                let request = String::from_utf8_lossy(&buffer[..read]).into_owned();
                let (status, content_type, body) = if request.starts_with("GET /v1/models") {
                    let data: Vec<String> =
                        models.iter().map(|id| format!("{{\"id\":\"{id}\",\"object\":\"model\"}}")).collect();
                    (
                        models_status,
                        "application/json",
                        format!("{{\"object\":\"list\",\"data\":[{}]}}", data.join(",")),
                    )
                } else {
                    (200, "text/event-stream", text_stream("ok"))
                };
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    root
}

/// A loopback URL where nothing listens (the port was just freed).
async fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn http_agent(url: &str, model: &str) -> AgentConfig {
    let mut agent = AgentConfig::new("probe", Provider::OpenAiCompatible);
    agent.url = Some(url.to_string());
    agent.model = Some(model.to_string());
    agent
}

#[tokio::test]
async fn discovery_lists_the_servers_that_answer_with_their_models() {
    let live = model_server(&["llama3", "qwen2"], 200).await;
    let dead = dead_url().await;
    let candidates = vec![
        Candidate { kind: "Ollama".into(), url: format!("{live}/v1") },
        Candidate { kind: "vLLM".into(), url: dead.clone() },
    ];
    let empty_path = tempfile::tempdir().unwrap();
    let found = discover(&candidates, Some(empty_path.path().as_os_str().to_owned())).await;
    assert_eq!(found.servers.len(), 1, "{found:?}");
    assert_eq!(found.servers[0].kind, "Ollama");
    assert_eq!(found.servers[0].models, ["llama3", "qwen2"]);
    assert_eq!(found.looked_at, [format!("{live}/v1"), dead]);
    assert!(found.cli_agents.is_empty());
}

#[tokio::test]
async fn a_working_server_passes_both_steps_with_the_first_token_time() {
    let root = model_server(&["m1", "m2"], 200).await;
    let report = test_connection(&http_agent(&root, "m2"), None).await;
    assert!(report.ok, "{report:?}");
    let names: Vec<&str> = report.steps.iter().map(|step| step.name.as_str()).collect();
    assert_eq!(names, ["list models", "stream a reply"]);
    assert_eq!(report.models, ["m1", "m2"]);
    assert!(report.first_token_ms.is_some());
    assert!(report.steps[1].detail.contains("\"ok\""), "{}", report.steps[1].detail);
}

#[tokio::test]
async fn each_failure_is_said_in_plain_words() {
    let root = model_server(&["m1"], 200).await;
    let unlisted = test_connection(&http_agent(&root, "gpt-9"), None).await;
    assert!(!unlisted.ok);
    assert!(unlisted.steps[0].detail.contains("does not list the model \"gpt-9\"; it lists m1"), "{unlisted:?}");

    let refusing = model_server(&[], 401).await;
    let refused = test_connection(&http_agent(&refusing, "m"), None).await;
    // No key was sent: the report says the server wants one, not that a key was wrong.
    assert!(refused.steps[0].detail.contains("asks for a key (HTTP 401/403)"), "{refused:?}");

    let dead = test_connection(&http_agent(&dead_url().await, "m"), None).await;
    assert!(!dead.ok);
    assert!(dead.steps.iter().all(|step| !step.ok));
    assert!(dead.steps[0].detail.starts_with("Nothing answers at"), "{dead:?}");

    let mut modelless = http_agent(&root, "m1");
    modelless.model = None;
    let listed = test_connection(&modelless, None).await;
    assert!(listed.ok && listed.steps.len() == 1, "without a model only the list is read: {listed:?}");
    assert_eq!(listed.models, ["m1"]);

    let mut keyless = http_agent(&root, "m1");
    keyless.api_key_env = Some("SWITCHBOARD_TEST_UNSET_KEY_VARIABLE".into());
    let unset = test_connection(&keyless, None).await;
    assert_eq!(unset.steps.len(), 1, "nothing is sent without the key: {unset:?}");
    assert!(unset.steps[0].detail.contains("SWITCHBOARD_TEST_UNSET_KEY_VARIABLE is not set"));
}

#[tokio::test]
async fn a_command_line_agent_is_looked_for_on_the_given_path() {
    let folder = tempfile::tempdir().unwrap();
    let mut aider = AgentConfig::new("aider", Provider::AiderCli);
    let missing = test_connection(&aider, Some(folder.path().as_os_str().to_owned())).await;
    assert!(!missing.ok);
    assert!(missing.steps[0].detail.contains("\"aider\" is not on PATH"), "{missing:?}");
    let program = folder.path().join("aider");
    std::fs::write(&program, "#!/bin/sh\n").unwrap();
    // A file that may not be executed is not the program (the shell would pass it over).
    let not_executable = test_connection(&aider, Some(folder.path().as_os_str().to_owned())).await;
    assert!(!not_executable.ok, "{not_executable:?}");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let found = test_connection(&aider, Some(folder.path().as_os_str().to_owned())).await;
    assert!(found.ok, "{found:?}");
    aider.command = Some("/nonexistent/aider".into());
    assert!(!test_connection(&aider, None).await.ok);
}

/// The form's test of an agent whose key is in the keyring: the key read from the
/// keyring is the bearer token; a server that echoes it has it taken out of the
/// report; an entry with no key is said before anything is sent.
#[tokio::test]
async fn a_keyring_key_is_tested_as_the_bearer_and_its_echo_is_taken_out() {
    use std::sync::Arc;
    use switchboard_core::keys::{KeyStore, Keys, MemoryKeys};
    use switchboard_core::setup::connection::test_connection_with_keys;
    // A hostile server: it spells the key out in its answer.
    let (base, received) =
        crate::loopback::serve(Arc::new(|_: &str| crate::loopback::text_stream("you sent sk-probe-secret-5150"))).await;
    let memory = MemoryKeys::shared();
    let keys: Keys = memory.clone();
    let mut agent = http_agent(&format!("{base}/v1"), "m");
    agent.api_key_keyring = Some("probe-key".into());
    let empty = test_connection_with_keys(&agent, None, &keys).await;
    assert!(!empty.ok);
    assert!(empty.steps[0].detail.contains("No key is stored in the system keyring for \"probe-key\""), "{empty:?}");
    assert!(received.lock().unwrap().is_empty(), "nothing is sent without the key");
    memory.set("probe-key", "sk-probe-secret-5150").unwrap();
    let report = test_connection_with_keys(&agent, None, &keys).await;
    let stream = report.steps.iter().find(|step| step.name == "stream a reply").expect("the stream step ran");
    assert!(stream.ok && stream.detail.contains("you sent [redacted]"), "{report:?}");
    assert!(!format!("{report:?}").contains("sk-probe-secret-5150"), "{report:?}");
    let requests = received.lock().unwrap();
    assert!(
        requests.iter().all(|request| request.contains("authorization: Bearer sk-probe-secret-5150")),
        "{requests:?}"
    );
}

/// Health up front, without a model call: each kind of agent's check, at once,
/// with a problem said in words.
#[tokio::test]
async fn each_agents_health_is_checked_at_once_without_a_model_call() {
    use switchboard_core::keys::{Keys, MemoryKeys};
    use switchboard_core::setup::health::{check_all, HealthState};
    let root = model_server(&["m1"], 200).await;
    let folder = tempfile::tempdir().unwrap();
    let mut listed = http_agent(&root, "m1");
    listed.name = "listed".into();
    let mut unlisted = http_agent(&root, "gpt-9");
    unlisted.name = "unlisted".into();
    let mut dead = http_agent(&dead_url().await, "m");
    dead.name = "dead".into();
    let mut keyless = http_agent(&root, "m1");
    keyless.name = "keyless".into();
    keyless.api_key_keyring = Some("nowhere".into());
    let aider = AgentConfig::new("aider", Provider::AiderCli);
    let mut remote = AgentConfig::new("remote", Provider::Mcp);
    remote.url = Some("http://127.0.0.1:9/mcp".into());
    let demo = AgentConfig::new("demo", Provider::Demo);
    let keys: Keys = MemoryKeys::shared();
    let agents = [listed, unlisted, dead, keyless, aider, remote, demo];
    let report = check_all(&agents, Some(folder.path().as_os_str().to_owned()), &keys).await;
    let states: Vec<(&str, HealthState)> = report.iter().map(|health| (health.agent.as_str(), health.state)).collect();
    assert_eq!(
        states,
        [
            ("listed", HealthState::Ok),
            ("unlisted", HealthState::Problem),
            ("dead", HealthState::Problem),
            ("keyless", HealthState::Problem),
            ("aider", HealthState::Problem),
            ("remote", HealthState::Unknown),
            ("demo", HealthState::Ok),
        ]
    );
    let detail = |name: &str| report.iter().find(|health| health.agent == name).unwrap().detail.clone();
    assert!(detail("unlisted").contains("does not list the model \"gpt-9\""), "{report:?}");
    assert!(detail("dead").starts_with("nothing answers at"), "{report:?}");
    assert!(detail("keyless").contains("no key is stored in the system keyring for \"nowhere\""), "{report:?}");
    assert!(detail("aider").contains("aider is not on PATH"), "{report:?}");
}
