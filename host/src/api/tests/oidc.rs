//! OpenID Connect tokens against a JWKS the test serves over HTTP, with keys the test makes
//! (Ed25519 from fixed seeds): a valid token of each role; expired, not yet valid, wrong
//! issuer, wrong audience, unknown key, `alg: none`, a shared-secret algorithm, a tampered
//! signature and a token without roles; the actor of a pin is the verified subject; a key
//! rotation is picked up, and made-up key ids do not make the API hammer the issuer.

use super::*;
use crate::api::oidc::Verifier;
use crate::config::oidc::{JwksSource, OidcConfig};
use axum::routing::get as route_get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ed25519_dalek::{Signer, SigningKey};
use jsonwebtoken::Algorithm;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

const ISSUER: &str = "https://login.example.test/realms/ops";
const AUDIENCE: &str = "capacity-sentinel";

struct Issuer {
    keys: Arc<Mutex<Vec<(String, SigningKey)>>>,
    fetches: Arc<AtomicU64>,
    /// While set, `/jwks` answers after 30 s (a hanging issuer).
    hang: Arc<std::sync::atomic::AtomicBool>,
    url: String,
}

impl Issuer {
    /// Serves `/jwks` on 127.0.0.1 with the public halves of its keys.
    async fn start() -> Issuer {
        let keys: Arc<Mutex<Vec<(String, SigningKey)>>> = Arc::new(Mutex::new(vec![("k1".into(), SigningKey::from_bytes(&[1; 32]))]));
        let fetches = Arc::new(AtomicU64::new(0));
        let hang = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (served, counted, hanging) = (keys.clone(), fetches.clone(), hang.clone());
        let app = Router::new().route(
            "/jwks",
            route_get(move || {
                let (served, counted, hanging) = (served.clone(), counted.clone(), hanging.clone());
                async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    if hanging.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_secs(30)).await;
                    }
                    let keys: Vec<Value> = served
                        .lock()
                        .unwrap()
                        .iter()
                        .map(|(kid, k)| {
                            serde_json::json!({ "kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
                                                "x": B64.encode(k.verifying_key().as_bytes()) })
                        })
                        .collect();
                    axum::Json(serde_json::json!({ "keys": keys }))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Issuer { keys, fetches, hang, url }
    }

    fn config(&self) -> OidcConfig {
        OidcConfig {
            issuer: ISSUER.into(),
            audience: AUDIENCE.into(),
            jwks: JwksSource::Url(self.url.parse().unwrap()),
            algorithms: vec![Algorithm::EdDSA],
            roles_claim: vec!["realm_access".into(), "roles".into()],
            staff_roles: vec!["sentinel-staff".into()],
            viewer_roles: vec!["sentinel-viewer".into()],
            leeway: Duration::from_secs(5),
            max_lifetime: Duration::from_secs(86_400),
            jwks_min_refresh: Duration::from_secs(3600),
            jwks_max_age: Duration::from_secs(3600),
            timeout: Duration::from_secs(5),
        }
    }
}

fn wall() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A compact JWS of `header` and `claims`, signed by `key`.
fn sign(header: &Value, claims: &Value, key: &SigningKey) -> String {
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = key.sign(input.as_bytes());
    format!("{input}.{}", B64.encode(signature.to_bytes()))
}

fn claims(sub: &str, roles: &[&str]) -> Value {
    serde_json::json!({ "iss": ISSUER, "aud": AUDIENCE, "sub": sub, "email": format!("{sub}@example.test"),
                        "iat": wall(), "nbf": wall() - 10, "exp": wall() + 300, "realm_access": { "roles": roles } })
}

fn token(kid: &str, key: &SigningKey, claims: &Value) -> String {
    sign(&serde_json::json!({ "alg": "EdDSA", "typ": "JWT", "kid": kid }), claims, key)
}

fn harness(issuer: &Issuer) -> Harness {
    let mut h = Harness::new();
    h.state = h.state.clone().with_oidc(Verifier::new(issuer.config()).unwrap());
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verified_staff_token_pins_as_its_subject_and_a_viewer_token_only_reads() {
    let issuer = Issuer::start().await;
    let h = harness(&issuer);
    let key = SigningKey::from_bytes(&[1; 32]);
    let staff = token("k1", &key, &claims("u-4411", &["sentinel-staff"]));
    let body = h.pin_body("critical", "incident 4411", 3600);
    h.call(put_json("/v1/pin", Some(&staff), &body)).await.ok_json(StatusCode::OK);
    assert_eq!(h.stored_pin().await.unwrap().actor, "oidc:u-4411 <u-4411@example.test>", "the actor is the verified subject");
    let viewer = token("k1", &key, &claims("u-7", &["sentinel-viewer"]));
    h.call(get("/v1/pin", Some(&viewer))).await.ok_json(StatusCode::OK);
    h.call(put_json("/v1/pin", Some(&viewer), &body)).await.problem(StatusCode::FORBIDDEN);
    let nobody = token("k1", &key, &claims("u-8", &["billing"]));
    h.call(get("/v1/pin", Some(&nobody))).await.problem(StatusCode::FORBIDDEN);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "the keys are cached");
}

/// The second security review, finding 8: `email_verified: "false"` (a string) counted as
/// verified. Only `true` (or `"true"`) or no such claim lets the email name the actor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_email_not_verified_in_any_form_never_names_the_actor() {
    let issuer = Issuer::start().await;
    let h = harness(&issuer);
    let key = SigningKey::from_bytes(&[1; 32]);
    for (verified, actor) in [
        (serde_json::json!(false), "oidc:u-1"),
        (serde_json::json!("false"), "oidc:u-1"),
        (serde_json::json!(0), "oidc:u-1"),
        (serde_json::json!("true"), "oidc:u-1 <u-1@example.test>"),
        (serde_json::json!(true), "oidc:u-1 <u-1@example.test>"),
    ] {
        let mut c = claims("u-1", &["sentinel-staff"]);
        c["email_verified"] = verified.clone();
        let body = h.pin_body("critical", "incident 4411", 3600);
        h.call(put_json("/v1/pin", Some(&token("k1", &key, &c)), &body)).await.ok_json(StatusCode::OK);
        assert_eq!(h.stored_pin().await.unwrap().actor, actor, "email_verified {verified}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_token_is_the_same_401_and_changes_nothing() {
    let issuer = Issuer::start().await;
    let h = harness(&issuer);
    h.set_pin("emergency", "incident 4411", 3600).await.ok_json(StatusCode::OK);
    let before = h.stored_pin().await;
    let key = SigningKey::from_bytes(&[1; 32]);
    let stranger = SigningKey::from_bytes(&[9; 32]);
    let good = claims("u-1", &["sentinel-staff"]);
    let with = |field: &str, value: Value| {
        let mut c = good.clone();
        c[field] = value;
        c
    };
    let mut tampered = token("k1", &key, &good);
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let header_of = |alg: &str| serde_json::json!({ "alg": alg, "typ": "JWT", "kid": "k1" });
    let unsigned = format!("{}.{}.", B64.encode(header_of("none").to_string()), B64.encode(good.to_string()));
    let hs256 = {
        use hmac::{Hmac, Mac};
        let input = format!("{}.{}", B64.encode(header_of("HS256").to_string()), B64.encode(good.to_string()));
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.verifying_key().as_bytes()).unwrap();
        mac.update(input.as_bytes());
        format!("{input}.{}", B64.encode(mac.finalize().into_bytes()))
    };
    let bad = [
        ("expired", token("k1", &key, &with("exp", (wall() - 60).into()))),
        ("a hundred years to live (max_lifetime)", token("k1", &key, &with("exp", (wall() + 100 * 365 * 86_400).into()))),
        ("not yet valid", token("k1", &key, &with("nbf", (wall() + 600).into()))),
        ("wrong issuer", token("k1", &key, &with("iss", "https://evil.example.test".into()))),
        ("wrong audience", token("k1", &key, &with("aud", "another-api".into()))),
        ("no subject", token("k1", &key, &with("sub", "".into()))),
        ("unknown key", token("k2", &stranger, &good)),
        ("a known kid, another key", token("k1", &stranger, &good)),
        ("alg none", unsigned),
        ("a shared-secret algorithm keyed with the public key", hs256),
        ("tampered signature", tampered),
        ("not a JWT at all", "a.b.c".to_string()),
    ];
    let mut answers = Vec::new();
    for (what, token) in &bad {
        let reply = h.call(put_json("/v1/pin", Some(token), &h.pin_body("normal", "x", 600))).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{what}: {}", reply.text());
        answers.push((reply.text(), reply.headers.get(header::WWW_AUTHENTICATE).cloned()));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "one identical answer for every bad token: {answers:#?}");
    assert_eq!(h.stored_pin().await, before, "nothing changed");
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1, "an unknown key id refetched nothing within jwks_min_refresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_key_is_fetched_once_when_a_token_names_it() {
    let issuer = Issuer::start().await;
    let mut config = issuer.config();
    config.jwks_min_refresh = Duration::from_millis(100);
    let mut h = Harness::new();
    h.state = h.state.clone().with_oidc(Verifier::new(config).unwrap());
    let old = SigningKey::from_bytes(&[1; 32]);
    h.call(get("/v1/pin", Some(&token("k1", &old, &claims("u-1", &["sentinel-viewer"]))))).await.ok_json(StatusCode::OK);
    let new = SigningKey::from_bytes(&[2; 32]);
    issuer.keys.lock().unwrap().push(("k2".into(), new.clone()));
    tokio::time::sleep(Duration::from_millis(150)).await;
    h.call(get("/v1/pin", Some(&token("k2", &new, &claims("u-1", &["sentinel-viewer"]))))).await.ok_json(StatusCode::OK);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2, "fetched again for the new key id, once");
    h.call(get("/v1/pin", Some(&token("k1", &old, &claims("u-1", &["sentinel-viewer"]))))).await.ok_json(StatusCode::OK);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2, "the known keys are cached");
}

