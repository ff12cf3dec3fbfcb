//! The notice a dropped call sends its MCP server (`notifications/cancelled`, or
//! `tasks/cancel` for a task), so the server ends the work too.

use std::sync::Arc;
use std::time::Duration;

use crate::registry::Registry;

/// A notice sent to the server when a call is dropped before it ended
/// (`notifications/cancelled`, or `tasks/cancel` for a task): armed with the
/// notice, disarmed once the call has its answer. The notice is built at once and
/// runs only if the guard drops armed.
pub(super) struct CancelOnDrop {
    notice: Option<futures::future::BoxFuture<'static, ()>>,
    /// Where the notice on its way is kept, so a shell's `shutdown` lets it go out.
    registry: Arc<Registry>,
}

impl CancelOnDrop {
    pub(super) fn new(
        registry: &Arc<Registry>,
        notice: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> CancelOnDrop {
        CancelOnDrop { notice: Some(Box::pin(notice)), registry: registry.clone() }
    }

    /// The call ended: nothing to cancel.
    pub(super) fn disarm(&mut self) {
        self.notice = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(notice) = self.notice.take() else { return };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let sending = runtime.spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), notice).await;
            });
            self.registry.cancel_sent_by_task(sending);
        }
    }
}
