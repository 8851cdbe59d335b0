//! The alert rules for Prometheus (docs/behaviour.md §7.1), as data: what each alert watches,
//! how long before it fires, and what the operator reads when it does. `sentinel alert-rules`
//! writes them as a Prometheus rules file; `deploy/prometheus/sentinel-alerts.yml` is that output
//! at real time (a test keeps the two equal).
//!
//! In an expression, `{S:n}` is a duration of `n` seconds written as a number (compared with
//! `time()` or a gauge in seconds) and `{D:n}` is the same duration as a PromQL duration (a range
//! selector's `[...]`); `for_s` is the rule's `for:`. All three are divided by the time scale, so
//! a sentinel run `--speed 60` meets rules that wait a second where production waits a minute.
//! `FILE` in a description stands for the sentinel's config (`/etc/capacity-sentinel/sentinel.toml`
//! with the shipped systemd unit): the commands read the store and files it names.

/// How loud an alert is: `critical` pages, `warning` is for working hours, `info` is a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Pages whoever is on call: someone must act now.
    Critical,
    /// For working hours: something needs a look, not a page.
    Warning,
    /// A record worth knowing (a pin about to expire, a diverging shadow); no action is needed.
    Info,
}

impl Severity {
    /// The rule's `severity` label as written in the rules file (`critical`, `warning`, `info`).
    pub fn name(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One alerting rule.
#[derive(Debug, Clone, Copy)]
pub struct AlertRule {
    /// The alert's name (`alert:` in the rules file), such as `SentinelNotPublishing`.
    pub name: &'static str,
    /// How loud it is: the rule's `severity` label.
    pub severity: Severity,
    /// The PromQL expression that fires it, with `{S:n}` and `{D:n}` duration placeholders.
    pub expr: &'static str,
    /// How long the expression must hold before the alert fires (none: at once).
    pub for_s: Option<u32>,
    /// What is wrong, in one line (the `summary` annotation).
    pub summary: &'static str,
    /// What it means and what to do; Prometheus templates (`{{ $labels.channel }}`) allowed.
    pub description: &'static str,
}

/// Every alerting rule on the sentinel, in the order `sentinel alert-rules` writes them.
pub const RULES: &[AlertRule] = &[
    AlertRule {
        name: "SentinelNotPublishing",
        severity: Severity::Critical,
        expr: "time() - max by (job) (max_over_time(sentinel_last_publication_timestamp_seconds[{D:604800}])) > {S:180}",
        for_s: None,
        summary: "The sentinel has published no state for 3 minutes",
        description: "Neither channel has received a state document from {{ $labels.job }} for {{ $value | humanizeDuration }}. \
                      Services act on the last published factor until the cache entry expires, then on full capacity. \
                      Check that the sentinel process runs (systemctl status capacity-sentinel, its log) and list its failed \
                      ticks with `sentinel failures --config FILE`; pin a state with `sentinel pin set ... --config FILE` once it runs again if the database \
                      needs protection now.",
    },
    AlertRule {
        name: "SentinelNeverPublished",
        severity: Severity::Critical,
        expr: "absent_over_time(sentinel_last_publication_timestamp_seconds[{D:604800}])",
        for_s: Some(300),
        summary: "No sentinel has published a state in the last week",
        description: "Prometheus holds no successful publication of any sentinel for 7 days: a first deployment that never \
                      started (a refused configuration restarting in a loop), a scrape job that does not reach the metrics \
                      address, or a sentinel that never managed to publish. Check the service (systemctl status \
                      capacity-sentinel and its log: a refused configuration names the key), that Prometheus scrapes \
                      --metrics-addr, and `sentinel failures --config FILE`.",
    },
    AlertRule {
        name: "SentinelBothChannelsFailing",
        severity: Severity::Critical,
        expr: "max without (channel) (sentinel_channel_up) == 0",
        for_s: Some(120),
        summary: "The sentinel cannot publish to either channel",
        description: "{{ $labels.instance }} decides every minute but both the cache (Redis) and the parameter (SSM) refuse \
                      the document: every tick fails and is recorded as a dead letter. Read the reasons with `sentinel failures --config FILE`, \
                      then restore the Redis server or the AWS credentials and SSM access named there; the next tick publishes \
                      both again.",
    },
    AlertRule {
        name: "SentinelChannelFailing",
        severity: Severity::Warning,
        expr: "sentinel_channel_up == 0 unless on (job, instance) (max without (channel) (sentinel_channel_up) == 0)",
        for_s: Some(600),
        summary: "The sentinel's {{ $labels.channel }} channel has failed for 10 minutes",
        description: "Publications to {{ $labels.channel }} from {{ $labels.instance }} have failed for 10 minutes; the other \
                      channel still carries the state, so services reading it are unaffected, but the two channels no longer \
                      agree. The sentinel's log names the error of each failed publication (`publication failed`). For the \
                      cache, check the Redis server and its credentials; for the parameter, the AWS credentials, region and \
                      the role's ssm:GetParameter and ssm:PutParameter permissions.",
    },
    AlertRule {
        name: "SentinelSignalLost",
        severity: Severity::Warning,
        expr: "sentinel_decision_cause{cause=\"signal-lost-release\"} == 1",
        for_s: Some(120),
        summary: "The sentinel cannot read the database's pressure and has released protection",
        description: "{{ $labels.instance }} has failed to read its metrics source several minutes in a row, so the policy \
                      released protection (state normal, throttles released) rather than hold it on no evidence. The \
                      database is unprotected until readings return. Check the metrics source named in the sentinel's log \
                      (`prometheus query failed`, `read failed`); if the database is under pressure meanwhile, pin a state \
                      with `sentinel pin set ... --config FILE`.",
    },
    AlertRule {
        name: "SentinelPolicyRolledBack",
        severity: Severity::Critical,
        expr: "increase(sentinel_policy_rollbacks_total[{D:3600}]) > 0 or (sentinel_policy_rollbacks_total > 0 and on (job, instance) time() - sentinel_start_time_seconds < {S:3600})",
        for_s: None,
        summary: "A policy version failed during a tick and the sentinel rolled back",
        description: "{{ $labels.instance }} ran a tick again with the last good policy after the active version trapped, \
                      timed out or hit its memory cap. The failed version is no longer active. Find it and its error with \
                      `sentinel policy list --config FILE` and the log (`failed during a tick`), fix or withdraw it from the policy directory, \
                      and replay it (`sentinel replay`) before shipping it again.",
    },
    AlertRule {
        name: "SentinelPolicyRefused",
        severity: Severity::Warning,
        expr: "increase(sentinel_policy_refusals_total[{D:3600}]) > 0 or (sentinel_policy_refusals_total > 0 and on (job, instance) time() - sentinel_start_time_seconds < {S:3600})",
        for_s: None,
        summary: "A policy version was refused at activation",
        description: "{{ $labels.instance }} refused a candidate policy version (signature, digest, contract version, checks \
                      or its trial replay); the previous version stays active. The sentinel's error log line names the version \
                      and why (`sentinel policy list --config FILE` shows its health); fix the release and drop it in the policy directory again.",
    },
    AlertRule {
        name: "SentinelEmergencyProlonged",
        severity: Severity::Critical,
        expr: "sentinel_in_state{state=\"emergency\"} == 1",
        for_s: Some(1200),
        summary: "The database has been in emergency for 20 minutes",
        description: "{{ $labels.instance }} has held the emergency state for 20 minutes: bulk work is stopped and, if enabled, \
                      API stages are throttled. The pressure is not going away on its own. Look at the dashboard's readings \
                      against the thresholds, find the workload that loads the database, and act on it; `sentinel pin show --config FILE` \
                      tells whether a staff pin holds the state.",
    },
    AlertRule {
        name: "SentinelStageThrottlesEngaged",
        severity: Severity::Warning,
        expr: "sum by (job, instance) (sentinel_stage_throttled) > 0",
        for_s: None,
        summary: "Emergency API stage throttles are engaged",
        description: "{{ $labels.instance }} has throttled {{ $value }} API stage(s): clients are being refused by API Gateway. \
                      `sentinel stages show --config FILE` lists each target and its original limits. They are restored automatically when the \
                      policy releases them; clear an emergency pin, if one holds them, with `sentinel pin clear --actor NAME --config FILE`.",
    },
    AlertRule {
        name: "SentinelStageRestoreFailing",
        severity: Severity::Critical,
        expr: "sentinel_stages_left_throttled > 0",
        for_s: Some(300),
        summary: "API stages stay throttled although the policy released them",
        description: "{{ $labels.instance }} cannot restore {{ $value }} API stage(s) for 5 minutes. The log names each stage \
                      and the controller's error every tick. Fix the API Gateway permissions or restore the stage-wide limits \
                      by hand from `sentinel stages show --config FILE`, then delete its row as the log line says.",
    },
    AlertRule {
        name: "SentinelPinExpiringSoon",
        severity: Severity::Info,
        expr: "(sentinel_pin_expires_timestamp_seconds - time() < {S:1800}) and on (job, instance) sentinel_pin_active == 1",
        for_s: None,
        summary: "The staff pin expires within 30 minutes",
        description: "The pin on {{ $labels.instance }} expires in {{ $value | humanizeDuration }}; then the automatic rules \
                      decide again. If the pinned state is still needed, extend it with `sentinel pin set ... --config FILE` (its reason is \
                      audited); otherwise let it expire.",
    },
    AlertRule {
        name: "SentinelPinOld",
        severity: Severity::Warning,
        expr: "(time() - sentinel_pin_set_timestamp_seconds > {S:43200}) and on (job, instance) sentinel_pin_active == 1",
        for_s: None,
        summary: "A staff pin has overridden the automatic rules for more than 12 hours",
        description: "A pin set {{ $value | humanizeDuration }} ago still decides the state on {{ $labels.instance }}. Check that \
                      it is still wanted (`sentinel pin show --config FILE`, `sentinel pin audit --config FILE`), and clear it with `sentinel pin clear --actor NAME --config FILE` \
                      if the incident is over.",
    },
    AlertRule {
        name: "SentinelShadowDiverging",
        severity: Severity::Info,
        expr: "increase(sentinel_shadow_divergences_total[{D:3600}]) > 0 or (sentinel_shadow_divergences_total > 0 and on (job, instance) time() - sentinel_start_time_seconds < {S:3600})",
        for_s: None,
        summary: "The shadow policy version decides differently from the active one",
        description: "The shadow version on {{ $labels.instance }} decided differently on {{ printf \"%.0f\" $value }} tick(s) in the last \
                      hour. This is the point of a shadow: compare the two with `sentinel policy shadow-report --config FILE` and an A/B \
                      replay \
                      before promoting it.",
    },
    AlertRule {
        name: "SentinelTicksFailing",
        severity: Severity::Warning,
        expr: "sum by (job, instance, reason) (increase(sentinel_tick_failures_total[{D:600}])) > 0 or (sum by (job, instance, reason) (sentinel_tick_failures_total) > 0 and on (job, instance) time() - sentinel_start_time_seconds < {S:600})",
        for_s: None,
        summary: "Sentinel ticks are failing ({{ $labels.reason }})",
        description: "{{ printf \"%.0f\" $value }} tick(s) of {{ $labels.instance }} failed in the last 10 minutes because of the \
                      {{ $labels.reason }}. Each left a dead letter with what it decided and why it failed: list them with \
                      `sentinel failures --config FILE`.",
    },
];
