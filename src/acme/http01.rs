//! The HTTP-01 listener's answers: `/.well-known/acme-challenge/<token>` while its challenge
//! is open, 404 otherwise. Nothing else is served on it, and it keeps nothing.

use bytes::Bytes;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};

use super::challenges::Challenges;
use crate::body::Body;

const PREFIX: &str = "/.well-known/acme-challenge/";

/// The answer to one request on the HTTP-01 listener.
pub(crate) fn answer<B>(challenges: &Challenges, req: &Request<B>) -> Response<Body> {
    let key_authorization = (req.method() == Method::GET)
        .then(|| req.uri().path().strip_prefix(PREFIX))
        .flatten()
        .and_then(|token| challenges.http(token));
    match key_authorization {
        Some(answer) => text(StatusCode::OK, Bytes::from(answer)),
        None => text(
            StatusCode::NOT_FOUND,
            Bytes::from_static(b"not found: this listener answers ACME HTTP-01 challenges only\n"),
        ),
    }
}

fn text(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Body::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
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
        assert_eq!(get("/").status(), StatusCode::NOT_FOUND);
        challenges.close("name.example", &["tok".to_owned()]);
        assert_eq!(
            get("/.well-known/acme-challenge/tok").status(),
            StatusCode::NOT_FOUND
        );
    }
}
