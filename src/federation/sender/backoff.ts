// The retry schedule of a destination that does not answer: a few quick retries of the transaction while it
// is still counted up (Synapse's federation client's long retries), then Synapse's retry limiter: the first retry
// `destination_min_retry_interval` after the failure, then each interval `destination_retry_multiplier`
// times the last with jitter (×0.8–1.4, so many servers that failed together do not retry together),
// capped at `destination_max_retry_interval`. A success (or any signed request from the destination)
// resets it. Defaults (config/federation.ts): 1 min, ×2, at most 1 day — about 1, 2, 4, 8 ... minutes.
import type { FederationSection } from "../../config/federation.ts";
import type { DestinationRow } from "./store.ts";

/**
 * The delay before trying a failed transaction again while the destination is still counted up: the
 * `n`th retry (from 1) after 4^n seconds, at most `max_long_retry_delay`, jittered ×0.8–1.4 (Synapse's
 * long retries). Undefined once `max_long_retries` are spent: the destination is then down.
 */
export function quickRetryDelay(n: number, cfg: FederationSection, random: () => number = Math.random): number | undefined {
  if (n > cfg.max_long_retries) return undefined;
  return Math.round(Math.min(1000 * 4 ** n, cfg.max_long_retry_delay) * (0.8 + 0.6 * random()));
}

/** The next interval after a failure, given the current one (0: the destination was up). */
export function nextRetryInterval(current: number, cfg: FederationSection, random: () => number = Math.random): number {
  if (current <= 0) return cfg.destination_min_retry_interval;
  const next = Math.round(current * cfg.destination_retry_multiplier * (0.8 + 0.6 * random()));
  return Math.min(Math.max(next, cfg.destination_min_retry_interval), cfg.destination_max_retry_interval);
}

/** The destination's state after a failed attempt at `now`. */
export function afterFailure(d: DestinationRow, now: number, cfg: FederationSection, random?: () => number): DestinationRow {
  return { ...d, retryLastTs: now, retryInterval: nextRetryInterval(d.retryInterval, cfg, random), failureTs: d.failureTs ?? now };
}

/** The destination's state after a success at `now`. */
export function afterSuccess(d: DestinationRow, now: number): DestinationRow {
  return { ...d, retryLastTs: 0, retryInterval: 0, failureTs: null, lastSuccessTs: now };
}

/** When the next attempt may go (0: now). */
export function retryAt(d: DestinationRow): number {
  return d.retryInterval > 0 ? d.retryLastTs + d.retryInterval : 0;
}

export function isDown(d: DestinationRow): boolean {
  return d.retryInterval > 0;
}

export function upState(destination: string): DestinationRow {
  return { destination, retryLastTs: 0, retryInterval: 0, failureTs: null, lastSuccessTs: null };
}
