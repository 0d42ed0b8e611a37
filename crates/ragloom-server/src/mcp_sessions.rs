//! MCP sessions, bounded: at most so many kept, the one idle longest ended
//! to make room, and each ended after a while unused.

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// rmcp's in-process sessions with a cap on how many live at once. Each
/// session costs about 100 KB, so without a cap a client that only sends
/// `initialize` grows the server without end.
#[derive(Debug)]
pub(crate) struct CappedSessions {
    inner: LocalSessionManager,
    /// When each session was last used.
    used: Mutex<HashMap<SessionId, Instant>>,
    max: usize,
    idle: Duration,
}

impl CappedSessions {
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        let mut config = SessionConfig::default();
        config.keep_alive = Some(idle);
        inner.session_config = config;
        Self {
            inner,
            used: Mutex::new(HashMap::new()),
            max: max.max(1),
            idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(t) = self.lock().get_mut(id) {
            *t = Instant::now();
        }
    }

    /// Sessions to end before one more fits: those past their idle time
    /// (rmcp ends them itself; this forgets them), then the idle longest.
    fn to_end(&self) -> Vec<SessionId> {
        let mut used = self.lock();
        let idle = self.idle;
        used.retain(|_, t| t.elapsed() < idle);
        let mut ended = Vec::new();
        while used.len() >= self.max {
            let Some(oldest) = used
                .iter()
                .min_by_key(|(_, t)| **t)
                .map(|(id, _)| id.clone())
            else {
                break;
            };
            used.remove(&oldest);
            ended.push(oldest);
        }
        ended
    }

    /// Sessions kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        for id in self.to_end() {
            tracing::debug!(session = %id, "ending the MCP session idle longest to make room");
            // It may have ended already (its idle time or its client).
            let _ = self.inner.close_session(&id).await;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.lock().insert(id.clone(), Instant::now());
        Ok((id, transport))
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
        self.lock().remove(id);
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

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn past_the_cap_the_session_idle_longest_ends() {
        let sessions = CappedSessions::new(3, Duration::from_secs(60));
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(sessions.create_session().await.unwrap().0);
        }
        // The first is used again, so the second is now the idle longest.
        std::thread::sleep(Duration::from_millis(5));
        sessions.touch(&ids[0]);
        let (fourth, _) = sessions.create_session().await.unwrap();
        assert_eq!(sessions.len(), 3);
        assert!(sessions.has_session(&ids[0]).await.unwrap());
        assert!(!sessions.has_session(&ids[1]).await.unwrap());
        assert!(sessions.has_session(&ids[2]).await.unwrap());
        assert!(sessions.has_session(&fourth).await.unwrap());
        for _ in 0..50 {
            sessions.create_session().await.unwrap();
        }
        assert_eq!(sessions.len(), 3);
        assert_eq!(sessions.inner.sessions.read().await.len(), 3);
    }
}
