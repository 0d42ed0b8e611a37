//! Connections, bounded: so many open at once, headers read within a time
//! limit (which also closes idle kept-alive connections), answers that the
//! client stops reading cut, and a graceful shutdown with a deadline.

use crate::config::ServerConfig;
use crate::stall::StallLimit;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Serves `router` on `listener` over HTTP/1.1 until `shutdown` resolves,
/// then waits for the connections open then to finish their answers.
///
/// `axum::serve` reads headers without a time limit and accepts without a
/// bound, so 2,000 half-sent requests held 2,000 descriptors; here a
/// connection waits for a free place before it is accepted, and one whose
/// client has not sent a full request head in `header_read_timeout` closes.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    config: &ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let places = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let send_timeout = config.send_timeout.max(Duration::from_millis(1));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(config.header_read_timeout.max(Duration::from_millis(1)))
        .keep_alive(true)
        .max_headers(100);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let place = tokio::select! {
            p = places.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of descriptors or a connection reset before it was
                    // taken: wait a little rather than spin.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let io = TokioIo::new(StallLimit::new(stream, send_timeout));
        let conn = graceful.watch(http.serve_connection(io, service));
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(place);
        });
    }
    drop(listener);
    // Answers in flight get a request's time to finish; a client that keeps
    // its connection open past that does not keep the server running.
    let limit = config.request_timeout.max(Duration::from_secs(1));
    if tokio::time::timeout(limit, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            "connections still open after {} s: closing them",
            limit.as_secs()
        );
    }
    Ok(())
}
