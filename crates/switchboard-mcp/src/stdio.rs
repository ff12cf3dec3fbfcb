//! Serving over stdio: one client, JSON-RPC lines on stdin and stdout (logs go to
//! stderr). Returns when the client closes stdin or `shutdown` is cancelled.

use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;

use crate::McpServer;

/// Serves `server` on this process's stdin and stdout until the client leaves.
pub async fn serve(server: McpServer, shutdown: CancellationToken) -> Result<(), String> {
    let running = server
        .serve_with_ct(rmcp::transport::stdio(), shutdown)
        .await
        .map_err(|error| format!("the MCP client did not complete the handshake: {error}"))?;
    running.waiting().await.map(|_| ()).map_err(|error| format!("the MCP session failed: {error}"))
}
