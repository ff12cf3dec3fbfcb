//! Hot reload: watches the config file's folder (editors save by rename), debounces
//! bursts into one reload, and hands each outcome to a callback supplied by the
//! shell. An invalid file keeps the last good config in force.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::{new_debouncer, DebounceEventResult};

use super::edit::eviction_set;
use super::store::{load_bytes, ConfigError, Loaded, Version};
use super::Config;

/// How long the file must be quiet before it is read.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// The outcome of one change on disk.
// One value per reload, handed straight to a callback: the size gap costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Reload {
    /// A valid new version, with the agents whose runners must be evicted.
    Applied { loaded: Loaded, changed_agents: Vec<String> },
    /// The new file is invalid; the last good config stays in force.
    Rejected { error: ConfigError },
}

struct WatchState {
    last_good: Config,
    last_seen: Version,
}

/// Keeps the watcher alive; dropping it stops watching.
pub struct ConfigWatch {
    state: Arc<Mutex<WatchState>>,
    _debouncer: Mutex<Box<dyn std::any::Any + Send>>,
}

impl std::fmt::Debug for ConfigWatch {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ConfigWatch").finish_non_exhaustive()
    }
}

impl ConfigWatch {
    /// Tells the watcher about a version this process wrote itself, so the write is
    /// not reported back as an outside change.
    pub fn note_saved(&self, loaded: &Loaded) {
        let mut state = self.state.lock().unwrap();
        state.last_good = loaded.config.clone();
        state.last_seen = loaded.version.clone();
    }
}

/// Starts watching `path`, whose current content is `initial`.
pub fn spawn(
    path: &Path,
    initial: &Loaded,
    on_change: impl Fn(Reload) + Send + 'static,
) -> Result<ConfigWatch, ConfigError> {
    let path: PathBuf = path.to_path_buf();
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let state =
        Arc::new(Mutex::new(WatchState { last_good: initial.config.clone(), last_seen: initial.version.clone() }));
    let handler_state = state.clone();
    let handler_path = path.clone();
    let mut debouncer = new_debouncer(DEBOUNCE, None, move |result: DebounceEventResult| {
        let Ok(events) = result else { return };
        let touches_file = events.iter().any(|event| event.paths.iter().any(|changed| changed == &handler_path));
        if touches_file {
            if let Some(reload) = reload(&handler_path, &handler_state) {
                on_change(reload);
            }
        }
    })
    .map_err(|error| ConfigError::Io { path: path.clone(), source: std::io::Error::other(error) })?;
    debouncer
        .watch(&folder, RecursiveMode::NonRecursive)
        .map_err(|error| ConfigError::Io { path: folder.clone(), source: std::io::Error::other(error) })?;
    Ok(ConfigWatch { state, _debouncer: Mutex::new(Box::new(debouncer)) })
}

fn reload(path: &Path, state: &Mutex<WatchState>) -> Option<Reload> {
    // A missing file is a save in progress (or a delete): keep what we have.
    let bytes = std::fs::read(path).ok()?;
    let version = Version::of(&bytes);
    let mut state = state.lock().unwrap();
    if version == state.last_seen {
        return None;
    }
    state.last_seen = version;
    match load_bytes(path, &bytes) {
        Ok(loaded) => {
            let changed_agents = eviction_set(&state.last_good, &loaded.config);
            state.last_good = loaded.config.clone();
            Some(Reload::Applied { loaded, changed_agents })
        }
        Err(error) => Some(Reload::Rejected { error }),
    }
}
