//! How PostgreSQL errors are described to operators, and which ones end a connection.

use super::*;

/// Whether an error leaves the connection unusable or in an unknown state: anything but an
/// error reported by the server, and the server's own "this session is over" errors.
pub(super) fn breaks_connection(e: &tokio_postgres::Error, client: &Client) -> bool {
    client.is_closed() || e.is_closed() || e.as_db_error().is_none_or(|db| session_ends(db.code()))
}

/// Operator intervention (`57P..`: shutdown, crash, restart) and connection exceptions (`08...`).
pub(super) fn session_ends(code: &SqlState) -> bool {
    let code = code.code();
    code.starts_with("57P") || code.starts_with("08")
}

/// An error with its causes, on one line.
pub(super) fn describe(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut text = format!("{}: {} (SQLSTATE {})", db.severity(), db.message(), db.code().code());
        if let Some(detail) = db.detail() {
            text.push_str(&format!("; {detail}"));
        }
        if let Some(hint) = db.hint() {
            text.push_str(&format!("; hint: {hint}"));
        }
        return text;
    }
    sentinel_core::error_chain::chain(e)
}

/// What to do about a server or connection error, after its description.
pub(super) fn advice(e: &tokio_postgres::Error) -> String {
    let text = describe(e);
    let Some(code) = e.code() else {
        if e.is_closed() {
            return format!("{text}; the connection to the server was lost, and the next call reconnects");
        }
        return text;
    };
    let hint = match code {
        c if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            "check the user and password in the URL and the server's pg_hba.conf"
        }
        c if *c == SqlState::INVALID_CATALOG_NAME => "create the database (createdb) or fix its name in the URL",
        c if *c == SqlState::INSUFFICIENT_PRIVILEGE => {
            "grant the sentinel's user the privileges on its tables (and CREATE on the schema for migrations)"
        }
        c if *c == SqlState::TOO_MANY_CONNECTIONS => "raise max_connections or close other clients' idle connections",
        c if *c == SqlState::CANNOT_CONNECT_NOW => "the server is starting up or shutting down; retry in a moment",
        c if *c == SqlState::QUERY_CANCELED => "the statement ran longer than the store's timeout; check the server's load and locks",
        c if *c == SqlState::UNDEFINED_TABLE => {
            "a sentinel table is missing: was it dropped by hand? restore it or point the sentinel at a fresh database"
        }
        c if session_ends(c) => "the server ended the session (restart or shutdown); the next call reconnects",
        _ => return text,
    };
    format!("{text}; {hint}")
}

/// What failed in PostgreSQL itself.
#[derive(Debug)]
pub(crate) enum PgFail {
    /// A statement failed.
    Statement(tokio_postgres::Error),
    /// Connecting failed.
    Connect(tokio_postgres::Error),
    /// The connection failed while committing: the outcome is unknown.
    CommitLost(tokio_postgres::Error),
}

/// Why a PostgreSQL call failed, before the location is known.
pub(crate) type Fail = crate::store_fail::StoreFail<PgFail>;

impl From<tokio_postgres::Error> for Fail {
    fn from(e: tokio_postgres::Error) -> Fail {
        Fail::Backend(PgFail::Statement(e))
    }
}

impl PgFail {
    /// Whether the connection must be replaced after this failure.
    pub(super) fn breaks_connection(&self) -> bool {
        let (PgFail::Statement(e) | PgFail::Connect(e) | PgFail::CommitLost(e)) = self;
        e.is_closed() || e.as_db_error().is_none_or(|db| session_ends(db.code()))
    }

    /// The port's error: what failed and what to do.
    pub(super) fn store_error(location: &str, doing: &str, fail: PgFail) -> StoreError {
        let location = location.to_string();
        match fail {
            PgFail::Statement(e) => {
                let message = format!("{doing}: {}", advice(&e));
                StoreError::Unavailable { location, message }
            }
            PgFail::Connect(e) => {
                let mut message = format!("{doing}: {}", advice(&e));
                if e.as_db_error().is_none() {
                    message.push_str(&format!(
                        "; check that PostgreSQL is running at {location} and accepts TCP connections \
                         (listen_addresses, port, firewall)"
                    ));
                }
                StoreError::Unavailable { location, message }
            }
            PgFail::CommitLost(e) => StoreError::Unavailable {
                message: format!(
                    "{doing}: the connection was lost while committing ({}); the change may or may not have \
                     been saved. The next call reconnects",
                    describe(&e)
                ),
                location,
            },
        }
    }
}

impl Fail {
    /// Whether the connection must be replaced after this failure.
    pub(super) fn breaks_connection(&self) -> bool {
        matches!(self, Fail::Backend(pg) if pg.breaks_connection())
    }

    /// The port's error for the store at `location`, while `doing` something.
    pub(super) fn into_store_error(self, location: &str, doing: &str) -> StoreError {
        self.described(location, doing, PgFail::store_error)
    }
}
