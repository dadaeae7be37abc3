// Options of the unstable features (MSCs) Synapse gates behind configuration, with its names and defaults:
// `experimental_features.msc*_enabled` (and MSC4108's `msc4108_delegation_endpoint`), and delayed events (MSC4140: `max_event_delay_duration`, unset =
// off; `experimental_features.msc4140_max_delayed_events_per_user`; `rc_delayed_event_mgmt`).
import { ConfigError } from "./errors.ts";
import type { RateLimit, Reader } from "./config.ts";

export interface ExperimentalFeatures {
  /** MSC3391: deleting account data (DELETE, or PUT `{}`). */
  msc3391_enabled: boolean;
  /** MSC3890: deleting a device deletes its local notification settings (needs msc3391_enabled). */
  msc3890_enabled: boolean;
  /** MSC3874: `org.matrix.msc3874.rel_types` / `not_rel_types` in room event filters. */
  msc3874_enabled: boolean;
  /** MSC3381 polls: MSC3930's push rules for polls among the server-default rules. */
  msc3381_polls_enabled: boolean;
  /** MSC4155: invite filtering by `org.matrix.msc4155.invite_permission_config` account data. */
  msc4155_enabled: boolean;
  /** MSC4306: thread subscriptions, their push rules, and MSC4308 (their sliding-sync extension and /thread_subscriptions). */
  msc4306_enabled: boolean;
  /** MSC4277 (spec v1.18): reports answer 200 whatever their subject, and `score` is ignored. */
  msc4277_enabled: boolean;
  /** MSC4210 (spec v1.17): the legacy mention push rules removed from the server-default rules. */
  msc4210_enabled: boolean;
  /** MSC4143: MatrixRTC's rtc/transports endpoint (also on whenever `matrix_rtc.transports` lists any). */
  msc4143_enabled: boolean;
  /** MSC4222: /sync's `org.matrix.msc4222.use_state_after` (Synapse honours it only then). */
  msc4222_enabled: boolean;
  /** MSC4133: extended profiles also under /unstable/uk.tcpip.msc4133 and as `uk.tcpip.msc4133.profile_fields` (the stable API is always served). */
  msc4133_enabled: boolean;
  /** MSC4354: sticky events (`org.matrix.msc4354.sticky_duration_ms` on send, /sync's `msc4354_sticky`, the sliding-sync extension). */
  msc4354_enabled: boolean;
  /** MSC4140: how many delayed events a user may have scheduled at once (0: none, delayed events off). */
  msc4140_max_delayed_events_per_user: number;
  /** MSC4108: the rendezvous sessions QR-code login runs over (POST /unstable/org.matrix.msc4108/rendezvous). */
  msc4108_enabled: boolean;
  /** MSC4108: a rendezvous server elsewhere, which POST /unstable/org.matrix.msc4108/rendezvous answers 307 to. */
  msc4108_delegation_endpoint: string | undefined;
}

export interface ExperimentalConfig {
  experimental_features: ExperimentalFeatures;
  /** MSC4140: the longest delay a delayed event may have, ms (0 when unset: delayed events are off). */
  max_event_delay_duration: number;
  /** MSC4140: managing delayed events (list, cancel, restart, send), per user or per address. */
  rc_delayed_event_mgmt: RateLimit;
}

export function readExperimentalConfig(r: Reader): ExperimentalConfig {
  const x = r.section("experimental_features");
  const msc3391 = x.bool("msc3391_enabled", false);
  const msc3890 = x.bool("msc3890_enabled", false);
  if (msc3890 && !msc3391) throw new ConfigError("experimental_features.msc3890_enabled", "needs experimental_features.msc3391_enabled: true");
  x.value("msc3861"); // delegated authentication: read by oauth-delegation.ts
  const msc4108 = x.bool("msc4108_enabled", false);
  const msc4108Delegation = x.optString("msc4108_delegation_endpoint");
  if (msc4108Delegation !== undefined && !/^https?:\/\/[^/]/i.test(msc4108Delegation))
    throw new ConfigError("experimental_features.msc4108_delegation_endpoint", "must be an http(s) URL");
  if (msc4108 && msc4108Delegation !== undefined)
    throw new ConfigError("experimental_features.msc4108_delegation_endpoint", "cannot be set with msc4108_enabled: true (MSC4108 is either served here or delegated, as in Synapse)");
  const maxDelay = r.duration("max_event_delay_duration");
  if (maxDelay !== undefined && maxDelay <= 0) throw new ConfigError("max_event_delay_duration", "must be a positive duration if set");
  return {
    experimental_features: {
      msc3391_enabled: msc3391,
      msc3890_enabled: msc3890,
      msc3874_enabled: x.bool("msc3874_enabled", false),
      msc3381_polls_enabled: x.bool("msc3381_polls_enabled", false),
      msc4155_enabled: x.bool("msc4155_enabled", false),
      msc4306_enabled: x.bool("msc4306_enabled", false),
      msc4222_enabled: x.bool("msc4222_enabled", false),
      msc4143_enabled: x.bool("msc4143_enabled", false),
      msc4210_enabled: x.bool("msc4210_enabled", false),
      msc4277_enabled: x.bool("msc4277_enabled", false),
      msc4133_enabled: x.bool("msc4133_enabled", false),
      msc4354_enabled: x.bool("msc4354_enabled", false),
      msc4140_max_delayed_events_per_user: x.number("msc4140_max_delayed_events_per_user", 100, { min: 0, integer: true }),
      msc4108_enabled: msc4108,
      msc4108_delegation_endpoint: msc4108Delegation,
    },
    max_event_delay_duration: maxDelay ?? 0,
    rc_delayed_event_mgmt: r.rateLimit("rc_delayed_event_mgmt", { per_second: 1, burst_count: 5 }),
  };
}

/** Whether delayed events are on (Synapse: a maximum delay and a per-user maximum both set). */
export function delayedEventsEnabled(c: ExperimentalConfig): boolean {
  return c.max_event_delay_duration > 0 && c.experimental_features.msc4140_max_delayed_events_per_user > 0;
}
