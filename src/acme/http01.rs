//! The HTTP-01 listener's answers: `/.well-known/acme-challenge/<token>` while its challenge
//! is open, 404 otherwise. Nothing else is served on it, and it keeps nothing.

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};

use super::challenges::Challenges;
use crate::body::Body;
use crate::service::plain_text;

const PREFIX: &str = "/.well-known/acme-challenge/";

/// The answer to one request on the HTTP-01 listener.
pub(crate) fn answer<B>(challenges: &Challenges, req: &Request<B>) -> Response<Body> {
    let key_authorization = (req.method() == Method::GET)
        .then(|| req.uri().path().strip_prefix(PREFIX))
        .flatten()
        .and_then(|token| challenges.http(token));
    match key_authorization {
        Some(answer) => plain_text(StatusCode::OK, Bytes::from(answer)),
        None => plain_text(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"not found: this listener answers ACME HTTP-01 challenges only\n"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_open_tokens_are_answered() {
        let challenges = Challenges::new();
        challenges.open_http("tok", "tok.thumb");
        let get = |path: &str| {
            let req = Request::get(path).body(()).unwrap();
            answer(&challenges, &req)
        };
        assert_eq!(
            get("/.well-known/acme-challenge/tok").status(),
            StatusCode::OK
        );
        assert_eq!(
            get("/.well-known/acme-challenge/other").status(),
            StatusCode::NOT_FOUND
        );
        let refused = get("/");
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        // The error answers' security headers, as on the public listener.
        let headers = refused.headers();
        assert_eq!(
            headers[http::header::CONTENT_SECURITY_POLICY],
            "default-src 'none'; frame-ancestors 'none'"
        );
        assert_eq!(headers[http::header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(headers[http::header::CACHE_CONTROL], "no-store");
        challenges.close("name.example", &["tok".to_owned()]);
        assert_eq!(
            get("/.well-known/acme-challenge/tok").status(),
            StatusCode::NOT_FOUND
        );
    }
}
