//! The `mcp` provider's client side of progress: the client handler (its
//! identity; progress is routed where it is read, in `mcp_transport.rs`) and how a
//! call's notifications go out as deltas, in the order they came: a nested
//! Switchboard's root text as text, the rest as progress lines with their event
//! as data.

use std::sync::{Arc, Mutex};

use rmcp::model::{ClientConfig, Implementation, ProgressNotificationParam, ProgressToken};
use rmcp::ClientHandler;

use super::transport::Routes;
use crate::contract::{DeltaSink, ModelDelta};
use crate::event::{CallEvent, EventKind};
use crate::truncate;

/// The `_meta` key a Switchboard MCP server puts each event under.
pub(super) const EVENT_META_KEY: &str = "switchboard/event";

/// The client side of a connection; `tasks`: it declares the tasks extension.
#[derive(Clone)]
pub(super) struct Client {
    pub tasks: bool,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("switchboard", env!("CARGO_PKG_VERSION"));
        if self.tasks {
            let extension = (rmcp::model::TASKS_EXTENSION_ID.to_string(), rmcp::model::JsonObject::new());
            info.capabilities.extensions = Some(std::iter::once(extension).collect());
        }
        info
    }
}

/// One progress notification as a delta: a nested Switchboard's root text streams
/// as text; everything else is a progress line (its event, if any, as data).
/// The streamed text is kept up to `limit` bytes (the answer when the result has
/// no text of its own).
pub(super) fn forward(
    notification: ProgressNotificationParam,
    on_delta: DeltaSink<'_>,
    streamed: &mut String,
    limit: usize,
) {
    let event = notification
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(EVENT_META_KEY))
        .and_then(|event| serde_json::from_value::<CallEvent>(event.clone()).ok());
    if let Some(CallEvent { parent_id: None, kind: EventKind::TextDelta { text }, .. }) = &event {
        // What is shown (and logged) is what is kept: past `limit`, a peer's text
        // goes nowhere, however much more it sends.
        if streamed.len() + text.len() <= limit {
            streamed.push_str(text);
            on_delta(ModelDelta::Text(text.clone()));
        } else if streamed.len() <= limit {
            // Full: the rest is dropped, and the answer says so (past `limit`, so
            // nothing more is added after the note).
            let mut cut = limit - streamed.len();
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let kept = format!("{}{}", &text[..cut], crate::cut_note(limit, None));
            streamed.push_str(&kept);
            on_delta(ModelDelta::Text(kept));
        }
        return;
    }
    let message = notification.message.clone().unwrap_or_else(|| match notification.total {
        Some(total) => format!("{} of {total}", notification.progress),
        None => format!("progress {}", notification.progress),
    });
    let data = match event {
        Some(event) => serde_json::to_value(event).ok(),
        None => Some(serde_json::json!({ "progress": notification.progress, "total": notification.total })),
    };
    on_delta(ModelDelta::Progress { message: truncate(&message, 500), data });
}

/// Forgets a call's progress route when the call ends.
pub(super) struct RouteGuard {
    pub routes: Arc<Mutex<Routes>>,
    pub token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().unwrap().release(&self.token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nested Switchboard's root text, as a peer sends it in `_meta`.
    fn text_notification(text: &str) -> ProgressNotificationParam {
        let event = serde_json::json!({
            "seq": 1, "ts_ms": 0, "call_id": "c1", "parent_id": null, "agent": "a", "depth": 0,
            "type": "text_delta", "text": text,
        });
        serde_json::from_value(
            serde_json::json!({ "progressToken": 1, "progress": 1, "_meta": { EVENT_META_KEY: event } }),
        )
        .unwrap()
    }

    #[test]
    fn a_peers_text_past_the_limit_is_neither_kept_nor_shown() {
        let mut shown = 0usize;
        let mut on_delta = |delta: ModelDelta| {
            if let ModelDelta::Text(text) = delta {
                shown += text.len();
            }
        };
        let mut streamed = String::new();
        let flood = "x".repeat(1 << 20);
        for _ in 0..50 {
            forward(text_notification(&flood), &mut on_delta, &mut streamed, 10_000);
        }
        assert!(shown < 11_000 && streamed.len() < 11_000, "shown {shown}, kept {}", streamed.len());
        assert!(streamed.ends_with("the rest was dropped]"), "{}", &streamed[streamed.len() - 80..]);
    }
}
