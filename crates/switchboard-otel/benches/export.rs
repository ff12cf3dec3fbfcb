//! Trace export on the relay path: the same turn (a child streaming text deltas
//! to the root's stream) with export off and with export on, spans sent over
//! OTLP/HTTP to a loopback collector that takes every batch. Prints both rates and
//! their ratio (measured in the same run); asserts nothing about time.

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use switchboard_core::config::{AgentConfig, AgentToolEntry, Config, Provider};
use switchboard_core::contract::{DeltaSink, ModelDelta, ModelReply, ModelRequest, Runner, RunnerError, ToolCall};
use switchboard_core::event::Usage;
use switchboard_core::{Dispatcher, TurnControl, TurnRequest};
use switchboard_otel::{ExportSettings, Telemetry};

const DELTAS: usize = 200_000;
const ROUNDS: usize = 7;

/// The parent calls `agent_child` once; the child streams `deltas` deltas.
struct Streamer {
    deltas: usize,
}

#[async_trait]
impl Runner for Streamer {
    async fn stream(&self, request: &ModelRequest, on_delta: DeltaSink<'_>) -> Result<ModelReply, RunnerError> {
        let called =
            request.messages.iter().any(|message| matches!(message, switchboard_core::contract::Message::Tool { .. }));
        if self.deltas == 0 && !called {
            let call = ToolCall::new("call_0", "agent_child", "{\"request\":\"go\"}");
            return Ok(ModelReply {
                text: String::new(),
                tool_calls: vec![call],
                usage: Some(Usage::new(1, 1)),
                cost: None,
            });
        }
        for _ in 0..self.deltas {
            on_delta(ModelDelta::Text("word ".into()));
        }
        Ok(ModelReply {
            text: "done".into(),
            tool_calls: vec![],
            usage: Some(Usage::new(1, self.deltas as u64)),
            cost: None,
        })
    }
}

/// A collector on loopback that answers every request 200 (what it got is counted).
fn collector() -> (String, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let received = Arc::new(AtomicU64::new(0));
    let counted = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buffer = vec![0u8; 1 << 16];
            let mut request = Vec::new();
            while let Ok(read) = stream.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                request.extend_from_slice(&buffer[..read]);
                let text = String::from_utf8_lossy(&request);
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|line| {
                            line.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                        })
                        .and_then(|value| value.parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= head_end + 4 + length {
                        counted.fetch_add(1, Ordering::Relaxed);
                        let _ = stream.write_all(
                            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n",
                        );
                        request.clear();
                    }
                }
            }
        }
    });
    (format!("http://{address}/v1/traces"), received)
}

fn config() -> Config {
    let mut config = Config {
        agents: vec![AgentConfig::new("parent", Provider::Demo), AgentConfig::new("child", Provider::Demo)],
        agent_tools: vec![AgentToolEntry::new("child", "Streams.")],
        ..Config::default()
    };
    config.agent_tools[0].approval = Some(switchboard_core::config::Approval::Auto);
    config
}

async fn one_turn(telemetry: Option<&Telemetry>) -> (Duration, u64) {
    let dispatcher = Dispatcher::new(config());
    dispatcher.runners().insert("parent", Arc::new(Streamer { deltas: 0 }));
    dispatcher.runners().insert("child", Arc::new(Streamer { deltas: DELTAS }));
    let recorder = telemetry.map(|telemetry| telemetry.turn(&dispatcher.config(), Some("bench".into())));
    let seen = Arc::new(AtomicU64::new(0));
    let counter = seen.clone();
    let sink: switchboard_core::EventSink = Arc::new(move |event| {
        if let Some(recorder) = &recorder {
            recorder.record(&event);
        }
        black_box(&event);
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let start = Instant::now();
    dispatcher
        .run_turn(TurnRequest { message: "go".into(), ..Default::default() }, sink, TurnControl::approving_all())
        .await;
    (start.elapsed(), seen.load(Ordering::Relaxed))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() {
    let (endpoint, received) = collector();
    let settings =
        ExportSettings { endpoint, headers: Default::default(), service_name: "bench".into(), include_content: false };
    let telemetry = Telemetry::start(settings).unwrap();
    one_turn(None).await; // warm-up
    let (mut off, mut on) = (Vec::new(), Vec::new());
    let mut events = 0;
    // Interleaved, so both see the same machine.
    for _ in 0..ROUNDS {
        let (elapsed, count) = one_turn(None).await;
        off.push(elapsed);
        events = count;
        on.push(one_turn(Some(&telemetry)).await.0);
    }
    telemetry.flush().unwrap();
    let health = telemetry.health();
    assert!(health.last_error.is_none() && received.load(Ordering::Relaxed) > 0, "the collector got the spans");
    let (off, on) = (median(off), median(on));
    let rate = |elapsed: Duration| events as f64 / elapsed.as_secs_f64();
    println!("relay of {DELTAS} child text deltas ({events} events a turn), median of {ROUNDS} turns:");
    println!("    export off                     {:>12.0} events/s", rate(off));
    println!(
        "    export on (OTLP/HTTP, loopback) {:>11.0} events/s  ({:.3}x the time of export off)",
        rate(on),
        on.as_secs_f64() / off.as_secs_f64()
    );
    println!("    spans sent: {} in {} batches", health.spans_sent, health.batches_sent);
}
