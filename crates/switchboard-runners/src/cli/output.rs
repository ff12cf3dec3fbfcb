//! What a command-line agent printed, read as an answer and a usage: the part of
//! stdout its `output` rules (or its preset) pick, without the lines that report
//! tokens, and the token counts (and cost) those lines give. Pure.

use regex::Regex;

use crate::config::{OutputRules, ResultPick, UsageCombine};
use crate::event::Usage;

/// The rules of one agent, compiled.
#[derive(Debug, Clone)]
pub struct OutputReader {
    result: ResultPick,
    marker: Option<String>,
    pattern: Option<Regex>,
    usage_pattern: Option<Regex>,
    usage_combine: UsageCombine,
}

/// An agent's answer and what it reported using.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadOutput {
    pub answer: String,
    pub usage: Option<Usage>,
    pub cost: Option<f64>,
}

impl OutputReader {
    /// Compiles `rules`; a bad regex is an error that names the field.
    pub fn new(rules: &OutputRules) -> Result<OutputReader, String> {
        let compile = |field: &str, pattern: &Option<String>| {
            pattern
                .as_deref()
                .map(|pattern| {
                    Regex::new(pattern).map_err(|error| format!("output.{field} is not a valid regex: {error}"))
                })
                .transpose()
        };
        let result = rules.result.unwrap_or(ResultPick::All);
        if result == ResultPick::AfterMarker && rules.marker.is_none() {
            return Err("output.result \"after_marker\" needs output.marker".into());
        }
        if result == ResultPick::Regex && rules.pattern.is_none() {
            return Err("output.result \"regex\" needs output.pattern".into());
        }
        Ok(OutputReader {
            result,
            marker: rules.marker.clone(),
            pattern: compile("pattern", &rules.pattern)?,
            usage_pattern: compile("usage_pattern", &rules.usage_pattern)?,
            usage_combine: rules.usage_combine.unwrap_or(UsageCombine::Sum),
        })
    }

    /// Reads stdout: the usage from its usage lines, the answer from the rest. An
    /// answer that is not where the rules say (no marker, no match) is an error:
    /// a program that gave up must not pass for one that answered.
    pub fn read(&self, stdout: &str) -> Result<ReadOutput, String> {
        let (usage, cost, kept) = match &self.usage_pattern {
            Some(pattern) => self.usage_of(pattern, stdout),
            None => (None, None, stdout.to_string()),
        };
        let answer = self.answer_of(&kept).ok_or_else(|| match self.result {
            ResultPick::AfterMarker => {
                format!("the output has no line with {:?} (output.marker)", self.marker.as_deref().unwrap_or_default())
            }
            _ => "the output has no answer where output.pattern looks for one".to_string(),
        })?;
        Ok(ReadOutput { answer: answer.trim().to_string(), usage, cost })
    }

    fn answer_of<'a>(&self, text: &'a str) -> Option<&'a str> {
        match self.result {
            ResultPick::All => Some(text),
            ResultPick::LastBlock => {
                let trimmed = text.trim_end();
                Some(trimmed.rfind("\n\n").map(|at| &trimmed[at + 2..]).unwrap_or(trimmed))
            }
            ResultPick::AfterMarker => {
                let marker = self.marker.as_deref().unwrap_or_default();
                // From the line after the marker's line.
                let at = text.rfind(marker)?;
                Some(text[at..].find('\n').map(|end| &text[at + end + 1..]).unwrap_or(""))
            }
            ResultPick::Regex => {
                let captures = self.pattern.as_ref().expect("checked in new").captures_iter(text).last()?;
                captures.name("result").or_else(|| captures.get(0)).map(|found| found.as_str())
            }
        }
    }

    /// The usage lines' figures, combined, and the text without those lines.
    fn usage_of(&self, pattern: &Regex, stdout: &str) -> (Option<Usage>, Option<f64>, String) {
        let mut usage: Option<Usage> = None;
        let mut cost: Option<f64> = None;
        let mut kept = Vec::new();
        for line in stdout.lines() {
            let Some(captures) = pattern.captures(line) else {
                kept.push(line);
                continue;
            };
            let count = |name: &str| captures.name(name).and_then(|found| parse_count(found.as_str())).unwrap_or(0);
            let line_usage = Usage::new(count("input"), count("output"));
            let line_cost = captures.name("cost").and_then(|found| found.as_str().replace(',', "").parse::<f64>().ok());
            match self.usage_combine {
                UsageCombine::Sum => {
                    usage.get_or_insert_with(Usage::default).add(&line_usage);
                    if let Some(line_cost) = line_cost {
                        *cost.get_or_insert(0.0) += line_cost;
                    }
                }
                UsageCombine::Last => {
                    usage = Some(line_usage);
                    cost = line_cost.or(cost);
                }
            }
        }
        (usage, cost, kept.join("\n"))
    }
}

