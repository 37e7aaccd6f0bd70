//! The lingering close: after a connection's last answer, what the client still sends is read
//! and dropped for a while before the socket closes.
//!
//! Closing a TCP socket with bytes unread, or with bytes still arriving, makes the kernel send
//! a reset, and a reset can destroy the answer on its way to the client (it discards what the
//! client has received and not yet read). A client that sent more than the service reads (a
//! pipelined request behind a refused one, the rest of a body answered before it was read) is
//! the one that must still see why its connection ends. So such a connection, its write side
//! shut, reads until the client closes too, within `LINGER_TIME` and `MAX_DISCARD`
//! (nginx's `lingering_close` does the same, for the same reason).

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// The longest a closing connection reads for its client to close.
const LINGER_TIME: Duration = Duration::from_secs(2);

/// The most a closing connection reads and drops, after its last answer or a refused head (see
/// `io::head`), before it gives up on a clean close.
pub(crate) const MAX_DISCARD: usize = 1 << 20;

/// Reads and drops what `stream` still delivers until it ends, fails, or `LINGER_TIME` or
/// `MAX_DISCARD` bytes are spent.
pub(crate) async fn discard_until_closed<S: AsyncRead + Unpin>(stream: &mut S) {
    let discard = async {
        let mut scratch = [0u8; 4096];
        let mut left = MAX_DISCARD;
        while left > 0 {
            match stream.read(&mut scratch).await {
                Ok(0) | Err(_) => return,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, discard).await;
}
