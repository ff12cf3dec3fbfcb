//! The remote family: agents reached over a protocol, run as a whole by their
//! server. `mcp` calls one tool of an MCP server (over stdio or streamable HTTP)
//! with its progress notifications; `a2a` sends a message to an A2A agent and
//! follows its task (card, streamed or polled status, input-required, cancel).

pub mod a2a;
pub mod mcp;
