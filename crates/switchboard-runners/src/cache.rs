//! The runner cache: runners built lazily on first use, keyed by agent name,
//! evicted by config change reports. A call that already holds a runner keeps it
//! (an `Arc`) until it ends, so eviction never disturbs running work. The cache
//! owns the registry of what must not outlive a call (its runners' process
//! groups and remote cancels); a shell calls `shutdown` as it exits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::build;
use super::registry::Registry;
use crate::config::AgentConfig;
use crate::contract::{Runner, RunnerError};

#[derive(Default)]
pub struct RunnerCache {
    runners: Mutex<HashMap<String, Arc<dyn Runner>>>,
    registry: Arc<Registry>,
}

impl std::fmt::Debug for RunnerCache {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("RunnerCache").field("agents", &self.cached_agents()).finish()
    }
}

impl RunnerCache {
    /// A cache whose runners read their keyring keys from `keys` (the default
    /// cache reads the system keyring).
    pub fn with_keys(keys: crate::keys::Keys) -> RunnerCache {
        RunnerCache { runners: Mutex::default(), registry: Registry::with_keys(keys) }
    }

    /// The cached runner for `agent`, built now if there is none.
    pub fn get_or_build(&self, agent: &AgentConfig) -> Result<Arc<dyn Runner>, RunnerError> {
        let mut runners = self.runners.lock().unwrap();
        if let Some(runner) = runners.get(&agent.name) {
            return Ok(runner.clone());
        }
        let runner = build(agent, &self.registry)?;
        runners.insert(agent.name.clone(), runner.clone());
        Ok(runner)
    }

    /// Puts a runner in place for `name` (tests and embedders supply their own).
    pub fn insert(&self, name: impl Into<String>, runner: Arc<dyn Runner>) {
        self.runners.lock().unwrap().insert(name.into(), runner);
    }

    /// Drops the cached runners of `names`.
    pub fn evict<S: AsRef<str>>(&self, names: &[S]) {
        let mut runners = self.runners.lock().unwrap();
        for name in names {
            runners.remove(name.as_ref());
        }
    }

    /// The registry of this cache's process groups and remote cancels.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// What a shell calls as it exits (off the runtime's workers): ends every
    /// process group of this cache's runners and lets their remote cancels go out.
    pub fn shutdown(&self) {
        self.registry.shutdown();
    }

    /// The agent names that have a cached runner, sorted.
    pub fn cached_agents(&self) -> Vec<String> {
        let mut names: Vec<String> = self.runners.lock().unwrap().keys().cloned().collect();
        names.sort();
        names
    }
}
