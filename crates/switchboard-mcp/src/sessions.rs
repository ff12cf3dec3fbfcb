//! The HTTP endpoint's sessions: the SDK's in-memory session manager, with a cap.
//! A session silent for `idle` (the SDK's keep-alive: a running call's progress
//! and keep-alive notifications count as activity) ends; past `cap` sessions,
//! the oldest is closed to make room, so a client that opens sessions and never
//! closes them holds a bounded amount of memory.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::SessionManager;

/// How long a silent session lives, unless the shell says otherwise.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(15 * 60);
/// How many sessions are kept at once, unless the shell says otherwise.
pub const DEFAULT_CAP: usize = 256;

pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    /// Session ids, the longest unused first.
    order: Mutex<VecDeque<SessionId>>,
    cap: usize,
}

impl CappedSessions {
    pub(crate) fn new(inner: LocalSessionManager, cap: usize) -> CappedSessions {
        CappedSessions { inner, order: Mutex::new(VecDeque::new()), cap: cap.max(1) }
    }

    /// `id` was used: it moves to the back, the last to be closed for room.
    fn touch(&self, id: &SessionId) {
        let mut order = self.order.lock().unwrap();
        if let Some(position) = order.iter().position(|kept| kept == id) {
            if let Some(kept) = order.remove(position) {
                order.push_back(kept);
            }
        }
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let created = self.inner.create_session().await?;
        let evicted = {
            let mut order = self.order.lock().unwrap();
            order.push_back(created.0.clone());
            if order.len() > self.cap {
                order.pop_front()
            } else {
                None
            }
        };
        if let Some(oldest) = evicted {
            let _ = self.inner.close_session(&oldest).await;
        }
        Ok(created)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.order.lock().unwrap().retain(|kept| kept != id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}
