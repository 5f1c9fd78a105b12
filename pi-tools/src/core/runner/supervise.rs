//! How the runner watches one executing call: the timeout, the cancellation token, and the
//! grace a cancelled tool gets to wind down before the runner stops waiting for it.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// How a watched call ended.
pub(super) enum Supervised<T> {
    /// It returned on its own (or within the grace after a cancellation).
    Done(T),
    /// The timeout passed; the output, if the tool returned within the grace.
    TimedOut(Duration, Option<T>),
    /// It was cancelled and did not return within the grace.
    Abandoned,
}

/// Awaits the tool, enforcing `timeout` and giving a cancelled tool `grace` to return
/// before giving up on it.
pub(super) async fn supervise<F: Future + Unpin>(
    mut run: F,
    token: &CancellationToken,
    timeout: Option<Duration>,
    grace: Duration,
) -> Supervised<F::Output> {
    let timed_out_after = match timeout {
        None => tokio::select! {
            biased;
            out = &mut run => return Supervised::Done(out),
            _ = token.cancelled() => None,
        },
        Some(after) => {
            // Boxed: a timer is large, and only calls with a timeout carry one.
            let expired = Box::pin(tokio::time::sleep(after));
            tokio::select! {
                biased;
                out = &mut run => return Supervised::Done(out),
                _ = token.cancelled() => None,
                _ = expired => Some(after),
            }
        }
    };
    // Boxed for the same reason: winding down is the rare path.
    Box::pin(wind_down(run, token, timed_out_after, grace)).await
}

/// After a timeout (`timed_out_after`) or a cancellation: waits up to `grace` for the tool
/// to return.
async fn wind_down<F: Future + Unpin>(
    mut run: F,
    token: &CancellationToken,
    timed_out_after: Option<Duration>,
    grace: Duration,
) -> Supervised<F::Output> {
    if let Some(after) = timed_out_after {
        token.cancel();
        let partial = tokio::time::timeout(grace, &mut run).await.ok();
        return Supervised::TimedOut(after, partial);
    }
    match tokio::time::timeout(grace, &mut run).await {
        Ok(out) => Supervised::Done(out),
        Err(_) => Supervised::Abandoned,
    }
}
