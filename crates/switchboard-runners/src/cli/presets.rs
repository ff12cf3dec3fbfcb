//! Presets for the command-line agents we know: aider, smolagents, Claude Code,
//! Codex, Gemini CLI and Qwen Code work with only the fields HTTP agents use
//! (`model`, `url`, `api_key_env`), which the preset turns into the program's own
//! flags, environment and config overrides, plus the flags that run it once,
//! non-interactively, within its `autonomy`, and the rules that read its answer,
//! usage and errors out of its output. `command` replaces the program, `args` adds
//! flags, `env` and `output` fields win over the preset's. A plain `subprocess`
//! agent is its own config, as written.

use std::collections::BTreeMap;

mod agents;

use crate::config::{AgentConfig, Autonomy, OutputRules, Provider, ResultPick, UsageCombine, SMOLAGENTS_AUTONOMY};
pub(crate) use agents::anthropic_environment;
pub use agents::autonomy_flag;
use agents::{claude_code, codex, gemini_cli, qwen_code};

/// A command-line agent, ready to run: the program, its arguments (the request
/// goes where `{request}` stands, else after `--`), its own environment and the
/// rules that read its output.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub output: OutputRules,
    /// Where the answer is read from.
    pub answer: AnswerSource,
}

/// Where a program's answer is: its stdout (read by the output rules), or a file
/// the program keeps clean of its log, whose path the runner chooses per call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AnswerSource {
    #[default]
    Stdout,
    /// aider's LLM history (`--llm-history-file`, a fresh file per call): the
    /// model's replies exactly as received, apart from aider's log, commits, lint
    /// runs and notices, which stdout mixes in (and, with its own Markdown
    /// rendering, rewraps); stdout then streams as progress and gives the usage.
    /// The chat history file cannot serve: a reply's `> ` and `#### ` lines look
    /// like aider's own there.
    AiderLlmHistory,
    /// smolagents' console log, read by the output rules, except that a run that
    /// hit its step limit (it prints "Reached max steps." and exits 0) is a failure.
    SmolagentsLog,
}

/// The characters that make a message one of the program's own commands when it
/// starts with them: aider runs `/run CMD`, `!CMD` and every other `/command` given
/// as `--message`, without asking. A request is the model's words, never a command
/// of the agent's program: the runner puts a space before such a request, which
/// the program then reads as text (the model it asks sees the same words).
pub fn in_band_command_starts(provider: Provider) -> &'static [char] {
    match provider {
        Provider::AiderCli => &['/', '!'],
        _ => &[],
    }
}

/// The request as the program must read it: as text, never as its own command.
pub fn as_text_for(provider: Provider, request: &str) -> std::borrow::Cow<'_, str> {
    if request.starts_with(in_band_command_starts(provider)) {
        std::borrow::Cow::Owned(format!(" {request}"))
    } else {
        std::borrow::Cow::Borrowed(request)
    }
}

/// aider's "Tokens: 2.4k sent, 40 received. Cost: $0.01 message, $0.02 session." (one a model call).
const AIDER_USAGE: &str = r"^Tokens: (?P<input>[\d.,]+[kKmM]?) sent, (?P<output>[\d.,]+[kKmM]?) received\.(?: Cost: \$(?P<cost>[\d.,]+) message)?";
/// smolagents' running total: "[Step 2: Duration 0.5 seconds| Input tokens: 2,000 | Output tokens: 45]".
const SMOLAGENTS_USAGE: &str = r"Input tokens: (?P<input>[\d,]+) \| Output tokens: (?P<output>[\d,]+)";
const SMOLAGENTS_ANSWER: &str = r"(?s)Final answer: (?P<result>.*)\z";

/// The invocation of `agent`, its preset applied.
pub fn invocation(agent: &AgentConfig) -> Invocation {
    let mut preset = match agent.provider {
        Provider::AiderCli => aider(agent),
        Provider::Smolagents => smolagents(agent),
        Provider::ClaudeCode => claude_code(agent),
        Provider::Codex => codex(agent),
        Provider::GeminiCli => gemini_cli(agent),
        Provider::QwenCode => qwen_code(agent),
        _ => Invocation {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            output: OutputRules::default(),
            answer: AnswerSource::Stdout,
        },
    };
    preset.args.extend(agent.args.iter().cloned());
    preset.env.extend(agent.env.iter().map(|(name, value)| (name.clone(), value.clone())));
    if let Some(own) = &agent.output {
        preset.output = OutputRules {
            format: own.format.or(preset.output.format),
            result: own.result.or(preset.output.result),
            marker: own.marker.clone().or(preset.output.marker),
            pattern: own.pattern.clone().or(preset.output.pattern),
            usage_pattern: own.usage_pattern.clone().or(preset.output.usage_pattern),
            usage_combine: own.usage_combine.or(preset.output.usage_combine),
        };
    }
    preset.command = agent.command.clone().or(preset.command);
    preset
}

