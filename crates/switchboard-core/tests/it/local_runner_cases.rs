//! The `local` runner against a raw loopback HTTP server that records the exact
//! bytes it receives: the bearer token from `api_key_env`, both URL forms, and the
//! errors for a dead endpoint and a missing key variable (which never leak values).

use std::sync::{Arc, Mutex};

use crate::loopback;
use switchboard_core::contract::{Message, ModelDelta, ModelRequest, Runner, RunnerError};
use switchboard_core::runner::local::LocalRunner;
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
    let mut agent = AgentConfig::new("a", Provider::OpenAiCompatible);
    agent.url = Some(url);
    agent.model = Some("m".into());
    agent.api_key_env = key_variable.map(str::to_owned);
    agent.timeout_secs = Some(5);
    agent
}

async fn ask(runner: &LocalRunner) -> Result<switchboard_core::contract::ModelReply, RunnerError> {
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
    // A key is set, so there is something to leak: the error names the URL, never the key.
    std::env::set_var("SWITCHBOARD_TEST_DEAD_KEY", "sk-never-printed-31337");
    let dead = LocalRunner::new(&agent("http://127.0.0.1:9".into(), Some("SWITCHBOARD_TEST_DEAD_KEY"))).unwrap();
    match ask(&dead).await {
        Err(error @ RunnerError::Unreachable { .. }) => {
            assert!(error.to_string().contains("127.0.0.1:9/v1/chat/completions"), "{error}");
            assert!(!format!("{error} {error:?}").contains("sk-never-printed-31337"), "{error:?}");
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

/// One piece of a scripted answer: a pause, then bytes.
type Piece = (u64, String);

/// A raw HTTP server on loopback whose answer to the n-th request (from 0) is
/// `script(n, request)`: pieces written after their pauses (milliseconds), then the
/// connection closes. Returns the base URL.
async fn scripted_server(script: impl Fn(usize, &str) -> Vec<Piece> + Send + Sync + 'static) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let script = Arc::new(script);
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (script, count) = (script.clone(), count.clone());
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut chunk = [0u8; 8192];
                loop {
                    let text = String::from_utf8_lossy(&request).to_string();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .to_ascii_lowercase()
                            .lines()
                            .find_map(|line| {
                                line.strip_prefix("content-length:").map(|value| value.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0usize);
                        if body.len() >= length {
                            break;
                        }
                    }
                    match socket.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => request.extend_from_slice(&chunk[..read]),
                    }
                }
                let index = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                for (pause, bytes) in script(index, &String::from_utf8_lossy(&request)) {
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                    if socket.write_all(bytes.as_bytes()).await.is_err() {
                        return;
                    }
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    base
}

fn answer(status: &str, content_type: &str, body: &str) -> Vec<Piece> {
    vec![(0, format!("HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()))]
}

/// Runs one step, collecting the deltas as text (progress lines prefixed with `…`).
async fn step_with_deltas(
    runner: &LocalRunner,
) -> (Result<switchboard_core::contract::ModelReply, RunnerError>, Vec<String>) {
    let request = ModelRequest { messages: vec![Message::user("hello")], ..ModelRequest::default() };
    let mut deltas = Vec::new();
    let result = runner
        .stream(&request, &mut |delta| match delta {
            ModelDelta::Text(text) => deltas.push(text),
            ModelDelta::Progress { message, .. } => deltas.push(format!("… {message}")),
            ModelDelta::Reasoning(_) | ModelDelta::InputRequired { .. } | ModelDelta::Steered { .. } => {}
        })
        .await;
    (result, deltas)
}

#[tokio::test]
async fn a_whole_json_completion_is_accepted_and_other_bodies_are_named() {
    let completion = r#"{"choices":[{"message":{"role":"assistant","content":"whole answer","tool_calls":[{"id":"call_9","type":"function","function":{"name":"agent_x","arguments":"{\"request\":\"r\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#;
    let base = scripted_server(move |_, _| answer("200 OK", "application/json; charset=utf-8", completion)).await;
    let (reply, deltas) = step_with_deltas(&LocalRunner::new(&agent(base, None)).unwrap()).await;
    let reply = reply.unwrap();
    assert_eq!((reply.text.as_str(), reply.usage.map(|usage| usage.total_tokens)), ("whole answer", Some(7)));
    assert_eq!((reply.tool_calls[0].id.as_str(), reply.tool_calls[0].function.name.as_str()), ("call_9", "agent_x"));
    assert_eq!(deltas, vec!["whole answer"], "the text still reaches the stream");
    // What the answer was, and an excerpt of it, are in the error.
    let cases = [
        ("text/html", "<html><body>502 Bad Gateway</body></html>", ["text/html", "502 Bad Gateway"]),
        ("text/plain", "upstream connect error", ["text/plain", "upstream connect error"]),
        ("application/json", r#"{"detail":"not a completion"}"#, ["has no message", "not a completion"]),
    ];
    for (content_type, body, needles) in cases {
        let base = scripted_server(move |_, _| answer("200 OK", content_type, body)).await;
        match ask(&LocalRunner::new(&agent(base, None)).unwrap()).await {
            Err(error @ RunnerError::MalformedStream { .. }) => {
                let message = error.to_string();
                assert!(needles.iter().all(|needle| message.contains(needle)), "{message}");
            }
            other => panic!("{content_type}: expected a malformed answer, got {other:?}"),
        }
    }
}

/// A hostile stream: one `data:` line that never ends, `pieces` of 64 KB each
/// `pause` ms apart.
fn endless_line(pieces: usize, pause: u64) -> Vec<Piece> {
    let mut script =
        vec![(0, "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: ".to_string())];
    script.extend((0..pieces).map(|_| (pause, "x".repeat(64 * 1024))));
    script
}

#[tokio::test]
async fn an_endless_line_is_cut_at_its_cap_and_a_trickling_one_by_the_idle_timeout() {
    // 64 MB with no line end: refused once one event passes max_output_bytes.
    let base = scripted_server(|_, _| endless_line(1024, 0)).await;
    let mut capped = agent(base, None);
    capped.max_output_bytes = Some(1024 * 1024);
    match ask(&LocalRunner::new(&capped).unwrap()).await {
        Err(error @ RunnerError::MalformedStream { .. }) => {
            assert!(error.to_string().contains("over 1048576 bytes"), "{error}");
        }
        other => panic!("expected the event cap, got {other:?}"),
    }
    // A line that trickles in for 10 s under a large cap: bytes keep coming but no
    // event ends, so the idle timeout fires (it could not while a parser re-scanned
    // its buffer on every chunk without yielding); the stream's own end would be
    // a different error.
    let base = scripted_server(|_, _| endless_line(200, 50)).await;
    let mut trickled = agent(base, None);
    trickled.max_output_bytes = Some(100 * 1024 * 1024);
    trickled.idle_timeout_secs = Some(1);
    match ask(&LocalRunner::new(&trickled).unwrap()).await {
        Err(error @ RunnerError::Idle { .. }) => assert!(error.to_string().contains("silent for 1 s"), "{error}"),
        other => panic!("expected the idle timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn a_silent_stream_ends_after_the_idle_timeout_and_keeps_what_came() {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n".to_string();
    let first = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial answer\"}}]}\n\n".to_string();
    let base =
        scripted_server(move |_, _| vec![(0, head.clone()), (0, first.clone()), (10_000, "data: [DONE]\n\n".into())])
            .await;
    let mut config = agent(base, None);
    config.idle_timeout_secs = Some(1);
    let runner = LocalRunner::new(&config).unwrap();
    let (result, deltas) = step_with_deltas(&runner).await;
    // Ended by the idle timeout (an `Idle` error), not by the stream's own end ten
    // seconds later (which would be a reply).
    match result {
        Err(error @ RunnerError::Idle { .. }) => {
            assert_eq!(error.kind(), switchboard_core::CallErrorKind::Timeout);
            assert!(error.to_string().contains("silent for 1 s"), "{error}");
        }
        other => panic!("expected an idle timeout, got {other:?}"),
    }
    assert_eq!(deltas, vec!["partial answer"]);

    // Through the dispatcher, the partial text is the call's result and the caller
    // receives it beside the error; here the idle limit comes from `limits`.
    config.idle_timeout_secs = None;
    let dispatcher = switchboard_core::Dispatcher::new(switchboard_core::Config {
        limits: switchboard_core::Limits { idle_timeout_secs: Some(1), ..Default::default() },
        agents: vec![config.clone()],
        agent_tools: vec![switchboard_core::AgentToolEntry::new("a", "Answers.")],
        ..Default::default()
    });
    let request =
        switchboard_core::ToolCallRequest { agent: "a".into(), request: "hello".into(), ..Default::default() };
    let sink: switchboard_core::EventSink = Arc::new(|_| {});
    let outcome = dispatcher.run_tool_call(request, sink, switchboard_core::TurnControl::approving_all()).await;
    assert_eq!(outcome.status, switchboard_core::CallStatus::Error);
    assert_eq!(outcome.text, "partial answer");
    assert!(outcome.delivered.contains(r#""partial_result":"partial answer""#), "{}", outcome.delivered);
    assert!(outcome.delivered.contains(r#""kind":"timeout""#), "{}", outcome.delivered);
    assert!(outcome.delivered.contains("silent for 1 s"), "the limit's idle timeout ended it: {}", outcome.delivered);
}

#[tokio::test]
async fn busy_answers_are_retried_as_retry_after_says_and_then_given_up() {
    let base = scripted_server(|index, _| match index {
        0 => vec![(
            0,
            "HTTP/1.1 429 Too Many Requests\r\nretry-after: 1\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into(),
        )],
        _ => answer("200 OK", "text/event-stream", HELLO_STREAM),
    })
    .await;
    let started = std::time::Instant::now();
    let (reply, deltas) = step_with_deltas(&LocalRunner::new(&agent(base, None)).unwrap()).await;
    assert_eq!(reply.unwrap().text, "hi");
    assert!(started.elapsed() >= std::time::Duration::from_millis(900), "Retry-After was honoured");
    assert_eq!(deltas, vec!["… rate limited (HTTP 429), retrying in 1 s (1 of 3)", "hi"]);

    let base = scripted_server(|_, _| {
        vec![(
            0,
            "HTTP/1.1 503 Service Unavailable\r\nretry-after: 0\r\ncontent-length: 4\r\nconnection: close\r\n\r\nbusy"
                .into(),
        )]
    })
    .await;
    let (result, deltas) = step_with_deltas(&LocalRunner::new(&agent(base, None)).unwrap()).await;
    match result {
        Err(RunnerError::Http { status: 503, body, .. }) => assert_eq!(body, "busy"),
        other => panic!("expected the 503 after the retries, got {other:?}"),
    }
    assert_eq!(deltas.len(), 3, "three retries, each said: {deltas:?}");
}

#[tokio::test]
async fn a_server_that_echoes_the_key_never_gets_it_into_an_error() {
    std::env::set_var("SWITCHBOARD_TEST_ECHO_KEY", "sk-echo-secret-999");
    // Each answer quotes the request's Authorization header back.
    let echo = |status: &'static str, content_type: &'static str| {
        move |_: usize, request: &str| {
            let header =
                request.lines().find(|line| line.to_ascii_lowercase().starts_with("authorization")).unwrap_or("");
            let body = match content_type {
                "text/event-stream" => {
                    format!("data: {{\"error\":{{\"message\":\"bad request, you sent {header}\"}}}}\n\n")
                }
                _ => format!("{{\"error\":\"you sent {header} and key sk-echo-secret-999\"}}"),
            };
            answer(status, content_type, &body)
        }
    };
    for (status, content_type) in
        [("401 Unauthorized", "application/json"), ("200 OK", "text/event-stream"), ("200 OK", "text/html")]
    {
        let base = scripted_server(echo(status, content_type)).await;
        let runner = LocalRunner::new(&agent(base, Some("SWITCHBOARD_TEST_ECHO_KEY"))).unwrap();
        let error = ask(&runner).await.expect_err("the server refuses");
        let text = format!("{error} {error:?}");
        assert!(!text.contains("sk-echo-secret-999"), "{status} {content_type}: the key leaked: {text}");
        assert!(text.contains("[redacted]"), "{status} {content_type}: {text}");
    }
}

/// Cancelling an HTTP call closes its connection: the server, streaming a chunk
/// every few milliseconds for minutes, sees its next write fail soon after the
/// cancel, and reports how far it got.
#[tokio::test]
async fn cancelling_an_http_call_closes_the_connection_the_server_sees_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (closed_sender, closed) = tokio::sync::oneshot::channel::<usize>();
    const CHUNKS: usize = 20_000;
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 16 * 1024];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n";
        socket.write_all(head.as_bytes()).await.unwrap();
        for index in 0..CHUNKS {
            let chunk = format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"w{index} \"}}}}]}}\n\n");
            if socket.write_all(chunk.as_bytes()).await.is_err() || socket.flush().await.is_err() {
                let _ = closed_sender.send(index);
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    let dispatcher = switchboard_core::Dispatcher::new(switchboard_core::Config {
        agents: vec![agent(base, None)],
        ..Default::default()
    });
    let control = switchboard_core::TurnControl::approving_all();
    let cancelling = control.clone();
    let deltas = Arc::new(Mutex::new(0usize));
    let counted = deltas.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event: switchboard_core::CallEvent| {
        if matches!(event.kind, switchboard_core::EventKind::TextDelta { .. }) {
            let mut seen = counted.lock().unwrap();
            *seen += 1;
            if *seen == 3 {
                cancelling.cancel_turn();
            }
        }
    });
    let request =
        switchboard_core::TurnRequest { agent: Some("a".into()), message: "talk".into(), ..Default::default() };
    let outcome = dispatcher.run_turn(request, sink, control).await;
    assert_eq!(outcome.status, switchboard_core::CallStatus::Cancelled);
    // A guard against a hang, not a timing assertion.
    let written = tokio::time::timeout(std::time::Duration::from_secs(30), closed)
        .await
        .expect("the server never saw the connection close")
        .unwrap();
    assert!(written < CHUNKS, "the stream was cut short: {written} chunks written");
    assert!(*deltas.lock().unwrap() >= 3);
}

/// Liveness as order, not final text: the server sends the first chunk and holds
/// the rest until the test has seen that chunk arrive as a delta. A runner that
/// buffered the stream would see nothing until the end, and the server would give
/// up waiting (a 30 s guard) and say so.
#[tokio::test]
async fn a_delta_arrives_before_the_server_sends_the_last_chunk() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (seen_sender, seen) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 16 * 1024];
        let _ = socket.read(&mut request).await;
        let chunk =
            |text: &str| format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\n");
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        socket.write_all(format!("{head}{}", chunk("first ")).as_bytes()).await.unwrap();
        socket.flush().await.unwrap();
        let seen_in_time = tokio::time::timeout(std::time::Duration::from_secs(30), seen).await.is_ok();
        let rest = format!("{}data: [DONE]\n\n", chunk("last"));
        socket.write_all(rest.as_bytes()).await.unwrap();
        let _ = socket.shutdown().await;
        seen_in_time
    });
    let runner = LocalRunner::new(&agent(base, None)).unwrap();
    let request = ModelRequest { messages: vec![Message::user("hello")], ..ModelRequest::default() };
    let mut seen_sender = Some(seen_sender);
    let reply = runner
        .stream(&request, &mut |delta| {
            if matches!(delta, ModelDelta::Text(_)) {
                if let Some(sender) = seen_sender.take() {
                    let _ = sender.send(());
                }
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "first last");
    assert!(server.await.unwrap(), "the first delta was only seen after the server sent the last chunk");
}

/// A key kept in a keyring (a memory store here; the window tests use a real
/// Secret Service) goes as the bearer token of a runner `build` makes, is taken
/// out of what the server echoes back, and a missing entry sends nothing and says
/// which entry was looked for.
#[tokio::test]
async fn a_key_from_the_keyring_goes_as_the_bearer_token_and_never_comes_back_out() {
    use switchboard_core::keys::{KeyStore, MemoryKeys};
    use switchboard_core::runner::{build, Registry};
    let echo_key: &'static str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"your key is sk-kept-in-the-keyring-42\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let (base, received) = sse_server(echo_key).await;
    let keys = MemoryKeys::shared();
    let mut config = agent(base, None);
    config.api_key_keyring = Some("hosted".into());
    let registry = Registry::with_keys(keys.clone());
    let runner = build(&config, &registry).unwrap();
    let request = ModelRequest { messages: vec![Message::user("hello")], ..ModelRequest::default() };
    match runner.stream(&request, &mut |_| {}).await {
        Err(error @ RunnerError::Config(_)) => {
            let text = error.to_string();
            assert!(text.contains("\"hosted\"") && text.contains("switchboard agent key set a"), "{text}");
        }
        other => panic!("expected a config error for the empty entry, got {other:?}"),
    }
    assert!(received.lock().unwrap().is_empty(), "nothing is sent without the key");
    keys.set("hosted", "sk-kept-in-the-keyring-42").unwrap();
    let mut streamed = String::new();
    let reply = runner
        .stream(&request, &mut |delta| {
            if let ModelDelta::Text(text) = delta {
                streamed.push_str(&text)
            }
        })
        .await
        .unwrap();
    assert_eq!(reply.text, "your key is [redacted]");
    assert_eq!(streamed, "your key is [redacted]");
    let requests = received.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].to_ascii_lowercase().contains("authorization: bearer sk-kept-in-the-keyring-42"),
        "{}",
        requests[0]
    );
}