/// The second security review, finding 6: while an unknown key id's fetch waited on a hanging
/// issuer, a valid token of a known key waited with it (4.7 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_key_fetch_never_holds_a_token_whose_key_is_known() {
    let issuer = Issuer::start().await;
    let mut h = Harness::new();
    let config = OidcConfig { jwks_min_refresh: Duration::from_millis(100), timeout: Duration::from_secs(5), ..issuer.config() };
    h.state = h.state.clone().with_oidc(Verifier::new(config).unwrap());
    let key = SigningKey::from_bytes(&[1; 32]);
    let known = token("k1", &key, &claims("u-1", &["sentinel-viewer"]));
    h.call(get("/v1/pin", Some(&known))).await.ok_json(StatusCode::OK);
    issuer.hang.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let unknown = token("k9", &SigningKey::from_bytes(&[9; 32]), &claims("u-2", &["sentinel-viewer"]));
    let waiting = {
        let router = h.router();
        tokio::spawn(async move { call(router, get("/v1/pin", Some(&unknown))).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2, "the unknown key's fetch is under way");
    let started = std::time::Instant::now();
    h.call(get("/v1/pin", Some(&known))).await.ok_json(StatusCode::OK);
    assert!(started.elapsed() < Duration::from_secs(1), "a known key waited {:?} for the hanging fetch", started.elapsed());
    assert_eq!(waiting.await.unwrap().status, StatusCode::UNAUTHORIZED, "the unknown key is refused after the timeout");
}