/// For each command-line agent whose program cannot be found (not on `PATH`, or
/// not at the path given): the agent's index and a sentence that says so.
pub fn missing_programs(agents: &[AgentConfig]) -> Vec<(usize, String)> {
    let search_path = std::env::var_os("PATH").unwrap_or_default();
    let mut missing = Vec::new();
    for (index, agent) in agents.iter().enumerate() {
        if !agent.provider.is_cli_agent() {
            continue;
        }
        let Some(command) = invocation(agent).command else { continue };
        if find_program(&command, &search_path).is_none() {
            let how = (agent.provider.program())
                .map(|program| format!(" ({}, or set `command` to its path)", program.install))
                .unwrap_or_default();
            missing.push((index, format!("agent {:?}: the program {command:?} was not found{how}", agent.name)));
        }
    }
    missing
}

/// What an agent CLI with a preset may do unattended, in words, with the flag
/// that says so to the program: for `check` and the agent form. `None` for agents
/// without an autonomy setting.
pub fn autonomy_note(agent: &AgentConfig) -> Option<String> {
    let autonomy = agent.autonomy.unwrap_or_default();
    let name = serde_json::to_value(autonomy).ok()?.as_str()?.to_string();
    if agent.provider == Provider::Smolagents {
        return Some(format!("smolagents {SMOLAGENTS_AUTONOMY}"));
    }
    let (program, flags, what) = match agent.provider {
        Provider::AiderCli => {
            let flags = aider_autonomy_flags(autonomy).join(" ");
            let flags = if flags.is_empty() { "its own defaults".to_string() } else { flags };
            (agent.provider.program()?.name, flags, aider_autonomy_words(autonomy))
        }
        Provider::ClaudeCode | Provider::Codex | Provider::GeminiCli | Provider::QwenCode => {
            let program = agent.provider.program()?.name;
            let what = match autonomy {
                Autonomy::ReadOnly => "may read files and answer; edits and commands are refused, never waited for",
                Autonomy::Edit => "may edit files in its working folder; commands are refused or sandboxed",
                Autonomy::Full => "may edit files and run commands without asking",
            };
            (program, autonomy_flag(agent.provider, autonomy)?, what)
        }
        _ => return None,
    };
    Some(format!("{program} runs with autonomy {name} ({flags}): it {what}"))
}

/// aider's flags at `autonomy` (the provider table's), beside the `--yes-always`
/// every run gets. With no terminal aider would take Enter's answer to each
/// question, and that runs a shell command its model suggests; `--yes-always`
/// says yes to everything but shell commands, which need an explicit yes it never
/// gives. So aider never runs a command; what `autonomy` adds is writing files
/// and fetching URLs: `read_only` is `--dry-run` (no edit or commit reaches a
/// file), no `.gitignore` change, no URL fetched, no command suggested (and,
/// outside a repository, `--no-git`, added by the preset: aider would create one);
/// `edit` lets it edit and commit, still fetching no URL (one in a request could
/// make it fetch a loopback or LAN address for the model); `full` is aider's own
/// defaults.
pub fn aider_autonomy_flags(autonomy: Autonomy) -> &'static [&'static str] {
    Provider::AiderCli.autonomy_switches(autonomy).unwrap_or_default()
}

fn aider_autonomy_words(autonomy: Autonomy) -> &'static str {
    match autonomy {
        Autonomy::ReadOnly => {
            "may read files and answer; no edit, commit or new repository reaches the disk, no URL is fetched"
        }
        Autonomy::Edit => "may edit and commit files in its working folder; it fetches no URL",
        Autonomy::Full => "may edit and commit files and fetch URLs a request names",
    }
}

/// Where `command` is: itself when it names a path, else the first folder of
/// `search_path` (a `PATH` value) holding an executable file of that name.
pub fn find_program(command: &str, search_path: &std::ffi::OsStr) -> Option<std::path::PathBuf> {
    if command.contains('/') {
        let path = std::path::PathBuf::from(command);
        return path.is_file().then_some(path);
    }
    // As execvp searches: a file on PATH that may not be executed is passed over.
    std::env::split_paths(search_path).map(|folder| folder.join(command)).find(|candidate| executable(candidate))
}

