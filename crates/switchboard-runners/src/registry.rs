//! What must not outlive a call, in one registry the runner cache owns (no
//! process-wide state): the process group of each agent a call started, ended
//! when its call ends (SIGTERM, SIGKILL after the grace period); the groups still
//! alive, which `shutdown` ends as a shell exits; the `CancelTask` requests and
//! `notifications/cancelled` of remote calls dropped before their answer, which
//! `shutdown` lets go out; and the reaper, which ends the listed groups if the
//! program is killed before it can. `ending_signal` is the other half of a shell's
//! exit: the signals both shells end on. The registry also holds the key store
//! the cache's runners read `api_key_keyring` keys from (the system keyring
//! unless a shell or a test gives another): it is what every runner is built with.

mod reaper;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::keys::{Keys, SystemKeyring};

/// How long an agent has to exit after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// The groups and remote cancels of one runner cache.
#[derive(Default)]
pub struct Registry {
    state: Mutex<State>,
    reaper: reaper::Reaper,
    keys: KeyStoreSlot,
}

/// The key store of a registry: the system keyring unless one is given.
struct KeyStoreSlot(Keys);

impl Default for KeyStoreSlot {
    fn default() -> Self {
        KeyStoreSlot(SystemKeyring::shared())
    }
}

#[derive(Default)]
struct State {
    /// Groups whose `ProcessGroup` is not dropped yet: a call's agent, or an MCP
    /// stdio server a cached runner keeps.
    live: Vec<Pid>,
    /// Groups sent SIGTERM whose grace period has not run out, with its end.
    pending: Vec<(Pid, Instant)>,
    /// A2A `CancelTask` requests on their way, each from a thread of its own.
    threads: Vec<std::thread::JoinHandle<()>>,
    /// MCP `notifications/cancelled` on their way, sent by the runtime's workers.
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Registry").field("live", &self.live_groups()).finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry of its own (a runner cache has one; so does a connection test).
    pub fn new() -> Arc<Registry> {
        Arc::new(Registry::default())
    }

    /// A registry whose runners read their keyring keys from `keys`.
    pub fn with_keys(keys: Keys) -> Arc<Registry> {
        Arc::new(Registry { keys: KeyStoreSlot(keys), ..Registry::default() })
    }

    /// Where this registry's runners read `api_key_keyring` keys.
    pub fn keys(&self) -> &Keys {
        &self.keys.0
    }

    /// The process groups alive now, by leader pid.
    pub fn live_groups(&self) -> Vec<i32> {
        self.state.lock().unwrap().live.iter().map(|group| group.as_raw()).collect()
    }

    /// Keeps a remote cancel request going out from a thread until `shutdown`.
    pub(crate) fn cancel_sent_by_thread(&self, sender: std::thread::JoinHandle<()>) {
        self.state.lock().unwrap().threads.push(sender);
    }

    /// Keeps a remote cancel notice sent by a runtime task until `shutdown`.
    pub(crate) fn cancel_sent_by_task(&self, sending: tokio::task::JoinHandle<()>) {
        let mut state = self.state.lock().unwrap();
        state.tasks.retain(|earlier| !earlier.is_finished());
        state.tasks.push(sending);
    }

    /// What a shell calls as it exits: every group still alive (an MCP stdio
    /// server the cache kept, since the cache itself is not dropped when a program
    /// exits) is ended like a dropped one, then `finish_pending` waits them out.
    /// Blocking: call it off the runtime's workers.
    pub fn shutdown(self: &Arc<Self>) {
        let live: Vec<Pid> = self.state.lock().unwrap().live.drain(..).collect();
        for group in live {
            self.terminate(group);
        }
        self.finish_pending();
    }

    /// Lets the remote cancels go out (at most 5 s each) and waits out the grace
    /// periods still running, killing what is left of those groups, so an agent
    /// that ignores SIGTERM, or a remote task, does not outlive the program that
    /// started it. Blocking: call it off the runtime's workers.
    pub fn finish_pending(&self) {
        let (threads, tasks) = {
            let mut state = self.state.lock().unwrap();
            (std::mem::take(&mut state.threads), std::mem::take(&mut state.tasks))
        };
        for sender in threads {
            let _ = sender.join();
        }
        for sending in tasks {
            let _ = futures::executor::block_on(sending);
        }
        loop {
            let next = self.state.lock().unwrap().pending.first().copied();
            let Some((group, deadline)) = next else { return };
            // A group whose processes all exited needs no wait (signal 0 probes it).
            if killpg(group, None).is_ok() {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            }
            self.finish(group);
            self.state.lock().unwrap().pending.retain(|(pending, _)| *pending != group);
        }
    }

    /// SIGTERM to `group` now, SIGKILL once the grace period is over.
    fn terminate(self: &Arc<Self>, group: Pid) {
        if killpg(group, Signal::SIGTERM).is_err() {
            self.reaper.tell(group, false);
            return; // nothing of the group is left
        }
        self.state.lock().unwrap().pending.push((group, Instant::now() + GRACE));
        let registry = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(GRACE);
            registry.finish(group);
        });
    }

    /// SIGKILL to a pending group, once; forgotten afterwards.
    fn finish(&self, group: Pid) {
        let mut state = self.state.lock().unwrap();
        if let Some(position) = state.pending.iter().position(|(pending, _)| *pending == group) {
            state.pending.remove(position);
            let _ = killpg(group, Signal::SIGKILL);
            self.reaper.tell(group, false);
        }
    }
}

/// Ends a call's process group when dropped (the call ended, one way or another):
/// SIGTERM now; SIGKILL when the grace period is over, from a watcher thread, or
/// from `Registry::finish_pending` if the program is about to exit first.
pub(crate) struct ProcessGroup {
    group: Option<Pid>,
    registry: Arc<Registry>,
}

impl ProcessGroup {
    /// The group `child` leads (it was spawned with `process_group(0)`), listed in
    /// `registry` and told to its reaper.
    pub(crate) fn of(child: &tokio::process::Child, registry: &Arc<Registry>) -> ProcessGroup {
        let group = child.id().map(|id| Pid::from_raw(id as i32));
        if let Some(group) = group {
            registry.state.lock().unwrap().live.push(group);
            registry.reaper.tell(group, true);
        }
        ProcessGroup { group, registry: registry.clone() }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        let Some(group) = self.group.take() else { return };
        self.registry.state.lock().unwrap().live.retain(|live| *live != group);
        self.registry.terminate(group);
    }
}

/// Waits for SIGINT, SIGTERM or SIGHUP (Ctrl-C, `kill`, a closed terminal) and
/// returns its number; `None` when the handlers cannot be installed. The CLI and
/// the app both end on these, then call `Registry::shutdown`.
pub async fn ending_signal() -> Option<i32> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).ok()?;
    let mut terminate = signal(SignalKind::terminate()).ok()?;
    let mut hangup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        _ = interrupt.recv() => Some(2),
        _ = terminate.recv() => Some(15),
        _ = hangup.recv() => Some(1),
    }
}
