//! The answers to the CA's challenges while an order is open: a TLS-ALPN-01 certificate per
//! name (RFC 8737), an HTTP-01 key authorization per token. Shared by every generation's
//! certificate resolver, and by the HTTP-01 listener.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use rustls::sign::CertifiedKey;

use crate::tls::ValidationCertificates;

#[derive(Debug, Default)]
pub(crate) struct Challenges {
    tls_alpn: RwLock<HashMap<String, Arc<CertifiedKey>>>,
    http: RwLock<HashMap<String, String>>,
}

impl Challenges {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// The key authorization for an HTTP-01 `token`, while its challenge is open.
    pub(crate) fn http(&self, token: &str) -> Option<String> {
        let open = self.http.read().unwrap_or_else(PoisonError::into_inner);
        open.get(token).cloned()
    }

    pub(crate) fn open_tls_alpn(&self, name: &str, key: Arc<CertifiedKey>) {
        let mut open = self
            .tls_alpn
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        open.insert(name.to_owned(), key);
    }

    pub(crate) fn open_http(&self, token: &str, key_authorization: &str) {
        let mut open = self.http.write().unwrap_or_else(PoisonError::into_inner);
        open.insert(token.to_owned(), key_authorization.to_owned());
    }

    /// Forgets every answer for `name` and `tokens`: its order is done, either way.
    pub(crate) fn close(&self, name: &str, tokens: &[String]) {
        self.tls_alpn
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(name);
        let mut http = self.http.write().unwrap_or_else(PoisonError::into_inner);
        for token in tokens {
            http.remove(token);
        }
    }
}

impl ValidationCertificates for Challenges {
    /// The validation certificate for `name`, while its challenge is open.
    fn for_name(&self, name: &str) -> Option<Arc<CertifiedKey>> {
        let open = self.tls_alpn.read().unwrap_or_else(PoisonError::into_inner);
        open.get(&name.to_ascii_lowercase()).cloned()
    }
}
