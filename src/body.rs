//! Response bodies: shared bytes handed to hyper in small chunks, each of which keeps its
//! connection's count of unsent bytes until it is written or dropped.
//!
//! A rendered page is one `Bytes` shared by every answer that carries it. hyper waits for
//! flow-control room before it asks a body for its next chunk, but then hands the whole chunk
//! to HTTP/2's send buffer: a body of one chunk would sit there whole behind a closed window.
//! Chunks of [`CHUNK_BYTES`] bound what a stream buffers beyond its window, and since each
//! chunk carries the connection's [`Unsent`] charge, the charge ends only when the last byte
//! of the answer has left (or its stream was dropped), not when hyper took the last chunk.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Frame, SizeHint};

/// How much of a body hyper gets at a time: HTTP/2's default frame size, so a chunk is one
/// DATA frame, and a typical page (12 KB as it is, 4 KB compressed) is one chunk. Smaller
/// chunks cost a write per chunk: with 8 KiB, HTTP/2 flushed twice per page and served a
/// third fewer requests.
pub(crate) const CHUNK_BYTES: usize = 16 * 1024;

/// The bytes of answers a connection has been given and has not yet written out, with the
/// most it may hold. Shared by the connection's answers; each answer's charge is released
/// when its last chunk is dropped.
#[derive(Debug)]
pub struct Unsent {
    bytes: AtomicUsize,
    limit: usize,
}

impl Unsent {
    /// A counter for one connection that holds at most `limit` unsent bytes.
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(Unsent {
            bytes: AtomicUsize::new(0),
            limit,
        })
    }

    /// Bytes charged now.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Relaxed)
    }

    /// Charges `bytes` if they fit under the limit. A connection with nothing charged always
    /// gets its answer, however large: the limit bounds what piles up, not one page.
    fn try_charge(self: &Arc<Self>, bytes: usize) -> Option<Charge> {
        let mut current = self.bytes.load(Relaxed);
        loop {
            if current > 0 && current.saturating_add(bytes) > self.limit {
                return None;
            }
            match self
                .bytes
                .compare_exchange_weak(current, current + bytes, Relaxed, Relaxed)
            {
                Ok(_) => {
                    return Some(Charge {
                        unsent: self.clone(),
                        bytes,
                    });
                }
                Err(now) => current = now,
            }
        }
    }
}

/// One answer's share of [`Unsent`]; released when dropped.
#[derive(Debug)]
struct Charge {
    unsent: Arc<Unsent>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.unsent.bytes.fetch_sub(self.bytes, Relaxed);
    }
}

/// A response body: bytes, handed out in chunks.
#[derive(Debug, Default)]
pub struct Body {
    rest: Bytes,
    /// What the answer keeps alive besides its body (a page's policy header), charged with it.
    also_holds: usize,
    charge: Option<Arc<Charge>>,
}

impl Body {
    /// A body of these bytes, charged to no connection yet.
    pub fn new(bytes: Bytes) -> Self {
        Body {
            rest: bytes,
            also_holds: 0,
            charge: None,
        }
    }

    /// Its bytes, for an answer that is read here rather than sent (the `relay` command).
    pub(crate) fn into_bytes(self) -> Bytes {
        self.rest
    }

    /// The same body, charged as if it also held `bytes` more.
    pub(crate) fn also_holding(mut self, bytes: usize) -> Self {
        self.also_holds = bytes;
        self
    }

    /// Charges this body to `unsent`; gives it back uncharged if it does not fit.
    pub(crate) fn charge_to(mut self, unsent: &Arc<Unsent>) -> Result<Body, Body> {
        if self.rest.is_empty() {
            return Ok(self);
        }
        match unsent.try_charge(self.rest.len() + self.also_holds) {
            Some(charge) => {
                self.charge = Some(Arc::new(charge));
                Ok(self)
            }
            None => Err(self),
        }
    }
}

/// A piece of a body; holds its answer's charge until written or dropped.
#[derive(Debug)]
pub struct Chunk {
    bytes: Bytes,
    _charge: Option<Arc<Charge>>,
}

impl Buf for Chunk {
    fn remaining(&self) -> usize {
        self.bytes.remaining()
    }

    fn chunk(&self) -> &[u8] {
        self.bytes.chunk()
    }

    fn advance(&mut self, cnt: usize) {
        self.bytes.advance(cnt);
    }
}

impl http_body::Body for Body {
    type Data = Chunk;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunk>, Infallible>>> {
        if self.rest.is_empty() {
            return Poll::Ready(None);
        }
        let n = self.rest.len().min(CHUNK_BYTES);
        let chunk = Chunk {
            bytes: self.rest.split_to(n),
            _charge: self.charge.clone(),
        };
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.rest.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn chunks_carry_the_charge_until_the_last_is_gone() {
        let unsent = Unsent::new(100_000);
        let body = Body::new(Bytes::from(vec![7u8; 40_000]))
            .charge_to(&unsent)
            .unwrap();
        assert_eq!(unsent.bytes(), 40_000);
        let mut body = Box::pin(body);
        let mut chunks = Vec::new();
        while let Some(frame) = body.frame().await {
            chunks.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(
            chunks.iter().map(Buf::remaining).collect::<Vec<_>>(),
            [16_384, 16_384, 7_232]
        );
        drop(body);
        assert_eq!(unsent.bytes(), 40_000, "the chunks are not written yet");
        chunks.truncate(1);
        assert_eq!(unsent.bytes(), 40_000);
        drop(chunks);
        assert_eq!(unsent.bytes(), 0);
    }

    #[test]
    fn a_full_connection_refuses_more_but_never_its_first_answer() {
        let unsent = Unsent::new(1_000);
        let big = Body::new(Bytes::from(vec![0u8; 5_000])).charge_to(&unsent);
        assert!(big.is_ok(), "the first answer fits whatever its size");
        let next = Body::new(Bytes::from_static(b"x")).charge_to(&unsent);
        assert!(next.is_err(), "nothing more while it is unsent");
        drop(big);
        assert_eq!(unsent.bytes(), 0);
        assert!(
            Body::new(Bytes::from_static(b"x"))
                .charge_to(&unsent)
                .is_ok()
        );
    }
}
