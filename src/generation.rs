//! What one loaded config builds before it can serve: the request handler, the TLS acceptor
//! with its certificates, and the limits every connection accepted under it keeps.

use std::sync::Arc;

use http::Request;
use hyper::body::Incoming;
use tokio_rustls::TlsAcceptor;

use crate::acme::Challenges;
use crate::answer::{Answer, PerConnection};
use crate::config::{Config, Limits};
use crate::metrics::{CertExpiry, Metrics};
use crate::service::{Service, Transport};
use crate::tls::{self, TlsError};

/// Answers one request; the other arguments say what its connection is (TLS, and its SNI) and
/// what its requests share.
pub(crate) type Handler =
    Arc<dyn Fn(Request<Incoming>, Transport<'_>, &PerConnection) -> Answer + Send + Sync>;

/// What a listener serves its connections with: a connection takes its TLS acceptor and
/// limits from the one it was accepted under, so a reload never changes a connection's
/// deadlines or buffers midway, and each request's handler from the current one (see
/// `server::Endpoints`), so that no connection keeps a replaced generation alive.
pub(crate) struct Endpoint {
    pub(crate) handler: Handler,
    pub(crate) tls: Option<TlsAcceptor>,
    pub(crate) limits: Limits,
    /// Plain TCP only: whether HTTP/2 with prior knowledge (the preface) is served, or read as
    /// HTTP/1.1 and refused as any request that is not.
    pub(crate) plain_h2: bool,
}

impl Endpoint {
    /// An endpoint that never changes with a reload (the demo page, the admin endpoints).
    pub(crate) fn fixed(handler: Handler, limits: &Limits, plain_h2: bool) -> Arc<Endpoint> {
        Arc::new(Endpoint {
            handler,
            tls: None,
            limits: limits.clone(),
            plain_h2,
        })
    }
}

/// One loaded config: the public endpoint, and the certificates it serves.
pub(crate) struct Generation {
    pub(crate) config: Config,
    pub(crate) endpoint: Arc<Endpoint>,
    pub(crate) certificates: Vec<CertExpiry>,
}

impl Generation {
    /// Builds everything a config needs before it can serve; fails without side effects.
    /// `challenges`: the ACME validation answers, shared by every generation.
    pub(crate) fn build(
        config: Config,
        metrics: &Arc<Metrics>,
        challenges: &Arc<Challenges>,
    ) -> Result<Generation, TlsError> {
        let service = Arc::new(Service::with_metrics(&config, metrics));
        let handler: Handler =
            Arc::new(move |req, transport, connection| service.serve(req, transport, connection));
        let (tls, certificates) = match config.served_tls() {
            Some(files) => {
                let provider = tls::provider();
                let mut resolver = tls::load_all(&files, &provider)?;
                if config.answers_tls_alpn() {
                    resolver = resolver.answering_tls_alpn(challenges.clone());
                }
                let certificates = resolver.expiries();
                let server_config =
                    tls::server_config(Arc::new(resolver), provider, files.min_version)?;
                (
                    Some(TlsAcceptor::from(Arc::new(server_config))),
                    certificates,
                )
            }
            None => (None, Vec::new()),
        };
        let endpoint = Arc::new(Endpoint {
            handler,
            tls,
            limits: config.limits.clone(),
            plain_h2: true,
        });
        Ok(Generation {
            config,
            endpoint,
            certificates,
        })
    }
}
