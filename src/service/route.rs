//! Which host entry a request is for, decided once per request: its authority (`Host` or
//! `:authority`), the name it is served as, and, over TLS, whether its connection may serve
//! that name. Every later step reads the [`Routed`] value.

use std::borrow::Cow;

use http::header;
use http::{Request, StatusCode};

use crate::origin::split_host_port;
use crate::routing::{lower_case, route_key};

use super::headers::error;
use super::host::Host;
use super::{Service, Transport, Turned};

/// A request's host entry and the name it is served as.
#[derive(Debug)]
pub(super) struct Routed<'s, 'r> {
    /// The entry's place in the service (the page cache is kept by it).
    pub(super) index: usize,
    pub(super) host: &'s Host,
    /// The authority as routes are keyed: lower case, the default port left out. A per-server
    /// label is part of it.
    pub(super) served_as: Cow<'r, str>,
}

impl Routed<'_, '_> {
    /// The per-server label the request was served under, if any.
    pub(super) fn label(&self) -> Option<&str> {
        self.host.label_of(&self.served_as)
    }
}

impl Service {
    /// The host entry a request is for; or the answer that refuses it.
    #[allow(clippy::result_large_err)]
    pub(super) fn route<'r, B>(
        &self,
        req: &'r Request<B>,
        transport: Transport<'_>,
    ) -> Result<Routed<'_, 'r>, Turned<'_>> {
        let Some(authority) = request_authority(req) else {
            let response = error(
                StatusCode::BAD_REQUEST,
                "the request names no host, or more than one (Host or :authority)",
            );
            return Err((None, response));
        };
        let served_as = route_key(authority, self.default_port);
        let Some(&index) = self.names.lookup(&served_as) else {
            let reason = format!(
                "this proxy serves no sandbox named \"{}\"",
                authority.escape_debug()
            );
            return Err((None, error(StatusCode::MISDIRECTED_REQUEST, &reason)));
        };
        let host = &self.hosts[index];
        if let Transport::Tls { server_name } = transport
            && self.tls
            && let Err(reason) = self.check_server_name(server_name, authority, index)
        {
            return Err((Some(host), error(StatusCode::MISDIRECTED_REQUEST, &reason)));
        }
        Ok(Routed {
            index,
            host,
            served_as,
        })
    }

    /// The host entry for an authority: an exact sandbox name, or one label below a name
    /// whose host serves per-server subdomains.
    pub(super) fn host_index(&self, authority: &str) -> Option<usize> {
        let key = route_key(authority, self.default_port);
        self.names.lookup(&key).copied()
    }

    /// SECURITY: a connection negotiated for one host's name must not serve another host's
    /// page (HTTP/2 coalescing across a shared certificate); browsers retry a 421 on a new
    /// connection. Per-server labels of the same host may share a connection. A client sends
    /// no server name only for an IP address, so a connection without one serves only a
    /// sandbox named by an IP address: the same rule, with nothing to match a name against.
    fn check_server_name(
        &self,
        server_name: Option<&str>,
        authority: &str,
        index: usize,
    ) -> Result<(), String> {
        let Some(name) = server_name else {
            let hostname = split_host_port(authority).map_or(authority, |(hostname, _)| hostname);
            return match hostname
                .trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
            {
                Ok(_) => Ok(()),
                Err(_) => Err(format!(
                    "this TLS connection named no server (SNI), so it serves no sandbox named \"{}\": open one that names it",
                    authority.escape_debug()
                )),
            };
        };
        if self
            .server_names
            .lookup(&lower_case(name))
            .is_some_and(|hosts| hosts.contains(&index))
        {
            return Ok(());
        }
        Err(format!(
            "this connection was made for \"{}\", not for \"{}\": open a new one",
            name.escape_debug(),
            authority.escape_debug()
        ))
    }
}

/// HTTP/2 carries `:authority` in the URI; HTTP/1 carries `Host` (or an absolute-form URI,
/// which then takes precedence, as RFC 9112 says).
fn request_authority<B>(req: &Request<B>) -> Option<&str> {
    if let Some(authority) = req.uri().authority() {
        return Some(authority.as_str());
    }
    // Two `Host` headers name none: RFC 9112 asks for a 400, and a proxy in front might route
    // by the other one.
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let field = hosts.next()?;
    if hosts.next().is_some() {
        return None;
    }
    field.to_str().ok()
}