fn executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
}

/// The OpenAI-compatible server and key, as the programs' OpenAI clients read them.
pub(super) fn openai_environment(agent: &AgentConfig, base_variable: &str) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(url) = &agent.url {
        env.insert(base_variable.to_string(), url.trim_end_matches('/').to_string());
    }
    let key = match &agent.api_key_env {
        Some(variable) => format!("${{{variable}}}"),
        // A local server wants no key, but OpenAI clients refuse to start without one.
        None => "none".to_string(),
    };
    env.insert("OPENAI_API_KEY".into(), key);
    env
}

fn aider(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> =
        ["--yes-always", "--no-pretty", "--no-check-update", "--analytics-disable", "--no-show-release-notes"]
            .map(String::from)
            .to_vec();
    let autonomy = agent.autonomy.unwrap_or_default();
    args.extend(aider_autonomy_flags(autonomy).iter().map(|flag| flag.to_string()));
    if autonomy == Autonomy::ReadOnly && !in_repository(agent) {
        // aider would create one (it asks, and `--yes-always` says yes).
        args.push("--no-git".into());
    }
    if let Some(model) = &agent.model {
        args.push("--no-show-model-warnings".into());
        // Through an OpenAI-compatible base, litellm wants the `openai/` prefix.
        let name = if agent.url.is_some() && !model.contains('/') { format!("openai/{model}") } else { model.clone() };
        args.push(format!("--model={name}"));
    }
    if !agent.args.iter().any(|argument| argument.contains("{request}")) {
        args.push("--message={request}".into());
    }
    let mut env = openai_environment(agent, "OPENAI_API_BASE");
    // The price list is bundled; never fetched from the internet at each start.
    env.insert("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into());
    // The answer comes from the LLM history; stdout gives the token lines.
    let output = OutputRules {
        result: Some(ResultPick::All),
        pattern: None,
        usage_pattern: Some(AIDER_USAGE.into()),
        usage_combine: Some(UsageCombine::Sum),
        marker: None,
        format: None,
    };
    Invocation { command: Some("aider".into()), args, env, output, answer: AnswerSource::AiderLlmHistory }
}

/// Whether the agent's working folder (ours when it names none) is inside a git
/// repository, as git finds one: a `.git` in it or a folder above.
fn in_repository(agent: &AgentConfig) -> bool {
    let folder = match &agent.cwd {
        Some(folder) => std::path::PathBuf::from(folder),
        None => std::env::current_dir().unwrap_or_default(),
    };
    folder.ancestors().any(|folder| folder.join(".git").exists())
}

fn smolagents(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = vec!["--model-type".into(), "OpenAIModel".into()];
    if let Some(model) = &agent.model {
        args.extend(["--model-id".into(), model.clone()]);
    }
    if let Some(url) = &agent.url {
        args.extend(["--api-base".into(), url.trim_end_matches('/').to_string()]);
    }
    // smolagents' own default agent (it writes code, which its executor runs);
    // `args` may pick another `--action-type`. No tools: its default is a web
    // search, and the code it writes needs none (`args` may name some).
    args.push("--tools".into());
    let output = OutputRules {
        result: Some(ResultPick::Regex),
        pattern: Some(SMOLAGENTS_ANSWER.into()),
        usage_pattern: Some(SMOLAGENTS_USAGE.into()),
        usage_combine: Some(UsageCombine::Last),
        marker: None,
        format: None,
    };
    Invocation {
        command: Some("smolagent".into()),
        args,
        env: openai_environment(agent, "OPENAI_BASE_URL"),
        output,
        answer: AnswerSource::SmolagentsLog,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::output::OutputReader;

    #[test]
    fn a_request_is_never_one_of_aiders_commands() {
        for request in ["!touch x", "/run touch x", "/web http://127.0.0.1/", "/load commands.txt"] {
            assert_eq!(as_text_for(Provider::AiderCli, request), format!(" {request}"), "{request}");
            assert_eq!(as_text_for(Provider::Codex, request), request, "no other preset has such commands");
        }
        assert_eq!(as_text_for(Provider::AiderCli, "fix /src/main.rs"), "fix /src/main.rs");
    }

    #[test]
    fn aider_and_smolagents_get_only_what_autonomy_allows() {
        let outside = tempfile::tempdir().unwrap();
        let mut agent = AgentConfig::new("coder", Provider::AiderCli);
        agent.cwd = Some(outside.path().display().to_string());
        let has = |agent: &AgentConfig, flag: &str| invocation(agent).args.iter().any(|argument| argument == flag);
        assert!(has(&agent, "--yes-always"), "else aider takes Enter's answer, which runs a suggested command");
        for flag in ["--dry-run", "--no-detect-urls", "--no-suggest-shell-commands", "--no-gitignore", "--no-git"] {
            assert!(has(&agent, flag), "read_only, outside a repository: {flag}");
        }
        std::fs::create_dir(outside.path().join(".git")).unwrap();
        assert!(!has(&agent, "--no-git"), "a repository is read, its map used");
        agent.autonomy = Some(Autonomy::Edit);
        assert!(!has(&agent, "--dry-run") && has(&agent, "--no-detect-urls"));
        agent.autonomy = Some(Autonomy::Full);
        assert!(!has(&agent, "--no-detect-urls") && !has(&agent, "--dry-run"));
        assert!(autonomy_note(&agent).unwrap().contains("aider runs with autonomy full"));

        let smol = AgentConfig::new("smol", Provider::Smolagents);
        let args = invocation(&smol).args;
        let tools = args.iter().position(|argument| argument == "--tools").expect("--tools, else a web search");
        assert!(args.get(tools + 1).is_none_or(|next| next.starts_with('-')), "no tool: {args:?}");
        assert!(autonomy_note(&smol).unwrap().contains("restricted executor"));
    }

    #[test]
    fn the_aider_preset_reads_its_tokens_from_stdout() {
        let stdout = "Aider v0.86.2\nModel: openai/coder-m with whole edit format\n\nI will rename the greeting.\nTokens: 2.4k sent, 40 received. Cost: $0.01 message, $0.02 session.\nApplied edit to hello.py\nTokens: 100 sent, 10 received.\n";
        let mut agent = AgentConfig::new("coder", Provider::AiderCli);
        agent.model = Some("coder-m".into());
        agent.url = Some("http://127.0.0.1:9/v1/".into());
        let invocation = invocation(&agent);
        assert!(invocation.args.contains(&"--model=openai/coder-m".to_string()), "{:?}", invocation.args);
        assert_eq!(invocation.args.last().unwrap(), "--message={request}");
        assert_eq!(invocation.env["OPENAI_API_BASE"], "http://127.0.0.1:9/v1");
        assert_eq!(invocation.env["OPENAI_API_KEY"], "none");
        assert_eq!(invocation.answer, AnswerSource::AiderLlmHistory, "the answer is never aider's log");
        let read = OutputReader::new(&invocation.output).unwrap().read(stdout).unwrap();
        assert_eq!(read.usage.map(|usage| (usage.input_tokens, usage.output_tokens)), Some((2_500, 50)));
        assert_eq!(read.cost, Some(0.01));
    }

    #[test]
    fn the_smolagents_preset_reads_its_final_answer_and_total() {
        let stdout = "╭──── New run ────╮\n│ what is six times seven? │\n╰─ OpenAIModel - smol-m ─╯\n━━━ Step 1 ━━━\nObservations: 42\n[Step 1: Duration 0.13 seconds| Input tokens: 925 | Output tokens: 11]\nFinal answer: The answer is 42.\nIt is six times seven.\n[Step 2: Duration 0.10 seconds| Input tokens: 2,000 | Output tokens: 45]\n";
        let mut agent = AgentConfig::new("smol", Provider::Smolagents);
        agent.model = Some("smol-m".into());
        agent.api_key_env = Some("EXAMPLE_KEY".into());
        agent.args = vec!["--verbosity-level".into(), "1".into()];
        let invocation = invocation(&agent);
        assert_eq!(invocation.command.as_deref(), Some("smolagent"));
        assert_eq!(&invocation.args[invocation.args.len() - 2..], ["--verbosity-level", "1"], "args add flags");
        assert_eq!(invocation.env["OPENAI_API_KEY"], "${EXAMPLE_KEY}");
        let read = OutputReader::new(&invocation.output).unwrap().read(stdout).unwrap();
        assert_eq!(read.answer, "The answer is 42.\nIt is six times seven.");
        assert_eq!(read.usage.map(|usage| usage.total_tokens), Some(2_045), "the last running total, not a sum");
    }
}
