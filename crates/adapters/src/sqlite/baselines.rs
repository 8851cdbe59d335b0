//! `BaselineStore`: latency samples (written by each tick's commit) and the hourly baselines.

use super::{Fail, SqliteStore, wall_clock};
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::baselines::{BaselineStore, group_by_api};
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample};

#[async_trait::async_trait]
impl BaselineStore for SqliteStore {
    async fn latest_baselines(&self) -> Result<Option<(Instant, Vec<ApiBaseline>)>, StoreError> {
        self.run("reading the baselines", |conn| {
            let hour: Option<Instant> = conn.query_row("SELECT MAX(hour) FROM baseline_hours", [], |row| row.get(0)).optional()?.flatten();
            let Some(hour) = hour else { return Ok(None) };
            let mut stmt = conn.prepare_cached("SELECT api, baseline_ms, samples FROM baselines WHERE hour = ?1 ORDER BY api")?;
            let rows =
                stmt.query_map([hour], |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<f64>>(1)?, row.get::<_, i64>(2)?)))?;
            let baselines = rows
                .map(|row| {
                    let (api, baseline_ms, samples) = row?;
                    let samples = u32::try_from(samples).map_err(|_| {
                        Fail::corrupt(
                            "the baselines",
                            format!(
                                "hour {hour}, api {api}: sample count {samples} is out of range; \
                                 the next hourly recompute replaces it"
                            ),
                        )
                    })?;
                    Ok(ApiBaseline { api, baseline_ms, samples })
                })
                .collect::<Result<Vec<_>, Fail>>()?;
            Ok(Some((hour, baselines)))
        })
        .await
    }

    async fn samples_since(&self, from: Instant) -> Result<Vec<ApiSamples>, StoreError> {
        self.run("reading the latency samples", move |conn| {
            let mut stmt = conn.prepare_cached("SELECT api, at, p95_ms FROM latency_samples WHERE at >= ?1 ORDER BY api, at")?;
            let rows =
                stmt.query_map([from], |row| Ok((row.get::<_, String>(0)?, LatencySample { at: row.get(1)?, p95_ms: row.get(2)? })))?;
            Ok(group_by_api(rows.collect::<Result<Vec<_>, _>>()?))
        })
        .await
    }

    async fn save_baselines(&self, hour: Instant, baselines: &[ApiBaseline], prune_before: Instant) -> Result<(), StoreError> {
        let baselines = baselines.to_vec();
        self.run("saving the baselines", move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute("DELETE FROM baselines WHERE hour = ?1", [hour])?;
            {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO baselines (hour, api, baseline_ms, samples) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (hour, api) DO UPDATE
                     SET baseline_ms = excluded.baseline_ms, samples = excluded.samples",
                )?;
                for b in &baselines {
                    // A non-finite baseline would be stored as NULL or Inf: keep it as none.
                    let baseline_ms = b.baseline_ms.filter(|ms| ms.is_finite());
                    insert.execute(params![hour, b.api, baseline_ms, b.samples])?;
                }
            }
            tx.execute(
                "INSERT INTO baseline_hours (hour, saved_at) VALUES (?1, ?2)
                 ON CONFLICT (hour) DO UPDATE SET saved_at = excluded.saved_at",
                params![hour, wall_clock()],
            )?;
            tx.execute("DELETE FROM latency_samples WHERE at < ?1", [prune_before])?;
            tx.commit()?;
            Ok(())
        })
        .await
    }
}
