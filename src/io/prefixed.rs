//! A stream that first yields bytes already read from it (the sniffed start of a connection).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, ReadBuf};

/// Reads `prefix` first, then `inner`; writes go straight to `inner`.
pub(crate) struct Prefixed<S> {
    prefix: Bytes,
    inner: S,
}

impl<S> Prefixed<S> {
    pub(crate) fn new(prefix: Bytes, inner: S) -> Self {
        Prefixed { prefix, inner }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.prefix.has_remaining() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

write_through!(Prefixed);

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn yields_the_prefix_then_the_stream_and_writes_through() {
        let (ours, mut theirs) = tokio::io::duplex(64);
        let mut stream = Prefixed::new(Bytes::from_static(b"PRI "), ours);
        theirs.write_all(b"* HTTP/2.0").await.unwrap();
        drop(theirs.shutdown().await);
        let mut first = [0u8; 2];
        stream.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"PR", "a short read takes part of the prefix");
        let mut rest = String::new();
        let mut read = vec![0u8; 64];
        loop {
            let n = stream.read(&mut read).await.unwrap();
            if n == 0 {
                break;
            }
            rest.push_str(std::str::from_utf8(&read[..n]).unwrap());
        }
        assert_eq!(rest, "I * HTTP/2.0");
    }
}
