//! `switchboard mcp connect CLIENT`: the config an MCP client (Claude Code, Codex,
//! Gemini CLI, Qwen Code) needs to use this server, printed, or with `--write`
//! set in the client's own file (a backup beside it, nothing written when the
//! entry is there already). Over stdio (this program, with this config) or over
//! a running streamable HTTP endpoint (`--url`, such as the app's).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use switchboard_mcp::connect::{merged, setup, Launch, McpClient};

use crate::{approval_words, Failure};
use switchboard_core::ApprovalPolicy;

#[derive(Args)]
pub(crate) struct ConnectArgs {
    /// claude-code, codex, gemini or qwen.
    client: String,
    /// Set the entry in the client's own file (a backup is kept beside it) instead of printing it.
    #[arg(long)]
    write: bool,
    /// Only print (the default).
    #[arg(long, conflicts_with = "write")]
    print: bool,
    /// Connect to this streamable HTTP endpoint (`switchboard mcp --http`, or the app's) instead of stdio.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The endpoint's bearer token is in this environment variable (of the client's environment).
    #[arg(long, value_name = "NAME", requires = "url")]
    token_env: Option<String>,
    /// Over stdio: serve this agent's tool-agents (`switchboard mcp --as AGENT`).
    #[arg(long = "as", value_name = "AGENT", conflicts_with = "url")]
    as_agent: Option<String>,
    /// Over stdio: how approval requests are answered (`switchboard mcp --approve`).
    #[arg(long, value_parser = approval_words(&["ask", "all", "none"]), conflicts_with = "url")]
    approve: Option<ApprovalPolicy>,
}

pub(crate) fn connect(config: &Path, arguments: ConnectArgs) -> Result<ExitCode, Failure> {
    let failure = |message: String| Failure { code: 1, message };
    let client = McpClient::parse(&arguments.client).ok_or_else(|| {
        let names: Vec<&str> = McpClient::ALL.into_iter().map(McpClient::name).collect();
        failure(format!("{:?}: one of {}", arguments.client, names.join(", ")))
    })?;
    let launch = match arguments.url {
        Some(url) => Launch::Http { url, token_env: arguments.token_env },
        None => {
            let program = std::env::current_exe().map_err(|error| failure(format!("where am I: {error}")))?;
            let config = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
            let mut args = vec!["--config".to_string(), config.display().to_string(), "mcp".to_string()];
            if let Some(agent) = arguments.as_agent {
                args.extend(["--as".to_string(), agent]);
            }
            if let Some(approve) = arguments.approve {
                args.extend(["--approve".to_string(), approve.as_str().to_string()]);
            }
            Launch::Stdio { command: program.display().to_string(), args }
        }
    };
    let shown = setup(client, &launch);
    if !arguments.write {
        println!("# {}", shown.file);
        println!("{}", shown.entry.trim_end());
        if let Some(command) = &shown.command {
            println!("\n# or: {command}");
        }
        println!("\n# {}", shown.notes);
        return Ok(ExitCode::SUCCESS);
    }
    let file = client_file(client).map_err(failure)?;
    // The file may sit in a repository someone else wrote (Claude Code's `.mcp.json`
    // is the current folder's): nothing is written through a link.
    let original = match std::fs::symlink_metadata(&file) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            let target = std::fs::read_link(&file).map(|target| target.display().to_string()).unwrap_or_default();
            return Err(failure(format!(
                "{} is a link to {target}; switchboard writes no file through a link: set it up by hand \
                 (without --write, the entry is printed)",
                file.display()
            )));
        }
        Ok(metadata) if !metadata.is_file() => {
            return Err(failure(format!("{} is not a regular file; left as it is", file.display())))
        }
        Ok(metadata) => Some(metadata),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(failure(format!("{}: {error}", file.display()))),
    };
    let existing = match original {
        Some(_) => {
            Some(std::fs::read_to_string(&file).map_err(|error| failure(format!("{}: {error}", file.display())))?)
        }
        None => None,
    };
    let updated = merged(client, existing.as_deref(), &launch)
        .map_err(|error| failure(format!("{}: {error}; left as it is", file.display())))?;
    if existing.as_deref() == Some(updated.as_str()) {
        println!("{}: already set up for switchboard", file.display());
        return Ok(ExitCode::SUCCESS);
    }
    let parent = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|error| failure(format!("{}: {error}", parent.display())))?;
    // Clients keep tokens in these files: the backup is the owner's alone (0600), the
    // file keeps its mode (a new one is 0600).
    let mode = original.as_ref().map(|metadata| metadata.permissions().mode() & 0o7777).unwrap_or(0o600);
    let backup = existing.as_ref().map(|text| (file.with_extension(backup_extension(&file)), text));
    if let Some((backup, text)) = &backup {
        replace(&parent, backup, text, 0o600).map_err(failure)?;
    }
    // Written aside (a new file of a random name) and renamed, so a client never
    // reads half a file and a link at the destination is replaced, never followed.
    replace(&parent, &file, &updated, mode).map_err(failure)?;
    match backup {
        Some((backup, _)) => {
            println!("{}: switchboard added (the file as it was: {})", file.display(), backup.display())
        }
        None => println!("{}: written with switchboard", file.display()),
    }
    println!("{}", shown.notes);
    Ok(ExitCode::SUCCESS)
}

