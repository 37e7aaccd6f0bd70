//! CSP violation reports: the endpoint every page's policy names, what is kept of a report,
//! and the bounded places an operator reads them (the counters, the admin table, the log).
//!
//! SECURITY: anyone can send a report, so every number here is advisory, and what is kept of
//! one is bounded by the config (host entries, a fixed directive list) or by a cap, never by
//! what clients send. Nothing of a report is reflected in the answer.

mod blocked;
mod directive;
mod intake;
mod parse;
mod rate;
mod table;

pub(crate) use directive::ViolationCounts;
pub(crate) use intake::{Intake, Refused, ReportTarget, receive};
pub(crate) use parse::MediaType;
pub(crate) use rate::ConnectionReports;
pub(crate) use table::{Source, table_json};

pub use parse::{Malformed as MalformedReport, read_report};

pub use crate::limits::{MAX_REPORT_BODY, REPORT_PATH};