/// The model's replies in aider's LLM history (`--llm-history-file`): each
/// `LLM RESPONSE <time>` block's `ASSISTANT ` lines, unprefixed; empty replies
/// (a failed model call) and a reply said again unchanged (a test retry) left out.
pub fn aider_replies(history: &str) -> Vec<String> {
    let mut replies: Vec<String> = Vec::new();
    let mut reply: Option<Vec<&str>> = None;
    let close = |reply: Option<Vec<&str>>, replies: &mut Vec<String>| {
        let Some(lines) = reply else { return };
        let text = lines.join("\n").trim_end().to_string();
        if !text.trim().is_empty() && replies.last() != Some(&text) {
            replies.push(text);
        }
    };
    for line in history.lines() {
        if line.starts_with("LLM RESPONSE ") {
            close(reply.take(), &mut replies);
            reply = Some(Vec::new());
        } else if line.starts_with("TO LLM ") {
            close(reply.take(), &mut replies);
        } else if let Some(lines) = &mut reply {
            if let Some(text) = line.strip_prefix("ASSISTANT ").or((line == "ASSISTANT").then_some("")) {
                lines.push(text);
            }
        }
    }
    close(reply, &mut replies);
    replies
}

/// Why a smolagents run gave up, when it did: it prints "Reached max steps." and
/// exits 0 without an answer. The words are its last step's error and the
/// running token total of the last step line.
pub fn smolagents_gave_up(log: &str) -> Option<String> {
    let stopped = log.rfind("Reached max steps.")?;
    let before = &log[..stopped];
    let steps_error = before.rfind("Error in ").map(|at| {
        let error = &before[at..];
        let end = error.find("\n[Step ").unwrap_or(error.len());
        crate::truncate(error[..end].trim(), 600)
    });
    let usage = Regex::new(r"Input tokens: ([\d,]+) \| Output tokens: ([\d,]+)")
        .expect("a valid pattern")
        .captures_iter(log)
        .last()
        .map(|found| format!(" (tokens so far: {} in, {} out)", &found[1], &found[2]))
        .unwrap_or_default();
    Some(match steps_error {
        Some(error) => {
            format!("smolagents reached its step limit without an answer{usage}; its last step said: {error}")
        }
        None => format!("smolagents reached its step limit without an answer{usage}"),
    })
}

