//! Whatever runs a tool (an agent run, a server request) can lend the tool
//! its context for the call; a tool reads it without a parameter for it.

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

/// The lent value: type-erased, so this layer need not know who lends it.
pub type CallContext = Arc<dyn Any + Send + Sync>;

tokio::task_local! {
    static CALL_CONTEXT: CallContext;
}

/// The context lent to the tool call in progress on this task or thread, if any.
pub fn call_context() -> Option<CallContext> {
    CALL_CONTEXT.try_with(Arc::clone).ok()
}

/// Runs `fut` (a tool call) with `ctx` lent to it.
pub async fn with_call_context<F: Future>(ctx: CallContext, fut: F) -> F::Output {
    CALL_CONTEXT.scope(ctx, fut).await
}

/// Runs the blocking `f` with `ctx`, if any, lent to it: what a tool that
/// moves its work to another thread uses to keep the context.
pub(crate) fn with_call_context_sync<R>(ctx: Option<CallContext>, f: impl FnOnce() -> R) -> R {
    match ctx {
        Some(ctx) => CALL_CONTEXT.sync_scope(ctx, f),
        None => f(),
    }
}
