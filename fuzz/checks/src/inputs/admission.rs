//! `AdmissionRequest`s and `PlanRequest`s: factors at 0, 1, just inside and outside [0, 1],
//! NaN and infinities or absent; batch and in-flight counts at 0, 1, small and near
//! `u32::MAX`; queues of up to 1000 batches across a few workspaces (some without a profile, some listed twice) with
//! tied and absurd enqueue times, mostly unique batch ids.

use super::{Gen, NOW, vectors};
use arbitrary::Result;
use vocabulary::{AdmissionRequest, PlanRequest, QueuedBatch, WorkspaceLoad};

pub fn admission_request(g: &mut Gen) -> Result<AdmissionRequest> {
    if g.byte()? % 4 == 0 {
        let mut r = vectors::nth(vectors::admissions(), g.byte()?);
        match g.byte()? % 8 {
            0 => r.factor = factor(g)?,
            1 => r.share = g.count()?,
            2 => r.cluster_in_flight = g.count()?,
            3 => r.service_in_flight = g.count()?,
            4 => r.workspace_in_flight = g.count()?,
            _ => {}
        }
        return Ok(r);
    }
    Ok(AdmissionRequest {
        factor: factor(g)?,
        cluster_batches: g.count()?,
        service_batches: g.count()?,
        share: g.count()?,
        cluster_in_flight: g.count()?,
        service_in_flight: g.count()?,
        workspace_in_flight: g.count()?,
    })
}

pub fn plan_request(g: &mut Gen) -> Result<PlanRequest> {
    if g.byte()? % 4 == 0 {
        let mut r = vectors::nth(vectors::plans(), g.byte()?);
        match g.byte()? % 8 {
            0 => r.factor = factor(g)?,
            1 => r.queue.extend(queue(g)?),
            2 => r.workspaces = workspaces(g)?,
            3 => r.cluster_in_flight = g.count()?,
            4 => r.service_in_flight = g.count()?,
            _ => {}
        }
        return Ok(r);
    }
    Ok(PlanRequest {
        factor: factor(g)?,
        cluster_batches: g.count()?,
        service_batches: g.count()?,
        cluster_in_flight: g.count()?,
        service_in_flight: g.count()?,
        workspaces: workspaces(g)?,
        queue: queue(g)?,
    })
}

fn factor(g: &mut Gen) -> Result<Option<f64>> {
    if g.chance(24)? {
        return Ok(None);
    }
    Ok(Some(match g.byte()? % 4 {
        3 => g.pick(&[0.0, -0.0, 1.0, 1.0_f64.next_up(), 0.0_f64.next_down(), 5e-324, 0.5, 0.25])?,
        _ => g.number(0.0, 1.0, &[0.0, 0.5, 1.0])?,
    }))
}

/// A few short names, so queued batches mostly find their workspace's profile.
fn workspace(g: &mut Gen) -> Result<String> {
    if g.chance(32)? { g.text() } else { Ok(g.pick(&["acme", "beta", "gamma", "delta", ""])?.to_string()) }
}

fn workspaces(g: &mut Gen) -> Result<Vec<WorkspaceLoad>> {
    let n = g.len(5, 300)?;
    (0..n).map(|_| Ok(WorkspaceLoad { workspace: workspace(g)?, share: g.count()?, in_flight: g.count()? })).collect()
}

fn queue(g: &mut Gen) -> Result<Vec<QueuedBatch>> {
    let n = g.len(16, 1000)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let id = if g.chance(16)? { g.text()? } else { format!("b{i}") };
        let enqueued_at = if g.chance(32)? { g.instant_near(NOW)? } else { NOW + g.within(0, 20)? };
        out.push(QueuedBatch { id, workspace: workspace(g)?, enqueued_at });
    }
    Ok(out)
}
