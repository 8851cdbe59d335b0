//! `BaselineStore`: latency samples (written by each tick's commit) and the hourly baselines.

use super::{Fail, PgFail, PostgresStore};
use sentinel_core::ports::StoreError;
use sentinel_core::ports::baselines::{BaselineStore, group_by_api};
use vocabulary::{ApiBaseline, ApiSamples, Instant, LatencySample};

#[async_trait::async_trait]
impl BaselineStore for PostgresStore {
    async fn latest_baselines(&self) -> Result<Option<(Instant, Vec<ApiBaseline>)>, StoreError> {
        // One statement: the newest hour (NULL when none was saved) and its baselines, if any.
        self.run_statement("reading the baselines", |c| {
            Box::pin(async move {
                let rows = c
                    .query_typed(
                        "SELECT h.hour, b.api, b.baseline_ms, b.samples
                         FROM (SELECT MAX(hour) AS hour FROM baseline_hours) h
                         LEFT JOIN baselines b ON b.hour = h.hour
                         ORDER BY b.api",
                        &[],
                    )
                    .await?;
                let Some(hour) = rows.first().map(|row| row.try_get::<_, Option<Instant>>(0)).transpose()?.flatten() else {
                    return Ok(None);
                };
                let baselines = rows
                    .iter()
                    .filter_map(|row| match row.try_get::<_, Option<String>>(1) {
                        Ok(Some(api)) => Some(Ok((api, row))),
                        Ok(None) => None, // the hour was saved with no API
                        Err(e) => Some(Err(Fail::Backend(PgFail::Statement(e)))),
                    })
                    .map(|found| {
                        let (api, row) = found?;
                        let samples: i64 = row.try_get(3)?;
                        let samples = u32::try_from(samples).map_err(|_| {
                            Fail::corrupt(
                                "the baselines",
                                format!(
                                    "hour {hour}, api {api}: sample count {samples} is out of range; \
                                     the next hourly recompute replaces it"
                                ),
                            )
                        })?;
                        Ok(ApiBaseline { api, baseline_ms: row.try_get(2)?, samples })
                    })
                    .collect::<Result<Vec<_>, Fail>>()?;
                Ok(Some((hour, baselines)))
            })
        })
        .await
    }

    async fn samples_since(&self, from: Instant) -> Result<Vec<ApiSamples>, StoreError> {
        self.run_statement("reading the latency samples", move |c| {
            Box::pin(async move {
                let rows = c.query("SELECT api, at, p95_ms FROM latency_samples WHERE at >= $1 ORDER BY api, at", &[&from]).await?;
                let mut samples = Vec::with_capacity(rows.len());
                for row in rows {
                    samples.push((row.try_get(0)?, LatencySample { at: row.try_get(1)?, p95_ms: row.try_get(2)? }));
                }
                Ok(group_by_api(samples))
            })
        })
        .await
    }

    async fn save_baselines(&self, hour: Instant, baselines: &[ApiBaseline], prune_before: Instant) -> Result<(), StoreError> {
        let baselines = baselines.to_vec();
        self.run("saving the baselines", move |c| {
            Box::pin(async move {
                c.execute("DELETE FROM baselines WHERE hour = $1", &[&hour]).await?;
                if !baselines.is_empty() {
                    let insert = c
                        .prepare(
                            "INSERT INTO baselines (hour, api, baseline_ms, samples) VALUES ($1, $2, $3, $4)
                             ON CONFLICT (hour, api) DO UPDATE
                             SET baseline_ms = excluded.baseline_ms, samples = excluded.samples",
                        )
                        .await?;
                    for b in &baselines {
                        // A non-finite baseline is kept as none, as the SQLite store does.
                        let baseline_ms = b.baseline_ms.filter(|ms| ms.is_finite());
                        c.execute(&insert, &[&hour, &b.api, &baseline_ms, &i64::from(b.samples)]).await?;
                    }
                }
                c.execute(
                    "INSERT INTO baseline_hours (hour, saved_at) VALUES ($1, now())
                     ON CONFLICT (hour) DO UPDATE SET saved_at = excluded.saved_at",
                    &[&hour],
                )
                .await?;
                c.execute("DELETE FROM latency_samples WHERE at < $1", &[&prune_before]).await?;
                Ok(())
            })
        })
        .await
    }
}
