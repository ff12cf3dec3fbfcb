//! The agent CLIs of `tests/peers` as their users run them: the program, and a
//! `World` (a working folder and a HOME with the settings files its users keep,
//! offline) in which an agent config points it at a peer model server.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use switchboard_core::{AgentConfig, Provider};

use super::peer::{repository_root, Peer};

/// The key variable every agent here names in `api_key_env`.
const KEY_VARIABLE: &str = "SWITCHBOARD_TEST_AGENT_CLI_KEY";

/// A program of `tests/peers` that `make setup` installs.
pub(crate) fn peer_program(name: &str) -> PathBuf {
    let path = repository_root().join("tests/peers/node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing; run `make setup` to install the agent CLIs", path.display());
    path
}

/// One program's world: its working folder and its HOME, both removed after.
pub(crate) struct World {
    pub(crate) work: tempfile::TempDir,
    pub(crate) home: tempfile::TempDir,
}

impl World {
    /// A HOME with the settings files `provider`'s users keep, offline.
    pub(crate) fn new(provider: Provider) -> World {
        // Codex refuses to make its helpers under the system's temporary folder.
        let home = match provider {
            Provider::Codex => tempfile::tempdir_in(repository_root().join("target")).unwrap(),
            _ => tempfile::tempdir().unwrap(),
        };
        let write = |relative: &str, contents: String| {
            let path = home.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, contents).unwrap();
        };
        match provider {
            Provider::Codex => write(
                ".codex/config.toml",
                std::fs::read_to_string(repository_root().join("tests/peers/codex-offline.toml")).unwrap(),
            ),
            Provider::GeminiCli => write(
                ".gemini/settings.json",
                json!({
                    "security": { "auth": { "selectedType": "gemini-api-key" } },
                    "telemetry": { "enabled": false },
                    "privacy": { "usageStatisticsEnabled": false },
                    "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false }
                })
                .to_string(),
            ),
            Provider::QwenCode => write(
                ".qwen/settings.json",
                json!({
                    "security": { "auth": { "selectedType": "openai" } },
                    "telemetry": { "enabled": false },
                    "privacy": { "usageStatisticsEnabled": false },
                    "general": { "disableAutoUpdate": true },
                    "memory": { "enableManagedAutoMemory": false }
                })
                .to_string(),
            ),
            _ => {}
        }
        World { work: tempfile::tempdir().unwrap(), home }
    }

    /// The agent as a user configures it: the provider, its model and server, the
    /// key by variable name; HOME (and Codex's CODEX_HOME) as a user has them.
    pub(crate) fn agent(&self, name: &str, provider: Provider, model: &str, peer: &Peer) -> AgentConfig {
        std::env::set_var(KEY_VARIABLE, "sk-test-agent-cli");
        let mut agent = AgentConfig::new(name, provider);
        agent.command = Some(peer_program(program_of(provider)).display().to_string());
        agent.model = Some(model.into());
        agent.url = Some(match provider {
            Provider::ClaudeCode | Provider::GeminiCli => peer.base.clone(),
            _ => format!("{}/v1", peer.base),
        });
        agent.api_key_env = Some(KEY_VARIABLE.into());
        agent.cwd = Some(self.work.path().display().to_string());
        agent.env.insert("HOME".into(), self.home.path().display().to_string());
        match provider {
            Provider::Codex => {
                agent.env.insert("CODEX_HOME".into(), self.home.path().join(".codex").display().to_string());
            }
            Provider::ClaudeCode => {
                for variable in ["DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING"] {
                    agent.env.insert(variable.into(), "1".into());
                }
            }
            _ => {}
        }
        agent.timeout_secs = Some(120);
        agent
    }

    /// Waits until no process runs in the working folder (the agent and anything
    /// it started); false if one is still there after 20 s.
    pub(crate) fn nothing_left(&self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if processes_in(self.work.path()).is_empty() {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

pub(crate) fn program_of(provider: Provider) -> &'static str {
    match provider {
        Provider::ClaudeCode => "claude",
        Provider::Codex => "codex",
        Provider::GeminiCli => "gemini",
        Provider::QwenCode => "qwen",
        other => panic!("no agent CLI for {other:?}"),
    }
}

/// The pids whose working directory is `folder`.
fn processes_in(folder: &Path) -> Vec<u32> {
    let folder = folder.canonicalize().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == folder))
        .collect()
}
