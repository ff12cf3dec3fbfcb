//! The live config both shells serve from (the desktop app and `switchboard mcp`):
//! the file loaded at start (the default created on a first start; a broken file
//! kept untouched, with nothing in force until it is fixed), the dispatcher that
//! runs turns on the version in force, the watcher that reloads it when the file
//! changes on disk, and the edits this process makes, written and put in force
//! the same way. Each new version evicts the runners of the agents it changed and
//! is told to the shell's listener (to tell a window, or MCP clients that the
//! tool list changed); a refused version is told too, and the last good one stays.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::config::edit::{self, Edit, EditError};
use crate::config::store::{self, ConfigError, Loaded, Version};
use crate::config::watch::{self, ConfigWatch, Reload};
use crate::config::{Config, Problem};
use crate::dispatch::Dispatcher;

/// What changed in the config in force, as a listener is told it.
#[derive(Debug, Clone)]
pub enum ConfigChange {
    /// A new version is in force: read from disk or written by an edit here.
    Applied { version: Version, changed_agents: Vec<String> },
    /// The file on disk was refused; the last good config stays in force.
    Rejected { error: Arc<ConfigError> },
}

/// The config in force and what the file on disk says, at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub path: PathBuf,
    /// The version in force; none when the file was broken from the start.
    pub version: Option<Version>,
    pub config: Arc<Config>,
    pub warnings: Vec<Problem>,
    /// Why the file on disk is not in force, if it is not.
    pub error: Option<Arc<ConfigError>>,
    /// The config was created at this start (the demo agents) and nothing has
    /// been edited since.
    pub first_start: bool,
}

type Listener = Arc<dyn Fn(&ConfigChange) + Send + Sync>;

/// The live config: cheap to clone (shared).
#[derive(Clone)]
pub struct LiveConfig {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    dispatcher: Arc<Dispatcher>,
    state: Mutex<State>,
    watch: Mutex<Option<ConfigWatch>>,
    listener: Mutex<Option<Listener>>,
}

struct State {
    version: Option<Version>,
    warnings: Vec<Problem>,
    error: Option<Arc<ConfigError>>,
    first_start: bool,
    /// The version of the file as read at the start: what the watcher compares with.
    read: Version,
}

impl std::fmt::Debug for LiveConfig {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LiveConfig").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

impl LiveConfig {
    /// The desktop's start: the config at `path`, created with the demo agents
    /// when it is the default location and absent. A broken file is kept as it
    /// is: nothing is in force (an empty config) and `Snapshot::error` says why,
    /// until the watcher picks the fix up. A path the user named that does not
    /// exist is such an error too; nothing is created there.
    pub fn open(path: &Path) -> LiveConfig {
        match store::load_on_first_start(path) {
            Ok((loaded, created)) => LiveConfig::with(path, &loaded, true, None, created),
            Err(error) => {
                let bytes = std::fs::read(path).unwrap_or_default();
                let empty = Loaded { config: Config::default(), version: Version::of(&bytes), warnings: vec![] };
                LiveConfig::with(path, &empty, false, Some(Arc::new(error)), false)
            }
        }
    }

    /// A config a shell loaded itself (`switchboard mcp` refuses to start on a
    /// broken one), put in force as it is.
    pub fn from_loaded(path: &Path, loaded: &Loaded) -> LiveConfig {
        LiveConfig::with(path, loaded, true, None, false)
    }

    fn with(
        path: &Path,
        loaded: &Loaded,
        in_force: bool,
        error: Option<Arc<ConfigError>>,
        first_start: bool,
    ) -> LiveConfig {
        let state = State {
            version: in_force.then(|| loaded.version.clone()),
            warnings: loaded.warnings.clone(),
            error,
            first_start,
            read: loaded.version.clone(),
        };
        let inner = Inner {
            path: path.to_path_buf(),
            dispatcher: Arc::new(Dispatcher::new(loaded.config.clone())),
            state: Mutex::new(state),
            watch: Mutex::new(None),
            listener: Mutex::new(None),
        };
        LiveConfig { inner: Arc::new(inner) }
    }

    /// The dispatcher, on the version in force.
    pub fn dispatcher(&self) -> &Arc<Dispatcher> {
        &self.inner.dispatcher
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The config in force and the file's state now.
    pub fn snapshot(&self) -> Snapshot {
        let state = self.inner.state.lock().unwrap();
        Snapshot {
            path: self.inner.path.clone(),
            version: state.version.clone(),
            config: self.inner.dispatcher.config(),
            warnings: state.warnings.clone(),
            error: state.error.clone(),
            first_start: state.first_start,
        }
    }

    /// Starts watching the file; `listener` is told of every change from now on,
    /// from disk or from `apply`. An error means hot reload is off (edits through
    /// `apply` still work and are still told).
    pub fn watch(&self, listener: impl Fn(&ConfigChange) + Send + Sync + 'static) -> Result<(), ConfigError> {
        let listener: Listener = Arc::new(listener);
        *self.inner.listener.lock().unwrap() = Some(listener);
        let read = self.inner.state.lock().unwrap().read.clone();
        let seen = Loaded { config: (*self.inner.dispatcher.config()).clone(), version: read, warnings: vec![] };
        let live = Arc::downgrade(&self.inner);
        let watching = watch::spawn(&self.inner.path, &seen, move |reload| {
            if let Some(inner) = live.upgrade() {
                LiveConfig { inner }.reloaded(reload);
            }
        })?;
        *self.inner.watch.lock().unwrap() = Some(watching);
        Ok(())
    }

    /// Applies one edit made against the file's `expected` version: written
    /// atomically, put in force, noted as this process's own write (the watcher
    /// does not report it back) and told to the listener.
    pub fn apply(&self, expected: &Version, edit: &Edit) -> Result<Snapshot, EditError> {
        let applied = edit::apply(&self.inner.path, expected, edit)?;
        if let Some(watching) = self.inner.watch.lock().unwrap().as_ref() {
            watching.note_saved(&applied.loaded);
        }
        self.adopt(&applied.loaded, applied.evict);
        self.inner.state.lock().unwrap().first_start = false;
        Ok(self.snapshot())
    }

    fn reloaded(&self, reload: Reload) {
        match reload {
            Reload::Applied { loaded, changed_agents } => self.adopt(&loaded, changed_agents),
            Reload::Rejected { error } => {
                let error = Arc::new(error);
                self.inner.state.lock().unwrap().error = Some(error.clone());
                self.tell(&ConfigChange::Rejected { error });
            }
        }
    }

    /// A new valid version in force: the dispatcher's config (the changed agents'
    /// runners evicted), the state a snapshot reads, and the listener told.
    fn adopt(&self, loaded: &Loaded, changed_agents: Vec<String>) {
        self.inner.dispatcher.replace_config(loaded.config.clone(), &changed_agents);
        {
            let mut state = self.inner.state.lock().unwrap();
            state.version = Some(loaded.version.clone());
            state.warnings = loaded.warnings.clone();
            state.error = None;
        }
        self.tell(&ConfigChange::Applied { version: loaded.version.clone(), changed_agents });
    }

    fn tell(&self, change: &ConfigChange) {
        let listener = self.inner.listener.lock().unwrap().clone();
        if let Some(listener) = listener {
            listener(change);
        }
    }
}
