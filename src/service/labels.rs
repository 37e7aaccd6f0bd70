//! A server's label under a host entry's sandbox name, and the origin its views run on: what
//! docs/hosts.md has hosts compute (`serverLabel`), for the server authors who list that origin
//! (an API's CORS list, OAuth redirect URIs) and the operators who read it in the report table.

use ring::digest::{SHA256, digest};

use crate::routing::route_key;

use super::Service;
use super::host::Host;

/// Hex digits of a server id's SHA-256 a label keeps: 128 bits, well within a DNS label's 63
/// characters.
const LABEL_DIGITS: usize = 32;

/// A server's label and its views' origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewOrigin {
    /// The DNS label (`serverLabel` in docs/hosts.md).
    pub label: String,
    /// `<scheme>://<label>.<sandbox name>`, as browsers serialize the views' origin.
    pub origin: String,
}

/// Why a server has no label under the name asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoLabel {
    /// No host entry serves the name.
    #[error("no host entry serves {0:?}")]
    NoHost(String),
    /// The entry gives its servers no labels.
    #[error("the host entry serving {0:?} gives servers no labels (per_server_subdomains = false)")]
    NotPerServer(String),
    /// No name was given, and not exactly one entry gives labels.
    #[error("{0} host entries give servers labels: name one with --sandbox ({1})")]
    Ambiguous(usize, String),
}

impl Service {
    /// The label `server_id` gets under the host entry serving `sandbox` (without it, the one
    /// entry with `per_server_subdomains`), and the origin its views run on.
    pub fn view_origin(
        &self,
        sandbox: Option<&str>,
        server_id: &str,
    ) -> Result<ViewOrigin, NoLabel> {
        let host = self.labelling_host(sandbox)?;
        let label = server_label(server_id);
        let origin = format!("{}://{label}.{}", host.scheme, host.sandbox);
        Ok(ViewOrigin { label, origin })
    }

    fn labelling_host(&self, sandbox: Option<&str>) -> Result<&Host, NoLabel> {
        let Some(name) = sandbox else {
            let labelling: Vec<&Host> = self
                .hosts
                .iter()
                .filter(|host| host.config.per_server_subdomains)
                .collect();
            return match labelling[..] {
                [host] => Ok(host),
                _ => {
                    let names: Vec<&str> = labelling.iter().map(|host| &*host.sandbox).collect();
                    Err(NoLabel::Ambiguous(labelling.len(), names.join(", ")))
                }
            };
        };
        let served_as = route_key(name, self.default_port);
        let host = self
            .hosts
            .iter()
            .find(|host| *host.sandbox == *served_as)
            .ok_or_else(|| NoLabel::NoHost(name.to_owned()))?;
        if !host.config.per_server_subdomains {
            return Err(NoLabel::NotPerServer(name.to_owned()));
        }
        Ok(host)
    }
}

/// The label docs/hosts.md's `serverLabel` gives `server_id`: the first 32 hex digits of the
/// SHA-256 of its UTF-8 bytes.
fn server_label(server_id: &str) -> String {
    let hash = digest(&SHA256, server_id.as_bytes());
    let mut label = String::with_capacity(LABEL_DIGITS);
    for byte in hash.as_ref() {
        label.push_str(&format!("{byte:02x}"));
    }
    label.truncate(LABEL_DIGITS);
    label
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_the_first_32_hex_digits_of_sha256() {
        // sha256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(server_label("abc"), "ba7816bf8f01cfea414140de5dae2223");
        assert_eq!(server_label(""), "e3b0c44298fc1c149afbf4c8996fb924");
    }
}
