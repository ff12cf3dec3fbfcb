//! API keys kept in the system keyring, for an app started from the applications
//! menu (which does not see the variables a shell profile exports). An HTTP agent
//! names its entry in `api_key_keyring`; the key itself is in the Secret Service
//! (GNOME Keyring, KWallet, KeePassXC) under the service `switchboard` and the
//! entry's name as its user, read at each model step and never written to the
//! config file, a log, an event or a trace. The store is a trait so a runner cache
//! can be given a memory store (tests, embedders); the system one goes through the
//! `keyring` crate, whose Secret Service store speaks D-Bus with zbus. Its calls
//! block, so async code reads through [`read`], off the runtime's workers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::contract::RunnerError;

/// The keyring service every Switchboard entry is stored under.
pub const SERVICE: &str = "switchboard";
/// The longest key kept (a hosted service's key is under 200 bytes).
pub const MAX_KEY_BYTES: usize = 4096;

/// Why a key could not be read, stored or deleted. The text never holds a key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No keyring answers: no Secret Service on the session bus, or it is locked.
    #[error("the system keyring is not available ({0}); is a Secret Service (GNOME Keyring, KWallet, KeePassXC) running and unlocked?")]
    Unavailable(String),
    /// The entry name or the key is not one that can be kept.
    #[error("{0}")]
    Invalid(String),
    /// The keyring answered with an error.
    #[error("the system keyring failed: {0}")]
    Failed(String),
}

/// Where keys are kept. `get` is `None` when the entry holds no key.
pub trait KeyStore: Send + Sync {
    fn get(&self, entry: &str) -> Result<Option<String>, KeyError>;
    fn set(&self, entry: &str, key: &str) -> Result<(), KeyError>;
    /// Whether there was a key to delete.
    fn delete(&self, entry: &str) -> Result<bool, KeyError>;
}

/// The shared handle a runner cache holds.
pub type Keys = Arc<dyn KeyStore>;

/// The system keyring: the Secret Service on Linux (Keychain, Credential Manager
/// elsewhere), through the `keyring` crate.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemKeyring;

impl SystemKeyring {
    pub fn shared() -> Keys {
        Arc::new(SystemKeyring)
    }

    fn entry(entry: &str) -> Result<keyring::Entry, KeyError> {
        valid_entry(entry)?;
        keyring::Entry::new(SERVICE, entry).map_err(classify)
    }
}

impl KeyStore for SystemKeyring {
    fn get(&self, entry: &str) -> Result<Option<String>, KeyError> {
        match SystemKeyring::entry(entry)?.get_password() {
            Ok(key) => Ok(Some(key)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(classify(error)),
        }
    }

    fn set(&self, entry: &str, key: &str) -> Result<(), KeyError> {
        valid_key(key)?;
        SystemKeyring::entry(entry)?.set_password(key).map_err(classify)
    }

    fn delete(&self, entry: &str) -> Result<bool, KeyError> {
        match SystemKeyring::entry(entry)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(error) => Err(classify(error)),
        }
    }
}

/// The keyring crate's error as ours. Its texts name the store's failure, never
/// the secret (a `BadEncoding` carries the bytes: they are dropped here).
fn classify(error: keyring::Error) -> KeyError {
    match error {
        keyring::Error::NoDefaultStore => KeyError::Unavailable("no Secret Service on the session bus".into()),
        keyring::Error::NoStorageAccess(inner) => KeyError::Unavailable(inner.to_string()),
        keyring::Error::BadEncoding(_) => KeyError::Failed("the stored key is not UTF-8 text".into()),
        keyring::Error::BadDataFormat(_, inner) => KeyError::Failed(format!("the stored key is unreadable: {inner}")),
        keyring::Error::Invalid(what, why) => KeyError::Invalid(format!("{what}: {why}")),
        keyring::Error::TooLong(what, limit) => KeyError::Invalid(format!("{what} is longer than {limit}")),
        other => KeyError::Failed(other.to_string()),
    }
}

/// Keys in memory, for tests and embedders that keep their own.
#[derive(Debug, Default)]
pub struct MemoryKeys {
    keys: Mutex<HashMap<String, String>>,
}

impl MemoryKeys {
    pub fn shared() -> Arc<MemoryKeys> {
        Arc::new(MemoryKeys::default())
    }
}

impl KeyStore for MemoryKeys {
    fn get(&self, entry: &str) -> Result<Option<String>, KeyError> {
        valid_entry(entry)?;
        Ok(self.keys.lock().unwrap().get(entry).cloned())
    }

    fn set(&self, entry: &str, key: &str) -> Result<(), KeyError> {
        valid_entry(entry)?;
        valid_key(key)?;
        self.keys.lock().unwrap().insert(entry.into(), key.into());
        Ok(())
    }

