//! One order, for one name: open its authorization's challenge, answer it while the CA checks,
//! finalize with a new key, and write the chain and key to the state directory.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use instant_acme::{
    Account, AuthorizationStatus, ChallengeType, Identifier, NewOrder, Order, OrderStatus,
    RetryPolicy,
};
use rustls::sign::CertifiedKey;
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};

use super::challenges::Challenges;
use super::error::{AcmeError, OrderStep};
use super::store::{self, Readers};
use crate::config::{AcmeName, AcmeSettings, CertFiles, Challenge};
use crate::tls;

/// How long the CA may take to check the challenges and to issue.
const CA_PATIENCE: RetryPolicy = RetryPolicy::new().timeout(Duration::from_secs(120));

/// What an order left: the new certificate's validity, in seconds since the epoch, and how
/// the CA's renewal information names it.
pub(crate) struct Issued {
    pub(crate) not_before: i64,
    pub(crate) not_after: i64,
    pub(crate) identifier: Option<instant_acme::CertificateIdentifier<'static>>,
}

/// Orders a certificate for `name`, and writes it to the state directory. Whatever happens,
/// the challenge answers are gone when it returns.
pub(crate) async fn issue(
    account: &Account,
    settings: &AcmeSettings,
    name: &AcmeName,
    challenges: &Challenges,
) -> Result<Issued, AcmeError> {
    let challenge = settings.challenge;
    let identifiers = [Identifier::Dns(name.to_string())];
    let mut order = account
        .new_order(&NewOrder::new(&identifiers))
        .await
        .map_err(OrderStep::NewOrder.failed())?;
    let mut tokens = Vec::new();
    let result = complete(&mut order, name, challenge, challenges, &mut tokens).await;
    challenges.close(name.as_str(), &tokens);
    let (chain, key) = result?;
    save(name, &settings.cert_files(name), &chain, &key)
}

/// Answers the challenges and finalizes; the chain and the key, as PEM.
async fn complete(
    order: &mut Order,
    name: &AcmeName,
    challenge: Challenge,
    challenges: &Challenges,
    tokens: &mut Vec<String>,
) -> Result<(String, String), AcmeError> {
    let kind = match challenge {
        Challenge::TlsAlpn01 => ChallengeType::TlsAlpn01,
        Challenge::Http01 { .. } => ChallengeType::Http01,
    };
    let mut authorizations = order.authorizations();
    while let Some(authorization) = authorizations.next().await {
        let mut authorization = authorization.map_err(OrderStep::ReadAuthorization.failed())?;
        match authorization.status {
            // Reused from an earlier order: nothing to answer.
            AuthorizationStatus::Valid => continue,
            AuthorizationStatus::Pending => {}
            other => return Err(AcmeError::Authorization(other)),
        }
        let mut handle = authorization
            .challenge(kind.clone())
            .ok_or(AcmeError::NoChallenge {
                challenge: challenge.name(),
            })?;
        let key_authorization = handle.key_authorization();
        match challenge {
            Challenge::TlsAlpn01 => {
                let key = validation_key(name, key_authorization.digest().as_ref())?;
                challenges.open_tls_alpn(name.as_str(), key);
            }
            Challenge::Http01 { .. } => {
                tokens.push(handle.token.clone());
                challenges.open_http(&handle.token, key_authorization.as_str());
            }
        }
        handle
            .set_ready()
            .await
            .map_err(OrderStep::SetReady.failed())?;
    }
    let status = order
        .poll_ready(&CA_PATIENCE)
        .await
        .map_err(OrderStep::AwaitCheck.failed())?;
    if status != OrderStatus::Ready {
        return Err(AcmeError::CheckFailed {
            challenge: challenge.name(),
            status,
            problem: order.state().error.clone().map(Box::new),
        });
    }
    let key = order
        .finalize()
        .await
        .map_err(OrderStep::Finalize.failed())?;
    let chain = order
        .poll_certificate(&CA_PATIENCE)
        .await
        .map_err(OrderStep::FetchCertificate.failed())?;
    Ok((chain, key))
}

/// The self-signed certificate a TLS-ALPN-01 check gets (RFC 8737): the name, and the key
/// authorization's digest in a critical acmeIdentifier extension.
fn validation_key(name: &AcmeName, digest: &[u8]) -> Result<Arc<CertifiedKey>, AcmeError> {
    let failed = AcmeError::ValidationCertificate;
    let key = rcgen::KeyPair::generate().map_err(failed)?;
    let mut params = rcgen::CertificateParams::new(vec![name.to_string()]).map_err(failed)?;
    params.custom_extensions = vec![rcgen::CustomExtension::new_acme_identifier(digest)];
    let cert = params.self_signed(&key).map_err(failed)?;
    let key_der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let signing_key = tls::provider()
        .key_provider
        .load_private_key(key_der)
        .map_err(AcmeError::ValidationKey)?;
    // Not `from_der`: its check that key and certificate match parses the certificate with
    // webpki, which refuses the critical acmeIdentifier extension this certificate exists for.
    Ok(Arc::new(CertifiedKey::new(
        vec![cert.der().clone()],
        signing_key,
    )))
}

/// Checks what the CA sent, then writes the key before the chain: a reload that reads in
/// between finds a key that does not match and keeps the old pair serving.
fn save(name: &AcmeName, files: &CertFiles, chain: &str, key: &str) -> Result<Issued, AcmeError> {
    // What a reload would refuse is never written: the files on disk stay ones that load.
    let leaf = tls::check_pair(files, chain.as_bytes(), key.as_bytes(), name.as_str())
        .map_err(|reason| AcmeError::Unservable { reason })?;
    let (not_before, not_after) = tls::validity(&leaf).ok_or(AcmeError::NoValidity)?;
    let write = |path: &Path, bytes: &str, readers| {
        store::write_atomically(path, bytes.as_bytes(), readers).map_err(|source| {
            AcmeError::Write {
                path: path.to_owned(),
                source,
            }
        })
    };
    write(&files.key, key, Readers::Owner)?;
    write(&files.cert, chain, Readers::Anyone)?;
    Ok(Issued {
        not_before,
        not_after,
        identifier: super::identifier_of(&leaf),
    })
}
