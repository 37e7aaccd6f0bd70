//! Where each request starts in the stream the head reader hands hyper, so that a connection
//! hyper hands back is only ever resumed where a checked head begins.
//!
//! SECURITY: hyper reads the heads the scanner checked and the report bodies it passed through,
//! one stream. A hyper connection that stops inside a request (an answer given before the
//! body was read, then a rest, a drain or a `Connection: close`) hands back a stream whose next
//! byte is body; a new hyper connection built on it would take the rest of that body as
//! requests the head reader never checked (request smuggling). So every position where a
//! checked head starts is noted, and a connection resumes only at one of them.

use std::collections::VecDeque;

/// Positions in the stream handed to hyper, counted in bytes from the connection's start.
#[derive(Debug, Default)]
pub(super) struct RequestStarts {
    /// Bytes put into the stream so far: heads, report bodies, refusal requests.
    written: u64,
    /// Bytes hyper has taken so far, less those it handed back.
    taken: u64,
    /// Where the heads still within reach of hyper's buffer start, in order.
    starts: VecDeque<u64>,
}

impl RequestStarts {
    /// A head (or a refusal request) of `len` bytes goes into the stream.
    pub(super) fn head(&mut self, len: usize) {
        self.starts.push_back(self.written);
        self.written += len as u64;
    }

    /// Body bytes go into the stream.
    pub(super) fn body(&mut self, len: usize) {
        self.written += len as u64;
    }

    /// hyper took `n` bytes; starts further back than `reach` bytes can never be handed back
    /// (hyper's buffer holds less), so they are forgotten.
    pub(super) fn taken(&mut self, n: usize, reach: usize) {
        self.taken += n as u64;
        let oldest = self.taken.saturating_sub(reach as u64);
        while self.starts.front().is_some_and(|start| *start < oldest) {
            self.starts.pop_front();
        }
    }

    /// hyper handed back `n` bytes it had taken and not used.
    pub(super) fn handed_back(&mut self, n: usize) {
        self.taken -= n as u64;
    }

    /// Whether hyper, holding `unused` bytes it took, stopped where a request starts: at a
    /// noted head, or at the end of the stream when `at_boundary` (nothing of a body is
    /// still to come). A start forgotten as out of reach answers `false`: the connection is
    /// closed, which loses a kept-alive connection, never a check.
    pub(super) fn stopped_at_a_request(&self, unused: usize, at_boundary: bool) -> bool {
        let Some(at) = self.taken.checked_sub(unused as u64) else {
            return false;
        };
        if at == self.written {
            return at_boundary;
        }
        self.starts.binary_search(&at).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_noted_start_or_the_end_between_requests_is_a_request_start() {
        let mut starts = RequestStarts::default();
        starts.head(10);
        starts.body(5);
        starts.head(8);
        starts.taken(23, 1000);
        // hyper stopped after both: the end of the stream, between requests.
        assert!(starts.stopped_at_a_request(0, true));
        assert!(!starts.stopped_at_a_request(0, false));
        // Holding the second head unused: it starts at 15.
        assert!(starts.stopped_at_a_request(8, true));
        // Holding part of the body: inside a request.
        assert!(!starts.stopped_at_a_request(10, true));
        assert!(!starts.stopped_at_a_request(3, true));
        // At the first head.
        assert!(starts.stopped_at_a_request(23, true));
        assert!(!starts.stopped_at_a_request(24, true), "more than it took");
    }

    #[test]
    fn starts_out_of_reach_are_forgotten_and_then_refused() {
        let mut starts = RequestStarts::default();
        for _ in 0..100 {
            starts.head(10);
        }
        starts.taken(1000, 50);
        assert!(starts.starts.len() <= 6, "{}", starts.starts.len());
        assert!(starts.stopped_at_a_request(50, true));
        assert!(!starts.stopped_at_a_request(100, true), "forgotten: closed");
    }

    #[test]
    fn handed_back_bytes_are_taken_again() {
        let mut starts = RequestStarts::default();
        starts.head(10);
        starts.head(10);
        starts.taken(20, 100);
        starts.handed_back(10);
        assert!(starts.stopped_at_a_request(0, true));
        starts.taken(10, 100);
        assert!(starts.stopped_at_a_request(0, true));
        assert!(starts.stopped_at_a_request(20, true));
    }
}
