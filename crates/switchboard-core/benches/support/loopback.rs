//! A minimal OpenAI-compatible server on loopback that answers at once with canned
//! SSE bodies chosen by a function of the request body, and records what it was
//! sent. Shared by the benchmarks and the tests (`#[path]`), so both measure and
//! check against the same bytes.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Chooses the SSE body for a request body.
pub type Responder = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// Serves every connection (keep-alive included) until the process ends; returns
/// the base URL and the raw requests received (head and body).
pub async fn serve(responder: Responder) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let received = Arc::new(Mutex::new(Vec::new()));
    let log = received.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(connection(socket, responder.clone(), log.clone()));
        }
    });
    (base, received)
}

async fn connection(mut socket: TcpStream, responder: Responder, log: Arc<Mutex<Vec<String>>>) {
    let mut buffer: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        // Read one whole request (head, then Content-Length bytes of body).
        let request = loop {
            if let Some(head_end) = find(&buffer, b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|line| {
                        line.strip_prefix("content-length:").map(|value| value.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if buffer.len() >= head_end + 4 + length {
                    let request: Vec<u8> = buffer.drain(..head_end + 4 + length).collect();
                    break String::from_utf8_lossy(&request).into_owned();
                }
            }
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        };
        let body = request.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or("");
        let sse = responder(body);
        log.lock().unwrap().push(request);
        let response =
            format!("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\n\r\n{sse}", sse.len());
        if socket.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// An SSE body that streams `text` in one chunk, with usage.
pub fn text_stream(text: &str) -> String {
    let content = serde_json::to_string(text).expect("json string");
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{content}}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n\n\
         data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}}}\n\n\
         data: [DONE]\n\n"
    )
}

/// An SSE body that asks for one tool call.
pub fn tool_call_stream(name: &str, arguments: &str) -> String {
    let arguments = serde_json::to_string(arguments).expect("json string");
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{{\"name\":\"{name}\",\"arguments\":{arguments}}}}}]}}}}]}}\n\n\
         data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n\
         data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":5,\"total_tokens\":15}}}}\n\n\
         data: [DONE]\n\n"
    )
}
