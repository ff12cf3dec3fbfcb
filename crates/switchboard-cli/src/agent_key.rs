//! `switchboard agent key set|delete|status NAME`: an HTTP agent's API key in the
//! system keyring (the Secret Service), for an app started from the applications
//! menu, which never sees a shell profile's variables. `set` reads the key from
//! the terminal with echo off, or one line from a pipe, never from an argument
//! (which `ps` and the shell history would show), stores it under the agent's
//! `api_key_keyring` entry (its name when it has none) and points the agent at it.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::process::ExitCode;

use switchboard_core::config::edit::Edit;
use switchboard_core::config::AgentConfig;
use switchboard_core::keys::{KeyStore, SystemKeyring};

use crate::{load, save, Failure};

fn failure(message: String) -> Failure {
    Failure { code: 1, message }
}

fn http_agent(path: &Path, name: &str) -> Result<AgentConfig, Failure> {
    let config = load(path)?.config;
    let agent = config.agent(name).ok_or_else(|| failure(format!("no agent named {name:?} is configured")))?;
    if !agent.provider.info().keyring {
        return Err(failure(format!(
            "{name:?} is a {} agent: a key in the keyring is for local (HTTP model) agents; give it one with --api-key-env",
            agent.provider.as_str()
        )));
    }
    Ok(agent.clone())
}

/// The key, from the terminal (echo off) or one line of a pipe.
fn read_key(name: &str) -> Result<String, Failure> {
    let key = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("API key for {name} (not shown): "))
            .map_err(|error| failure(format!("cannot read the key from the terminal: {error}")))?
    } else {
        // One line, read no further than a key and its line break can be.
        let limit = switchboard_core::keys::MAX_KEY_BYTES as u64 + 2;
        let mut line = String::new();
        std::io::Read::take(std::io::stdin().lock(), limit)
            .read_line(&mut line)
            .map_err(|error| failure(format!("cannot read the key from standard input: {error}")))?;
        line
    };
    let key = key.trim_end_matches(['\r', '\n']).to_string();
    if key.is_empty() {
        return Err(failure("no key was given (type it at the prompt, or pipe it in on one line)".into()));
    }
    Ok(key)
}

pub(crate) fn set(path: &Path, name: &str, entry: Option<String>) -> Result<ExitCode, Failure> {
    let mut agent = http_agent(path, name)?;
    let entry = entry.or_else(|| agent.api_key_keyring.clone()).unwrap_or_else(|| name.to_string());
    let key = read_key(name)?;
    SystemKeyring.set(&entry, &key).map_err(|error| failure(error.to_string()))?;
    eprintln!("stored the key for {name} in the system keyring (service switchboard, entry {entry})");
    let replaced = agent.api_key_env.take();
    if agent.api_key_keyring.as_deref() == Some(entry.as_str()) && replaced.is_none() {
        return Ok(ExitCode::SUCCESS);
    }
    agent.api_key_keyring = Some(entry);
    if let Some(variable) = replaced {
        eprintln!("note: {name} no longer reads its key from {variable} (api_key_env)");
    }
    save(path, &Edit::EditAgent { name: name.to_string(), agent })
}

pub(crate) fn delete(path: &Path, name: &str) -> Result<ExitCode, Failure> {
    let mut agent = http_agent(path, name)?;
    let Some(entry) = agent.api_key_keyring.take() else {
        return Err(failure(format!("{name} keeps no key in the keyring (it has no api_key_keyring)")));
    };
    let deleted = SystemKeyring.delete(&entry).map_err(|error| failure(error.to_string()))?;
    eprintln!("{} the keyring entry {entry}", if deleted { "deleted the key in" } else { "there was no key in" });
    save(path, &Edit::EditAgent { name: name.to_string(), agent })
}

pub(crate) fn status(path: &Path, name: &str) -> Result<ExitCode, Failure> {
    let agent = http_agent(path, name)?;
    match (&agent.api_key_env, &agent.api_key_keyring) {
        (Some(variable), _) => {
            let set = std::env::var_os(variable).is_some();
            println!(
                "{name} reads its key from {variable} (api_key_env), {}",
                if set { "set here" } else { "not set here" }
            );
            Ok(if set { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        (None, Some(entry)) => match SystemKeyring.get(entry).map_err(|error| failure(error.to_string()))? {
            Some(_) => {
                println!("{name} reads its key from the system keyring (entry {entry}): a key is stored");
                Ok(ExitCode::SUCCESS)
            }
            None => {
                println!("{name} reads its key from the system keyring (entry {entry}): no key is stored");
                Ok(ExitCode::from(1))
            }
        },
        (None, None) => {
            println!("{name} sends no API key");
            Ok(ExitCode::SUCCESS)
        }
    }
}
