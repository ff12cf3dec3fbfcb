//! Reading and writing the config file: the only file IO of the config. Parsing
//! reports file, line and column (syntax) or the JSON path (types); saving is
//! atomic (temp file in the same folder, fsync, rename), keeps the file's mode and
//! writes through a symlink to its target, and refuses to overwrite a file that
//! changed on disk since it was read. The check and the write happen under an
//! exclusive lock, so of two processes saving at once, one is refused.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};
use specta::Type;

use super::validate::{has_errors, validate, Problem};
use super::Config;

/// The environment variable that names the config file when `--config` is absent.
pub const CONFIG_ENV: &str = "SWITCHBOARD_CONFIG";

/// A digest of the bytes a config was read from; an edit carries the version it
/// was made against so a stale edit can be refused.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Type)]
pub struct Version(pub String);

impl Version {
    pub fn of(bytes: &[u8]) -> Version {
        let digest = Sha256::digest(bytes);
        Version(digest.iter().take(12).map(|byte| format!("{byte:02x}")).collect())
    }
}

/// A config as read from disk, with its version and warnings.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub version: Version,
    pub warnings: Vec<Problem>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{path}: {json_path}: {message}")]
    Type { path: PathBuf, json_path: String, line: usize, column: usize, message: String },
    #[error("{path}: {} problem(s):\n{}", problems.len(), problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid { path: PathBuf, problems: Vec<Problem> },
    #[error("{path} changed on disk since it was read; reload it and make the change again")]
    Conflict { path: PathBuf },
}

/// Where the config lives: `--config`, else `$SWITCHBOARD_CONFIG`, else the
/// platform config dir (`~/.config/switchboard/config.json` on Linux).
pub fn resolve_path(explicit: Option<&Path>) -> PathBuf {
    if let Some(path) = explicit {
        return path.to_path_buf();
    }
    if let Some(path) = std::env::var_os(CONFIG_ENV).filter(|value| !value.is_empty()) {
        return PathBuf::from(path);
    }
    default_path()
}

/// The platform's config location (`~/.config/switchboard/config.json` on Linux).
pub fn default_path() -> PathBuf {
    dirs::config_dir().unwrap_or_else(|| PathBuf::from(".")).join("switchboard").join("config.json")
}

/// Parses config text; `path` is only used in error messages.
pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed: Result<Config, _> = serde_path_to_error::deserialize(&mut deserializer);
    let config = parsed.map_err(|error| {
        let json_path = error.path().to_string();
        let inner = error.into_inner();
        let (line, column) = (inner.line(), inner.column());
        if inner.is_syntax() || inner.is_eof() {
            ConfigError::Syntax { path: path.to_path_buf(), line, column, message: strip_position(&inner.to_string()) }
        } else {
            let mut message = strip_position(&inner.to_string());
            let others: Vec<String> = other_type_errors(text)
                .into_iter()
                .filter(|(other, _)| *other != json_path)
                .map(|(p, m)| format!("{p}: {m}"))
                .collect();
            if !others.is_empty() {
                message = format!("{message}; and {} more: {}", others.len(), others.join("; "));
            }
            ConfigError::Type { path: path.to_path_buf(), json_path, line, column, message }
        }
    })?;
    deserializer.end().map_err(|inner| ConfigError::Syntax {
        path: path.to_path_buf(),
        line: inner.line(),
        column: inner.column(),
        message: strip_position(&inner.to_string()),
    })?;
    Ok(config)
}

/// Every entry's type error, not only the first (serde stops at one): each agent
/// and each global tool entry read on its own, then the rest of the file. Each is
/// its JSON path and message.
fn other_type_errors(text: &str) -> Vec<(String, String)> {
    use serde_json::Value;
    let Ok(mut value) = serde_json::from_str::<Value>(text) else { return Vec::new() };
    let mut found = Vec::new();
    let mut each = |key: &str, value: &mut Value, read: &dyn Fn(Value) -> Option<(String, String)>| {
        if let Some(items) = value.get_mut(key).and_then(Value::as_array_mut) {
            for (index, item) in std::mem::take(items).into_iter().enumerate() {
                if let Some((inner, message)) = read(item) {
                    let inner = if inner == "." { String::new() } else { format!(".{inner}") };
                    found.push((format!("{key}[{index}]{inner}"), message));
                }
            }
        }
    };
    fn read_as<T: serde::de::DeserializeOwned>(item: Value) -> Option<(String, String)> {
        serde_path_to_error::deserialize::<_, T>(item)
            .err()
            .map(|error| (error.path().to_string(), strip_position(&error.into_inner().to_string())))
    }
    each("agents", &mut value, &read_as::<super::AgentConfig>);
    each("agent_tools", &mut value, &read_as::<super::AgentToolEntry>);
    if let Some((inner, message)) = read_as::<Config>(value) {
        found.push((inner, message));
    }
    found
}

fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_string(),
        None => message.to_string(),
    }
}

/// Reads, parses and validates the file; errors block, warnings come back.
pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
    let bytes = fs::read(path).map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
    load_bytes(path, &bytes)
}

/// As `load`, from bytes already read.
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<Loaded, ConfigError> {
    let text = String::from_utf8_lossy(bytes);
    let config = parse(path, &text)?;
    let problems = validate(&config);
    if has_errors(&problems) {
        return Err(ConfigError::Invalid { path: path.to_path_buf(), problems });
    }
    Ok(Loaded { config, version: Version::of(bytes), warnings: problems })
}

/// Loads the file, first writing the demo default when there is none. Only for
/// the default location (first start); a path the user names must exist (`load`).
pub fn load_or_create(path: &Path) -> Result<Loaded, ConfigError> {
    if !path.exists() {
        write_atomic(path, &render(&Config::demo_default()))?;
    }
    load(path)
}

/// Loads `path`; only when it is the default location (`default_path`) and does
/// not exist yet is the demo config written first (a first start). A path the
/// user named that does not exist is an error, never a new file: a typo must not
/// pass as a valid config. The flag says whether the file was created.
pub fn load_on_first_start(path: &Path) -> Result<(Loaded, bool), ConfigError> {
    if path == default_path() && !path.exists() {
        return load_or_create(path).map(|loaded| (loaded, true));
    }
    load(path).map(|loaded| (loaded, false))
}

/// The file's text for a config: pretty JSON with a trailing newline.
pub fn render(config: &Config) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(config).expect("a config always serializes");
    bytes.push(b'\n');
    bytes
}

/// Validates and writes `config`, refusing when the file on disk is no longer
/// `expected` (edited by hand or by another window since it was read).
pub fn save(path: &Path, config: &Config, expected: &Version) -> Result<Version, ConfigError> {
    let problems = validate(config);
    if has_errors(&problems) {
        return Err(ConfigError::Invalid { path: path.to_path_buf(), problems });
    }
    let bytes = render(config);
    let _lock = WriteLock::take(path)?;
    let current = fs::read(path).map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
    if &Version::of(&current) != expected {
        return Err(ConfigError::Conflict { path: path.to_path_buf() });
    }
    write_atomic(path, &bytes)?;
    Ok(Version::of(&bytes))
}

/// An exclusive lock on a config file, held while its version is checked and the
/// new text renamed into place; released when dropped. The lock is on a sidecar
/// file beside the real target (the config itself is replaced by each save).
struct WriteLock(fs::File);

impl WriteLock {
    fn take(path: &Path) -> Result<WriteLock, ConfigError> {
        let target = follow_symlinks(path);
        let folder = folder_of(&target);
        let name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let lock_path = folder.join(format!(".{name}.lock"));
        let io_error = |source| ConfigError::Io { path: lock_path.clone(), source };
        let file =
            fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).map_err(io_error)?;
        file.lock().map_err(io_error)?;
        Ok(WriteLock(file))
    }
}

impl Drop for WriteLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// The file a path finally names, following symlinks (relative ones from their
/// link's folder); `path` itself when it is not a link. A dangling link names its
/// target, which a save then creates.
fn follow_symlinks(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    // A loop of links ends here rather than spinning; the write then fails clearly.
    for _ in 0..40 {
        match fs::read_link(&current) {
            Ok(target) if target.is_absolute() => current = target,
            Ok(target) => current = folder_of(&current).join(target),
            Err(_) => return current,
        }
    }
    current
}

fn folder_of(path: &Path) -> PathBuf {
    path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

/// Tells temp files of one process apart (threads may save at once).
static NEXT_TEMP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Writes a temp file beside `path`, syncs it, and renames it over `path`, so a
/// reader sees the old file or the new one, never half of one. Through a symlink,
/// the link's target is replaced and the link kept; the file's mode is kept.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ConfigError> {
    let io_error = |source| ConfigError::Io { path: path.to_path_buf(), source };
    let target = follow_symlinks(path);
    let folder = folder_of(&target);
    fs::create_dir_all(&folder).map_err(io_error)?;
    let file_name = target.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = NEXT_TEMP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp_path = folder.join(format!(".{file_name}.{}-{unique}.tmp", std::process::id()));
    let permissions = fs::metadata(&target).ok().map(|metadata| metadata.permissions());
    let result = (|| {
        let mut file = fs::File::create(&temp_path)?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp_path, &target)?;
        if let Ok(directory) = fs::File::open(&folder) {
            let _ = directory.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp_path);
    }
    result.map_err(io_error)
}
