//! The `mcp` provider's client side of progress: the SDK's client handler routes
//! each progress notification to its call by token (those that arrive before the
//! call is registered wait), and a call's notifications go out as deltas in
//! progress order (the SDK hands each to a task of its own, so they can arrive
//! out of order): a nested Switchboard's root text as text, the rest as progress
//! lines with their event as data.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ClientConfig, Implementation, NotificationMetaObject, ProgressNotificationParam, ProgressToken};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc;

use super::{truncate, DeltaSink, ModelDelta};
use crate::event::{CallEvent, EventKind};

/// How long progress notifications wait to be put back in order.
pub(super) const REORDER_WINDOW: Duration = Duration::from_millis(15);
/// The `_meta` key a Switchboard MCP server puts each event under.
pub(super) const EVENT_META_KEY: &str = "switchboard/event";

/// Progress notifications by token; those that arrive before their call is
/// registered wait in `early`.
#[derive(Default)]
pub(super) struct Routes {
    pub calls: HashMap<ProgressToken, mpsc::UnboundedSender<ProgressNotificationParam>>,
    pub early: HashMap<ProgressToken, Vec<ProgressNotificationParam>>,
}

#[derive(Clone)]
pub(super) struct Client {
    pub routes: Arc<Mutex<Routes>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.client_info = Implementation::new("switchboard", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn on_progress(&self, mut params: ProgressNotificationParam, context: NotificationContext<RoleClient>) {
        // rmcp 3.11 hands a notification's `_meta` over inside the context's
        // extensions (its `meta` field stays empty); a nested Switchboard's event is there.
        if params.meta.is_none() {
            params.meta = context
                .extensions
                .get::<NotificationMetaObject>()
                .cloned()
                .or_else(|| (!context.meta.0.is_empty()).then_some(context.meta));
        }
        let mut routes = self.routes.lock().unwrap();
        match routes.calls.get(&params.progress_token) {
            Some(sender) => drop(sender.send(params)),
            None => {
                let early = routes.early.entry(params.progress_token.clone()).or_default();
                if early.len() < 64 {
                    early.push(params);
                }
            }
        }
    }
}

/// Sends what waits, in progress order.
pub(super) fn forward_sorted(
    waiting: &mut Vec<ProgressNotificationParam>,
    on_delta: DeltaSink<'_>,
    streamed: &mut String,
) {
    waiting.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    for notification in waiting.drain(..) {
        forward(notification, on_delta, streamed);
    }
}

/// One progress notification as a delta: a nested Switchboard's root text streams
/// as text; everything else is a progress line (its event, if any, as data).
fn forward(notification: ProgressNotificationParam, on_delta: DeltaSink<'_>, streamed: &mut String) {
    let event = notification
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(EVENT_META_KEY))
        .and_then(|event| serde_json::from_value::<CallEvent>(event.clone()).ok());
    if let Some(CallEvent { parent_id: None, kind: EventKind::TextDelta { text }, .. }) = &event {
        streamed.push_str(text);
        on_delta(ModelDelta::Text(text.clone()));
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
        let mut routes = self.routes.lock().unwrap();
        routes.calls.remove(&self.token);
        routes.early.remove(&self.token);
    }
}
