//! The test servers themselves: a server the harness hands out is ready for a session, not
//! only listening. PostgreSQL listens before it accepts sessions (it answers "the database
//! system is starting up" while it starts or recovers from a crash), so a harness that only
//! waits for the port hands out a server that refuses the first test's connection.

use capacity_tests::servers::postgres::Postgres;

async fn session_now(url: &str) -> Result<(), tokio_postgres::Error> {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(conn);
    client.batch_execute("SELECT 1").await
}

#[tokio::test]
async fn a_started_or_restarted_postgres_accepts_a_session_at_once() {
    let mut server = Postgres::start();
    session_now(&server.url()).await.unwrap_or_else(|e| panic!("a session right after start: {e}"));
    // Crash recovery after a SIGKILL makes the window between listening and accepting wider.
    for round in 1..=5 {
        server.kill();
        server.restart();
        session_now(&server.url()).await.unwrap_or_else(|e| panic!("a session right after restart {round}: {e}"));
    }
}
