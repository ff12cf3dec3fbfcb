//! The JSON-line readers of each agent CLI, on lines as those programs write them.
use super::*;

fn texts(deltas: &[ModelDelta]) -> Vec<String> {
    deltas
        .iter()
        .map(|delta| match delta {
            ModelDelta::Text(text) => format!("text {text}"),
            ModelDelta::Reasoning(text) => format!("thinking {text}"),
            ModelDelta::Progress { message, .. } => format!("progress {message}"),
            ModelDelta::InputRequired { question, .. } => format!("question {question}"),
            ModelDelta::Steered { message, .. } => format!("steered {message}"),
        })
        .collect()
}

#[test]
fn claude_stream_json_lines_become_text_progress_and_a_result() {
    let mut lines = EventLines::new(OutputFormat::ClaudeStreamJson);
    let stream = concat!(
        r#"{"type":"system","subtype":"init","model":"claude"}"#,
        "\n",
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Looking."},{"type":"tool_use","name":"Bash","input":{"command":"ls"}}]}}"#,
        "\n",
        "a warning that is not JSON\n",
        r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Two files."}]}}"#,
        "\n",
        r#"{"type":"result","subtype":"success","is_error":false,"result":"There are two files.","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_read_input_tokens":90,"output_tokens":7}}"#
    );
    // Split mid-line, as pipes do.
    let (first, second) = stream.split_at(70);
    let mut deltas = lines.push(first);
    deltas.extend(lines.push(second));
    assert_eq!(
        texts(&deltas),
        vec![
            r#"text Looking."#,
            r#"progress Bash: {"command":"ls"}"#,
            "progress a warning that is not JSON",
            "text Two files."
        ]
    );
    let read = lines.finish().unwrap();
    assert_eq!(
        (read.answer.as_str(), read.usage, read.cost),
        ("There are two files.", Some(Usage::new(100, 7)), Some(0.0123))
    );

    // A conversation on stdin: a result a message; the answer is the last, the
    // usage each turn's own summed, the cost Claude Code's running total.
    let mut conversation = EventLines::new(OutputFormat::ClaudeStreamJson);
    conversation.push(concat!(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"Digging.","total_cost_usd":0.015,"usage":{"input_tokens":2000,"output_tokens":100}}"#,
        "\n"
    ));
    assert_eq!(conversation.results(), 1);
    conversation.push(concat!(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"Summary.","total_cost_usd":0.0255,"usage":{"input_tokens":1000,"output_tokens":500}}"#,
        "\n"
    ));
    assert_eq!(conversation.results(), 2);
    let read = conversation.finish().unwrap();
    assert_eq!((read.answer.as_str(), read.usage, read.cost), ("Summary.", Some(Usage::new(3000, 600)), Some(0.0255)));

    let mut failed = EventLines::new(OutputFormat::ClaudeStreamJson);
    failed.push(r#"{"type":"result","is_error":true,"result":"credit balance too low"}"#);
    assert!(failed.finish().unwrap_err().contains("credit balance too low"));
    assert!(EventLines::new(OutputFormat::ClaudeStreamJson).finish().is_err(), "nothing at all is no answer");
}

#[test]
fn gemini_stream_json_lines_become_text_progress_usage_and_its_error() {
    let mut lines = EventLines::new(OutputFormat::GeminiStreamJson);
    let deltas = lines.push(concat!(
        r#"{"type":"init","session_id":"s","model":"gemini-2.5-flash"}"#,
        "\n",
        r#"{"type":"message","role":"user","content":"say hello"}"#,
        "\n",
        r#"{"type":"message","role":"assistant","content":"Answ","delta":true}"#,
        "\n",
        r#"{"type":"message","role":"assistant","content":"er.","delta":true}"#,
        "\n",
        r#"{"type":"tool_use","tool_name":"list_directory","tool_id":"list_directory__1","parameters":{"dir_path":"."}}"#,
        "\n",
        r#"{"type":"tool_result","tool_id":"run_shell_command__2","status":"error","error":{"type":"tool_not_registered","message":"Tool \"run_shell_command\" not found."}}"#,
        "\n",
        r#"{"type":"message","role":"assistant","content":"Done.","delta":true}"#,
        "\n",
        r#"{"type":"result","status":"success","stats":{"total_tokens":18,"input_tokens":11,"output_tokens":7,"cached":0,"input":11}}"#,
        "\n"
    ));
    assert_eq!(
        texts(&deltas),
        vec![
            "text Answ",
            "text er.",
            r#"progress list_directory: {"dir_path":"."}"#,
            r#"progress tool failed: Tool "run_shell_command" not found."#,
            "text Done."
        ]
    );
    let read = lines.finish().unwrap();
    assert_eq!((read.answer.as_str(), read.usage), ("Answer.\n\nDone.", Some(Usage::new(11, 7))));

    let mut failed = EventLines::new(OutputFormat::GeminiStreamJson);
    failed.push(concat!(
        r#"{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":400,\"message\":\"Bad request\",\"status\":\"invalid_request_error\"}}]"},"stats":{}}"#,
        "\n"
    ));
    assert_eq!(failed.failure_reason().unwrap(), "the agent reported an error: API Error 400: Bad request");
}

#[test]
fn qwen_reports_a_failed_model_call_as_a_result_and_it_is_read_as_a_failure() {
    let mut lines = EventLines::new(OutputFormat::ClaudeStreamJson);
    lines.push(r#"{"type":"result","subtype":"success","is_error":false,"result":"[API Error: 400 Simulated bad request]","usage":{"input_tokens":0,"output_tokens":0}}"#);
    assert!(lines.finish().unwrap_err().contains("[API Error: 400 Simulated bad request]"));
    let mut limited = EventLines::new(OutputFormat::ClaudeStreamJson);
    limited.push(r#"{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["Reached maximum number of turns (1)"]}"#);
    assert!(
        limited.failure_reason().unwrap().contains("Reached maximum number of turns (1)"),
        "errors when result is absent"
    );
}

#[test]
fn codex_json_lines_become_text_progress_and_usage() {
    let mut lines = EventLines::new(OutputFormat::CodexJson);
    let deltas = lines.push(concat!(
        r#"{"type":"thread.started","thread_id":"t"}"#,
        "\n",
        r#"{"type":"item.started","item":{"id":"1","type":"command_execution","command":"cargo test"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"2","type":"agent_message","text":"All tests pass."}}"#,
        "\n",
        r#"{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":1000,"output_tokens":30}}"#,
        "\n"
    ));
    assert_eq!(texts(&deltas), vec!["progress cargo test", "text All tests pass."]);
    let read = lines.finish().unwrap();
    assert_eq!((read.answer.as_str(), read.usage), ("All tests pass.", Some(Usage::new(1200, 30))));
    let mut failed = EventLines::new(OutputFormat::CodexJson);
    failed.push("{\"type\":\"turn.failed\",\"error\":{\"message\":\"stream error\"}}\n");
    assert!(failed.finish().unwrap_err().contains("stream error"));
    // A retry notice first, then the cause, a server's error body inside.
    let mut retried = EventLines::new(OutputFormat::CodexJson);
    retried.push(concat!(
        r#"{"type":"error","message":"Reconnecting... 1/1"}"#,
        "\n",
        r#"{"type":"turn.failed","error":{"message":"{\"error\":{\"message\":\"Bad request\",\"type\":\"invalid_request_error\"}}"}}"#,
        "\n"
    ));
    assert_eq!(retried.failure_reason().unwrap(), "the agent reported an error: Bad request");
}
