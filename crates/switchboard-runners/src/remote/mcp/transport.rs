//! The `mcp` provider's transports, as the SDK's (stdio lines, streamable HTTP)
//! with two things added where messages are read:
//!
//! - **Progress is routed as it is read**, in the order it came, before the
//!   service loop sees the answer that follows it: a call that has its answer has
//!   every notification sent before it, so no call waits to put them in order.
//!   Progress for a token no call of ours asked with is dropped.
//! - **A message over the cap is a "too large" error at once**: the SDK drops a
//!   line longer than its limit and waits for an answer that never comes; the
//!   stdio reader here counts each line's bytes and tells the calls waiting.

use std::borrow::Cow;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::model::{
    ClientRequest, GetMeta, JsonRpcMessage, NotificationMetaObject, ProgressNotificationParam, ProgressToken,
    ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::{mpsc, watch};

/// Early notifications kept for one call before it claims its route.
const EARLY_PER_CALL: usize = 64;
/// Calls whose route may be waiting to be claimed at once.
const UNCLAIMED_CALLS: usize = 1024;

/// Progress notifications by token: the calls' routes, and the tokens of calls
/// sent but not yet claimed, with what came for them meanwhile.
#[derive(Default)]
pub(super) struct Routes {
    calls: HashMap<ProgressToken, mpsc::UnboundedSender<ProgressNotificationParam>>,
    unclaimed: HashMap<ProgressToken, Vec<ProgressNotificationParam>>,
    /// Tokens of calls that claimed their route before the transport saw their
    /// request go out.
    claimed_first: std::collections::HashSet<ProgressToken>,
    /// Tokens of calls that ended before their request went out: `asked` must not
    /// open a route for them that no one would close.
    released: std::collections::HashSet<ProgressToken>,
}

impl Routes {
    /// A `tools/call` of ours went out with `token`.
    fn asked(&mut self, token: ProgressToken) {
        if self.claimed_first.remove(&token) || self.released.remove(&token) {
            return;
        }
        if self.unclaimed.len() < UNCLAIMED_CALLS {
            self.unclaimed.entry(token).or_default();
        }
    }

    /// Where a notification goes: its call, or the call that has not claimed its
    /// route yet; a token nobody asked with is dropped.
    fn route(&mut self, notification: ProgressNotificationParam) {
        if let Some(sender) = self.calls.get(&notification.progress_token) {
            let _ = sender.send(notification);
        } else if let Some(early) = self.unclaimed.get_mut(&notification.progress_token) {
            if early.len() < EARLY_PER_CALL {
                early.push(notification);
            }
        }
    }

    /// The call with `token` takes its notifications from now on (those that came
    /// early first).
    pub(super) fn claim(&mut self, token: &ProgressToken, sender: mpsc::UnboundedSender<ProgressNotificationParam>) {
        match self.unclaimed.remove(token) {
            Some(early) => early.into_iter().for_each(|notification| drop(sender.send(notification))),
            None if self.claimed_first.len() < UNCLAIMED_CALLS => drop(self.claimed_first.insert(token.clone())),
            None => {}
        }
        self.calls.insert(token.clone(), sender);
    }

    /// The call with `token` ended: what comes for it later is dropped.
    pub(super) fn release(&mut self, token: &ProgressToken) {
        self.calls.remove(token);
        self.unclaimed.remove(token);
        // Released before the transport saw its request go: remembered so that
        // request opens no route.
        if self.claimed_first.remove(token) && self.released.len() < UNCLAIMED_CALLS {
            self.released.insert(token.clone());
        }
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.calls.len()
            + self.unclaimed.values().map(|early| early.len() + 1).sum::<usize>()
            + self.claimed_first.len()
            + self.released.len()
    }
}

/// Counts the messages that were over the cap (and dropped); calls watch it.
pub(super) type Oversized = watch::Sender<u64>;

/// A transport that routes progress as it reads it.
pub(super) struct Tapped<T> {
    pub inner: T,
    pub routes: Arc<Mutex<Routes>>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Tapped<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        "the MCP connection".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            if matches!(request.request, ClientRequest::CallToolRequest(_)) {
                if let Some(token) = request.request.get_meta().get_progress_token() {
                    self.routes.lock().unwrap().asked(token);
                }
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message {
            if let ServerNotification::ProgressNotification(progress) = &notification.notification {
                let mut params = progress.params.clone();
                // The SDK keeps a notification's `_meta` in its extensions (a nested
                // Switchboard's event is there).
                if params.meta.is_none() {
                    params.meta = progress.extensions.get::<NotificationMetaObject>().cloned();
                }
                self.routes.lock().unwrap().route(params);
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// A stdio server's output, its lines counted: a line longer than `limit` bumps
/// `oversized` (the SDK's reader, given the same limit, drops it).
pub(super) struct LineWatch<R> {
    pub inner: R,
    pub limit: usize,
    pub line: usize,
    pub oversized: Arc<Oversized>,
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buffer.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(context, buffer);
        if let Poll::Ready(Ok(())) = polled {
            let read = &buffer.filled()[before..];
            let (limit, mut line) = (self.limit, self.line);
            let mut bumped = false;
            for segment in read.split_inclusive(|byte| *byte == b'\n') {
                let was_under = line <= limit;
                line += segment.len();
                if was_under && line > limit {
                    bumped = true;
                }
                if segment.ends_with(b"\n") {
                    line = 0;
                }
            }
            self.line = line;
            if bumped {
                self.oversized.send_modify(|count| *count += 1);
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use tokio::io::AsyncReadExt;

    fn progress(token: i64, step: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(token)), step)
    }

    #[test]
    fn progress_reaches_its_call_and_unasked_tokens_are_dropped() {
        let mut routes = Routes::default();
        let token = ProgressToken(NumberOrString::Number(7));
        routes.asked(token.clone());
        routes.route(progress(7, 1.0)); // before the call claims its route
        for stranger in 0..10_000 {
            routes.route(progress(1000 + stranger, 1.0));
        }
        let (sender, mut receiver) = mpsc::unbounded_channel();
        routes.claim(&token, sender);
        routes.route(progress(7, 2.0));
        let got: Vec<f64> = std::iter::from_fn(|| receiver.try_recv().ok()).map(|n| n.progress).collect();
        assert_eq!(got, [1.0, 2.0]);
        routes.release(&token);
        routes.route(progress(7, 3.0));
        assert_eq!(routes.held(), 0, "nothing is kept for ended calls or strangers");
        // A call that claims its route, and ends, before its request goes out.
        let late = ProgressToken(NumberOrString::Number(8));
        let (sender, _receiver) = mpsc::unbounded_channel();
        routes.claim(&late, sender);
        routes.release(&late);
        routes.asked(late.clone());
        routes.route(progress(8, 1.0));
        assert_eq!(routes.held(), 0, "the late request opens no route");
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_counted_once_and_shorter_lines_are_not() {
        let (oversized, watcher) = watch::channel(0);
        let input: Vec<u8> = [&b"short\n"[..], &[b'x'; 100], b"\nok\n", &[b'y'; 50], b"\n"].concat();
        let mut reader = LineWatch { inner: &input[..], limit: 60, line: 0, oversized: Arc::new(oversized) };
        let mut sink = Vec::new();
        reader.read_to_end(&mut sink).await.unwrap();
        assert_eq!(sink, input);
        assert_eq!(*watcher.borrow(), 1);
    }
}