    fn delete(&self, entry: &str) -> Result<bool, KeyError> {
        valid_entry(entry)?;
        Ok(self.keys.lock().unwrap().remove(entry).is_some())
    }
}

/// Whether `entry` can name a keyring entry: what an agent's name may be
/// (letters, digits, `-`, `_`, `.`), 1 to 100 characters.
pub fn entry_is_valid(entry: &str) -> bool {
    (1..=100).contains(&entry.len())
        && entry.chars().all(|character| character.is_ascii_alphanumeric() || "-_.".contains(character))
}

fn valid_entry(entry: &str) -> Result<(), KeyError> {
    if entry_is_valid(entry) {
        Ok(())
    } else {
        Err(KeyError::Invalid("a keyring entry is named with 1 to 100 letters, digits, '-', '_' or '.'".into()))
    }
}

fn valid_key(key: &str) -> Result<(), KeyError> {
    if key.trim().is_empty() {
        return Err(KeyError::Invalid("the key is empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(KeyError::Invalid(format!("the key is longer than {MAX_KEY_BYTES} bytes")));
    }
    if key.trim() != key || key.chars().any(char::is_control) {
        return Err(KeyError::Invalid(
            "the key has spaces around it or a line break in it (was more than the key pasted?)".into(),
        ));
    }
    Ok(())
}

/// `store.get(entry)` off the runtime's workers (the system keyring blocks on D-Bus).
pub async fn read(store: &Keys, entry: &str) -> Result<Option<String>, KeyError> {
    let (store, entry) = (store.clone(), entry.to_string());
    tokio::task::spawn_blocking(move || store.get(&entry))
        .await
        .unwrap_or_else(|_| Err(KeyError::Failed("the keyring read stopped".into())))
}

/// The API key an agent is configured with, as a runner needs it: from its
/// `api_key_env` variable or its `api_key_keyring` entry, `None` when it names
/// neither. The errors say where the key was looked for, never what it is.
pub async fn api_key(
    store: &Keys,
    agent_name: &str,
    api_key_env: Option<&str>,
    api_key_keyring: Option<&str>,
) -> Result<Option<String>, RunnerError> {
    if let Some(variable) = api_key_env {
        return std::env::var(variable)
            .map(Some)
            .map_err(|_| RunnerError::Config(format!("environment variable {variable} (api_key_env) is not set")));
    }
    let Some(entry) = api_key_keyring else { return Ok(None) };
    match read(store, entry).await {
        Ok(Some(key)) => Ok(Some(key)),
        Ok(None) => Err(RunnerError::Config(format!(
            "no key is stored in the system keyring for {entry:?} (api_key_keyring of agent {agent_name:?}): set it in the agent's form or with `switchboard agent key set {agent_name}`"
        ))),
        Err(error) => Err(RunnerError::Config(format!("agent {agent_name:?}: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_a_line_break_or_spaces_is_refused_and_the_error_never_holds_it() {
        let keys = MemoryKeys::default();
        for bad in ["sk-abc\n", " sk-abc", "sk-a\nb", ""] {
            let error = keys.set("openai", bad).unwrap_err();
            assert!(bad.trim().is_empty() || !error.to_string().contains(bad.trim()), "{error}");
        }
        keys.set("openai", "sk-abc").unwrap();
        assert_eq!(keys.get("openai").unwrap().as_deref(), Some("sk-abc"));
        assert!(keys.delete("openai").unwrap());
        assert!(!keys.delete("openai").unwrap());
        assert_eq!(keys.get("openai").unwrap(), None);
    }

    #[test]
    fn an_entry_is_named_like_an_agent() {
        assert!(entry_is_valid("open-router.main_2"));
        for bad in ["", "a b", "a/b", "ключ", &"x".repeat(101)] {
            assert!(!entry_is_valid(bad), "{bad}");
            assert!(MemoryKeys::default().get(bad).is_err());
        }
    }

    #[tokio::test]
    async fn the_key_comes_from_the_variable_or_the_entry_and_a_missing_one_says_where_it_was_looked_for() {
        let store: Keys = MemoryKeys::shared();
        assert_eq!(api_key(&store, "gpt", None, None).await.unwrap(), None);
        let missing = api_key(&store, "gpt", None, Some("openai")).await.unwrap_err().to_string();
        assert!(missing.contains("\"openai\"") && missing.contains("switchboard agent key set gpt"), "{missing}");
        store.set("openai", "sk-test-123").unwrap();
        assert_eq!(api_key(&store, "gpt", None, Some("openai")).await.unwrap().as_deref(), Some("sk-test-123"));
        let unset = api_key(&store, "gpt", Some("SWITCHBOARD_KEYS_TEST_UNSET"), None).await.unwrap_err();
        assert!(unset.to_string().contains("SWITCHBOARD_KEYS_TEST_UNSET"), "{unset}");
    }
}
