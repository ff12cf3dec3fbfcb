//! The `local` runner against a raw loopback HTTP server that records the exact
//! bytes it receives: the bearer token from `api_key_env`, both URL forms, and the
//! errors for a dead endpoint and a missing key variable (which never leak values).

use std::sync::{Arc, Mutex};

use crate::loopback;
use switchboard_core::runner::local::LocalRunner;
use switchboard_core::runner::{Message, ModelRequest, Runner, RunnerError};
use switchboard_core::{AgentConfig, Provider};

/// Serves `body` to every request; returns the base URL and the raw requests.
async fn sse_server(body: &'static str) -> (String, Arc<Mutex<Vec<String>>>) {
    loopback::serve(Arc::new(move |_: &str| body.to_string())).await
}

/// Usage in a chunk whose `choices` is not empty (as some gateways send it).
const HELLO_STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n\
data: [DONE]\n\n";

fn agent(url: String, key_variable: Option<&str>) -> AgentConfig {
    let mut agent = AgentConfig::new("a", Provider::Local);
    agent.url = Some(url);
    agent.model = Some("m".into());
    agent.api_key_env = key_variable.map(str::to_owned);
    agent.timeout_secs = Some(5);
    agent
}

async fn ask(runner: &LocalRunner) -> Result<switchboard_core::runner::ModelReply, RunnerError> {
    let request = ModelRequest { messages: vec![Message::user("hello")], ..ModelRequest::default() };
    runner.stream(&request, &mut |_| {}).await
}

#[tokio::test]
async fn the_key_goes_as_a_bearer_token_and_both_url_forms_work() {
    let (base, received) = sse_server(HELLO_STREAM).await;
    std::env::set_var("SWITCHBOARD_TEST_BEARER_KEY", "sk-test-123");
    for url in [base.clone(), format!("{base}/v1"), format!("{base}/v1/")] {
        let runner = LocalRunner::new(&agent(url.clone(), Some("SWITCHBOARD_TEST_BEARER_KEY"))).unwrap();
        let reply = ask(&runner).await.unwrap_or_else(|error| panic!("{url}: {error}"));
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.usage.unwrap().total_tokens, 4, "usage in a chunk whose choices is not empty");
    }
    let requests = received.lock().unwrap();
    assert_eq!(requests.len(), 3);
    for request in requests.iter() {
        assert!(request.starts_with("POST /v1/chat/completions HTTP/1.1"), "{request}");
        assert!(request.to_ascii_lowercase().contains("authorization: bearer sk-test-123"), "{request}");
    }
}

#[tokio::test]
async fn a_dead_endpoint_and_a_missing_key_are_clear_and_leak_nothing() {
    let dead = LocalRunner::new(&agent("http://127.0.0.1:9".into(), None)).unwrap();
    match ask(&dead).await {
        Err(error @ RunnerError::Unreachable { .. }) => {
            assert!(error.to_string().contains("127.0.0.1:9/v1/chat/completions"), "{error}")
        }
        other => panic!("expected unreachable, got {other:?}"),
    }
    let (base, received) = sse_server(HELLO_STREAM).await;
    let missing = LocalRunner::new(&agent(base, Some("SWITCHBOARD_TEST_UNSET_KEY"))).unwrap();
    match ask(&missing).await {
        Err(error @ RunnerError::Config(_)) => assert!(error.to_string().contains("SWITCHBOARD_TEST_UNSET_KEY")),
        other => panic!("expected a config error, got {other:?}"),
    }
    assert!(received.lock().unwrap().is_empty(), "nothing is sent without the key");
}
