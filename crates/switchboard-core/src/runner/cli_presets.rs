//! Presets for the command-line agents we know: `aider-cli` and `smolagents` work
//! with only the fields HTTP agents use (`model`, `url` as an OpenAI-compatible
//! base, `api_key_env`), which the preset turns into the program's own flags and
//! environment, plus the flags that run it non-interactively and the rules that
//! pick its answer and usage out of its output. `command` replaces the program,
//! `args` adds flags, `env` and `output` fields win over the preset's. A plain
//! `subprocess` agent is its own config, as written.

use std::collections::BTreeMap;

use crate::config::{AgentConfig, OutputRules, Provider, ResultPick, UsageCombine};

/// A command-line agent, ready to run: the program, its arguments (the request
/// goes where `{request}` stands, else after `--`), its own environment and the
/// rules that read its output.
#[derive(Debug, Clone, PartialEq)]
pub struct Invocation {
    pub command: Option<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub output: OutputRules,
}

/// aider's "Tokens: 2.4k sent, 40 received. Cost: $0.01 message, $0.02 session." (one a model call).
const AIDER_USAGE: &str = r"^Tokens: (?P<input>[\d.,]+[kKmM]?) sent, (?P<output>[\d.,]+[kKmM]?) received\.(?: Cost: \$(?P<cost>[\d.,]+) message)?";
/// What aider prints before the model's answer: its banner, notices and warnings.
const AIDER_ANSWER: &str = r"(?s)\A(?:(?:Aider v|Model:|Main model:|Weak model:|Editor model:|Git repo:|Repo-map:|Added |https?://|Analytics |HTTPSConnectionPool|Warning|Use /help|Cur working dir:)[^\n]*\n|[ \t]*\n)*(?P<result>.*)\z";
/// smolagents' running total: "[Step 2: Duration 0.5 seconds| Input tokens: 2,000 | Output tokens: 45]".
const SMOLAGENTS_USAGE: &str = r"Input tokens: (?P<input>[\d,]+) \| Output tokens: (?P<output>[\d,]+)";
const SMOLAGENTS_ANSWER: &str = r"(?s)Final answer: (?P<result>.*)\z";

/// The invocation of `agent`, its preset applied.
pub fn invocation(agent: &AgentConfig) -> Invocation {
    let mut preset = match agent.provider {
        Provider::AiderCli => aider(agent),
        Provider::Smolagents => smolagents(agent),
        _ => Invocation { command: None, args: Vec::new(), env: BTreeMap::new(), output: OutputRules::default() },
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
        if !matches!(agent.provider, Provider::Subprocess | Provider::AiderCli | Provider::Smolagents) {
            continue;
        }
        let Some(command) = invocation(agent).command else { continue };
        if find_program(&command, &search_path).is_none() {
            let how = match agent.provider {
                Provider::AiderCli => " (install aider-chat, or set `command` to its path)",
                Provider::Smolagents => " (install smolagents, or set `command` to its path)",
                _ => "",
            };
            missing.push((index, format!("agent {:?}: the program {command:?} was not found{how}", agent.name)));
        }
    }
    missing
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
fn openai_environment(agent: &AgentConfig, base_variable: &str) -> BTreeMap<String, String> {
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
    let output = OutputRules {
        result: Some(ResultPick::Regex),
        pattern: Some(AIDER_ANSWER.into()),
        usage_pattern: Some(AIDER_USAGE.into()),
        usage_combine: Some(UsageCombine::Sum),
        marker: None,
        format: None,
    };
    Invocation { command: Some("aider".into()), args, env, output }
}

fn smolagents(agent: &AgentConfig) -> Invocation {
    let mut args: Vec<String> = vec!["--model-type".into(), "OpenAIModel".into()];
    if let Some(model) = &agent.model {
        args.extend(["--model-id".into(), model.clone()]);
    }
    if let Some(url) = &agent.url {
        args.extend(["--api-base".into(), url.trim_end_matches('/').to_string()]);
    }
    args.extend(["--action-type", "tool_calling", "--tools", "python_interpreter"].map(String::from));
    let output = OutputRules {
        result: Some(ResultPick::Regex),
        pattern: Some(SMOLAGENTS_ANSWER.into()),
        usage_pattern: Some(SMOLAGENTS_USAGE.into()),
        usage_combine: Some(UsageCombine::Last),
        marker: None,
        format: None,
    };
    Invocation { command: Some("smolagent".into()), args, env: openai_environment(agent, "OPENAI_BASE_URL"), output }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::cli_output::OutputReader;

    #[test]
    fn the_aider_preset_reads_its_answer_and_tokens() {
        let stdout = "Analytics have been permanently disabled.\n\nHTTPSConnectionPool(host='raw.githubusercontent.com', port=443): Max retries exceeded\nAider v0.86.2\nModel: openai/coder-m with diff edit format\nGit repo: none\nRepo-map: disabled\nAdded hello.py to the chat.\n\n\nhttps://aider.chat/HISTORY.html#release-notes\n\nI will rename the greeting.\n\nThe greeting now says hello to the world.\nTokens: 2.4k sent, 40 received.\nApplied edit to hello.py\n";
        let mut agent = AgentConfig::new("coder", Provider::AiderCli);
        agent.model = Some("coder-m".into());
        agent.url = Some("http://127.0.0.1:9/v1/".into());
        let invocation = invocation(&agent);
        assert!(invocation.args.contains(&"--model=openai/coder-m".to_string()), "{:?}", invocation.args);
        assert_eq!(invocation.args.last().unwrap(), "--message={request}");
        assert_eq!(invocation.env["OPENAI_API_BASE"], "http://127.0.0.1:9/v1");
        assert_eq!(invocation.env["OPENAI_API_KEY"], "none");
        let read = OutputReader::new(&invocation.output).unwrap().read(stdout).unwrap();
        assert_eq!(
            read.answer,
            "I will rename the greeting.\n\nThe greeting now says hello to the world.\nApplied edit to hello.py"
        );
        assert_eq!(read.usage.map(|usage| (usage.input_tokens, usage.output_tokens)), Some((2_400, 40)));
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
