//! Hop 3: reconcile each declared stage target toward the policy's intent. Planning is pure;
//! applying calls the controller, and a failed target keeps its old status so the next tick
//! tries again. Stages may differ for a while.

use super::{Sentinel, backstop};
use crate::ports::memory::StageStatus;
use crate::ports::stages::StageTarget;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageAction {
    Engage,
    Restore,
}

/// The targets whose status differs from what the policy wants, and what to do to each.
pub fn plan_stages<'a>(
    targets: &'a [StageTarget],
    status: &BTreeMap<String, StageStatus>,
    engaged: bool,
) -> Vec<(&'a StageTarget, StageAction)> {
    targets
        .iter()
        .filter(|t| status.get(&t.id()).is_some_and(|s| s.engaged) != engaged)
        .map(|t| (t, if engaged { StageAction::Engage } else { StageAction::Restore }))
        .collect()
}

/// Applies the plan; returns the new status of every target and the failures.
pub async fn reconcile(
    s: &Sentinel,
    status: &BTreeMap<String, StageStatus>,
    engaged: bool,
) -> (BTreeMap<String, StageStatus>, Vec<String>) {
    let mut next = status.clone();
    let mut failures = Vec::new();
    for (target, action) in plan_stages(&s.settings.stage_targets, status, engaged) {
        let id = target.id();
        let original = status.get(&id).and_then(|s| s.original.clone());
        let call = async {
            match action {
                StageAction::Engage => s.ports.stages.engage(target).await,
                StageAction::Restore => s.ports.stages.restore(target, original.as_ref()).await.map(|()| None),
            }
        };
        match backstop::within(s.settings.publish_timeout, call).await {
            Ok(Ok(original)) => {
                let status = match action {
                    StageAction::Engage => StageStatus { engaged: true, original },
                    StageAction::Restore => StageStatus { engaged: false, original: None },
                };
                next.insert(id, status);
            }
            Ok(Err(e)) => failures.push(e.to_string()),
            Err(waited) => {
                failures.push(format!("stage {id}: did not end within {waited:?} (its timeout {:?})", s.settings.publish_timeout))
            }
        }
    }
    for _ in &failures {
        s.telemetry.stage_failures.inc();
    }
    (next, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(stage: &str) -> StageTarget {
        StageTarget { rest_api_id: "api".into(), stage: stage.into(), rate_limit: 10.0, burst_limit: 20 }
    }

    fn engaged() -> StageStatus {
        StageStatus { engaged: true, original: None }
    }

    #[test]
    fn engages_only_targets_not_yet_engaged() {
        let targets = [target("a"), target("b")];
        let status = BTreeMap::from([("api/a".to_string(), engaged())]);
        let plan = plan_stages(&targets, &status, true);
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].0.stage, "b");
        assert_eq!(plan[0].1, StageAction::Engage);
    }

    #[test]
    fn restores_engaged_targets_when_released() {
        let targets = [target("a"), target("b")];
        let status = BTreeMap::from([("api/a".to_string(), engaged()), ("api/b".to_string(), StageStatus::default())]);
        let plan = plan_stages(&targets, &status, false);
        assert_eq!(plan.iter().map(|(t, a)| (t.stage.as_str(), *a)).collect::<Vec<_>>(), vec![("a", StageAction::Restore)]);
    }

    #[test]
    fn nothing_to_do_when_every_target_matches() {
        let targets = [target("a")];
        assert!(plan_stages(&targets, &BTreeMap::new(), false).is_empty());
    }
}
