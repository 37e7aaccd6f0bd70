//! Wrappers around a connection's byte stream: deadlines on it, and bytes read ahead of it.

pub(crate) mod deadline;
pub(crate) mod prefixed;
