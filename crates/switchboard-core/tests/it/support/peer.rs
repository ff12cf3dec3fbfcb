//! Independent servers a suite starts on loopback: a `Peer` process (killed on
//! drop) once it answers `/health`, aimock with a suite's fixtures, and the
//! HTTP agent config pointed at one.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use switchboard_core::{AgentConfig, Provider};

pub(crate) fn repository_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A peer server process, killed on drop.
pub(crate) struct Peer {
    child: Child,
    pub(crate) base: String,
    _folder: tempfile::TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    pub(crate) fn start(mut command: Command, port: u16, folder: tempfile::TempDir) -> Peer {
        let program = command.get_program().to_string_lossy().into_owned();
        let child = command.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap_or_else(|error| {
            panic!("cannot start {program} ({error}); run `make setup` to install the test peers")
        });
        let peer = Peer { child, base: format!("http://127.0.0.1:{port}"), _folder: folder };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if answers_health(&peer.base) {
                return peer;
            }
            assert!(Instant::now() < deadline, "{program} did not answer /health within 20 s");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Value {
        reqwest::get(format!("{}{path}", self.base)).await.unwrap().json().await.unwrap()
    }

    pub(crate) async fn post(&self, path: &str, body: Value) {
        let response = reqwest::Client::new().post(format!("{}{path}", self.base)).json(&body).send().await.unwrap();
        assert!(response.status().is_success(), "{path}: {}", response.status());
    }
}

/// Whether `GET /health` answers 200; a raw socket, so startup needs no runtime.
fn answers_health(base: &str) -> bool {
    use std::io::{Read, Write};
    let host = base.trim_start_matches("http://");
    let Ok(mut stream) = std::net::TcpStream::connect(host) else { return false };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(stream, "GET /health HTTP/1.0\r\nHost: {host}\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200")
}

pub(crate) fn aimock(fixtures: Value) -> Peer {
    let folder = tempfile::tempdir().unwrap();
    let port = free_port();
    let fixtures_path = folder.path().join("fixtures.json");
    std::fs::write(&fixtures_path, fixtures.to_string()).unwrap();
    let config_path = folder.path().join("aimock.json");
    let config = json!({ "port": port, "host": "127.0.0.1", "llm": { "fixtures": fixtures_path, "chunkSize": 4, "latency": 0 } });
    std::fs::write(&config_path, config.to_string()).unwrap();
    let mut command = Command::new(repository_root().join("tests/peers/node_modules/.bin/aimock"));
    command.arg("--config").arg(&config_path);
    Peer::start(command, port, folder)
}

pub(crate) fn http_agent(name: &str, url: String, model: &str) -> AgentConfig {
    let mut agent = AgentConfig::new(name, Provider::OpenAiCompatible);
    agent.url = Some(url);
    agent.model = Some(model.into());
    agent.timeout_secs = Some(10);
    agent
}