/// Puts `text` at `path` with `mode`: written to a new file in `folder` (created
/// exclusively, so no link is followed), then renamed over `path`, which replaces
/// whatever is there (a link included) instead of writing through it.
fn replace(folder: &Path, path: &Path, text: &str, mode: u32) -> Result<(), String> {
    let fail = |error: std::io::Error| format!("{}: {error}", path.display());
    let mut aside = tempfile::Builder::new().prefix(".switchboard-partial").tempfile_in(folder).map_err(fail)?;
    aside.write_all(text.as_bytes()).map_err(fail)?;
    aside.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).map_err(fail)?;
    aside.as_file().sync_all().map_err(fail)?;
    aside.persist(path).map_err(|error| fail(error.error))?;
    Ok(())
}

/// `config.toml` → `toml.switchboard-backup`, so the backup keeps the name visible.
fn backup_extension(file: &Path) -> String {
    let extension = file.extension().and_then(|extension| extension.to_str()).unwrap_or("");
    format!("{extension}.switchboard-backup")
}

/// Where `client` keeps its config: the project's `.mcp.json` for Claude Code
/// (the current folder), `$CODEX_HOME/config.toml` for Codex, else under HOME.
fn client_file(client: McpClient) -> Result<PathBuf, String> {
    if client.in_project() {
        return std::env::current_dir().map(|folder| folder.join(client.file())).map_err(|error| error.to_string());
    }
    if client == McpClient::Codex {
        if let Some(home) = std::env::var_os("CODEX_HOME").filter(|home| !home.is_empty()) {
            return Ok(PathBuf::from(home).join("config.toml"));
        }
    }
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).ok_or("HOME is not set")?;
    Ok(PathBuf::from(home).join(client.file()))
}

/// `switchboard mcp token`: the app's endpoint token, from the keyring, on stdout.
pub(crate) fn print_app_token() -> Result<ExitCode, Failure> {
    use switchboard_core::keys::{KeyStore, SystemKeyring};
    use switchboard_mcp::http::DESKTOP_TOKEN_ENTRY;
    match SystemKeyring.get(DESKTOP_TOKEN_ENTRY) {
        Ok(Some(token)) => {
            println!("{token}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Err(Failure {
            code: 1,
            message: "the app's MCP endpoint has no token yet: switch it on in the app (Settings → MCP) first".into(),
        }),
        Err(error) => Err(Failure { code: 1, message: error.to_string() }),
    }
}
