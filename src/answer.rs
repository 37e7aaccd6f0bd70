//! What a handler gives a connection: an answer ready at once or once a body is read, and what
//! the requests of one connection share.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::Response;

use crate::body::{Body, Unsent};
use crate::io::activity::Activity;
use crate::reports::ConnectionReports;

/// What the requests of one connection share: the answers its client has not read yet, and
/// the reports it sent.
#[derive(Debug)]
pub(crate) struct PerConnection {
    pub(crate) unsent: Arc<Unsent>,
    pub(crate) reports: Arc<ConnectionReports>,
}

impl PerConnection {
    pub(crate) fn new(max_unsent_bytes: usize) -> Self {
        PerConnection {
            unsent: Unsent::new(max_unsent_bytes),
            reports: Arc::default(),
        }
    }
}

/// A handler's answer: ready at once (every page, every error), or once the request's body is
/// read (a report). `Unpin`, as an HTTP/1 connection at rest needs its service's futures to be.
pub(crate) enum Answer {
    Ready(Option<Response<Body>>),
    Reading(Pin<Box<dyn Future<Output = Response<Body>> + Send>>),
}

impl Answer {
    pub(crate) fn ready(response: Response<Body>) -> Self {
        Answer::Ready(Some(response))
    }

    /// The same answer, holding `activity` out of idleness until it resolves: an HTTP/1
    /// connection whose report body is still read must not rest (see `connection::h1`).
    pub(crate) fn keeping_busy(self, activity: &Arc<Activity>) -> Self {
        match self {
            Answer::Reading(reading) => {
                let pending = activity.answer_pending();
                Answer::Reading(Box::pin(async move {
                    let response = reading.await;
                    drop(pending);
                    response
                }))
            }
            ready => ready,
        }
    }
}

impl Future for Answer {
    type Output = Result<Response<Body>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.get_mut() {
            // A ready answer is polled once: hyper never polls a finished future again.
            Answer::Ready(response) => Poll::Ready(Ok(response
                .take()
                .unwrap_or_else(|| Response::new(Body::new(bytes::Bytes::new()))))),
            Answer::Reading(reading) => reading.as_mut().poll(cx).map(Ok),
        }
    }
}
