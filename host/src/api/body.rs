//! JSON request bodies: `application/json` only, at most 16 KiB (413 beyond, whether or not a
//! Content-Length says so up front), unknown fields refused by the body type (400).

use super::problem::Problem;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderMap, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;

/// The largest request body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// A JSON body of type `T`, read under the size limit.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = Problem;

    async fn from_request(req: Request, _state: &S) -> Result<JsonBody<T>, Problem> {
        let declared = req.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
            return Err(Problem::too_large(MAX_BODY_BYTES));
        }
        if !is_json(req.headers()) {
            return Err(Problem::unsupported_media_type());
        }
        let bytes = match Limited::new(req.into_body(), MAX_BODY_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => return Err(Problem::too_large(MAX_BODY_BYTES)),
            Err(e) => return Err(Problem::bad_request(format!("the body could not be read: {e}"))),
        };
        // serde would take a struct from an array too; the documented body is an object.
        if bytes.trim_ascii_start().first() != Some(&b'{') {
            return Err(Problem::bad_request("the body must be a JSON object"));
        }
        // The error names the field whose value is wrong (`state: invalid type: ...`); serde's
        // own messages already name unknown and missing fields.
        let mut json = serde_json::Deserializer::from_slice(&bytes);
        let parsed = serde_path_to_error::deserialize(&mut json).map_err(|e| {
            let path = e.path().to_string();
            let error = e.into_inner();
            if path == "." { error.to_string() } else { format!("{path}: {error}") }
        });
        parsed
            .and_then(|value| json.end().map(|()| value).map_err(|e| e.to_string()))
            .map(JsonBody)
            .map_err(|e| Problem::bad_request(format!("the body is not the documented JSON: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_media_types() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, v.parse().unwrap());
            is_json(&h)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(!with("application/merge-patch+json"));
        assert!(!with("text/plain"));
        assert!(!with("application/jsonx"));
        assert!(!is_json(&HeaderMap::new()));
    }
}