/// A token count as CLIs print it: `925`, `2,000`, `2.4k`, `1.2M`.
pub fn parse_count(text: &str) -> Option<u64> {
    let text = text.trim().replace(',', "");
    let (number, scale) = match text.chars().last()? {
        'k' | 'K' => (&text[..text.len() - 1], 1_000.0),
        'm' | 'M' => (&text[..text.len() - 1], 1_000_000.0),
        _ => (text.as_str(), 1.0),
    };
    let value: f64 = number.parse().ok()?;
    (value >= 0.0).then(|| (value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aider_replies_are_read_from_its_llm_history() {
        let history = "TO LLM 2026-12-01T22:21:03\n-------\nSYSTEM Act as an expert.\nUSER Say hello\n-------\n\
            LLM RESPONSE 2026-12-01T22:21:03\nASSISTANT   Sure, here it is.\nASSISTANT \nASSISTANT > a quoted line\n\
            ASSISTANT #### a heading\nASSISTANT Tokens: 1 sent, 2 received.\nASSISTANT\nASSISTANT hello.py\n\
            TO LLM 2026-12-01T22:21:04\nUSER # Fix any errors below\nLLM RESPONSE 2026-12-01T22:21:04\nASSISTANT Fixed.\n\
            TO LLM 2026-12-01T22:21:05\nLLM RESPONSE 2026-12-01T22:21:05\nASSISTANT Fixed.\n\
            TO LLM 2026-12-01T22:21:06\nLLM RESPONSE 2026-12-01T22:21:06\n\n";
        assert_eq!(
            aider_replies(history),
            vec![
                "  Sure, here it is.\n\n> a quoted line\n#### a heading\nTokens: 1 sent, 2 received.\n\nhello.py",
                "Fixed."
            ],
            "the replies verbatim; a repeat and an empty (failed) reply left out"
        );
        assert!(aider_replies("").is_empty());
    }

    #[test]
    fn a_smolagents_run_that_hit_its_step_limit_says_why() {
        let log = "━━━ Step 20 ━━━\nI will not write code. Error in code parsing:\nYour code snippet is invalid, because the regex pattern <code>(.*?)</code> was \nnot found in it.\n[Step 20: Duration 0.04 seconds| Input tokens: 73,200 | Output tokens: 320]\nReached max steps.\n[Step 21: Duration 0.04 seconds| Input tokens: 76,241 | Output tokens: 336]\n";
        let why = smolagents_gave_up(log).unwrap();
        assert!(why.contains("step limit") && why.contains("76,241 in, 336 out"), "{why}");
        assert!(why.contains("Error in code parsing:\nYour code snippet is invalid"), "{why}");
        assert!(!why.contains("[Step 20"), "{why}");
        assert_eq!(smolagents_gave_up("Final answer: 42\n"), None);
    }

    #[test]
    fn counts_read_as_clis_print_them() {
        let cases =
            [("925", Some(925)), ("2,000", Some(2_000)), ("2.4k", Some(2_400)), ("1.2M", Some(1_200_000)), ("x", None)];
        for (text, expected) in cases {
            assert_eq!(parse_count(text), expected, "{text}");
        }
    }

    #[test]
    fn picks_and_usage() {
        let stdout = "banner\n\nfirst part\n\nThe answer.\nTokens: 2.4k sent, 40 received. Cost: $0.01 message, $0.02 session.\nTokens: 100 sent, 10 received.";
        let rules = |result, marker: Option<&str>, pattern: Option<&str>| {
            OutputRules {
            result: Some(result),
            marker: marker.map(str::to_owned),
            pattern: pattern.map(str::to_owned),
            usage_pattern: Some(r"^Tokens: (?P<input>[\d.,]+[kM]?) sent, (?P<output>[\d.,]+[kM]?) received\.(?: Cost: \$(?P<cost>[\d.]+) message)?".into()),
            usage_combine: None,
            format: None,
        }
        };
        let read = OutputReader::new(&rules(ResultPick::LastBlock, None, None)).unwrap().read(stdout).unwrap();
        assert_eq!(read.answer, "The answer.");
        assert_eq!(read.usage, Some(Usage::new(2_500, 50)), "summed over the lines");
        assert_eq!(read.cost, Some(0.01));
        let all = OutputReader::new(&rules(ResultPick::All, None, None)).unwrap().read(stdout).unwrap();
        assert_eq!(all.answer, "banner\n\nfirst part\n\nThe answer.", "usage lines are left out");
        let after =
            OutputReader::new(&rules(ResultPick::AfterMarker, Some("banner"), None)).unwrap().read(stdout).unwrap();
        assert_eq!(after.answer, "first part\n\nThe answer.");
        let regex = OutputReader::new(&rules(ResultPick::Regex, None, Some(r"(?s)first (?P<result>part)")))
            .unwrap()
            .read(stdout)
            .unwrap();
        assert_eq!(regex.answer, "part");
        let last = OutputReader::new(&OutputRules {
            usage_pattern: Some(r"Input tokens: (?P<input>[\d,]+) \| Output tokens: (?P<output>[\d,]+)".into()),
            usage_combine: Some(UsageCombine::Last),
            ..OutputRules::default()
        })
        .unwrap()
        .read("[Step 1| Input tokens: 900 | Output tokens: 10]\n[Step 2| Input tokens: 2,000 | Output tokens: 45]\nok")
        .unwrap();
        assert_eq!((last.answer.as_str(), last.usage), ("ok", Some(Usage::new(2_000, 45))), "the last total");
        let missing = OutputReader::new(&rules(ResultPick::AfterMarker, Some("no such marker"), None)).unwrap();
        assert!(missing.read(stdout).unwrap_err().contains("no such marker"), "a missing answer is an error");
        assert!(OutputReader::new(&OutputRules { result: Some(ResultPick::Regex), ..OutputRules::default() }).is_err());
        assert!(OutputReader::new(&OutputRules { usage_pattern: Some("(".into()), ..OutputRules::default() })
            .unwrap_err()
            .contains("output.usage_pattern"));
    }
}
