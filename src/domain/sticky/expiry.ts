// The hourly sweep of expired sticky events (MSC4354, a background task declared in src/main.ts with
// experimental_features.msc4354_enabled): rows past their expiry are never read (every read filters on
// expires_at), so this only bounds the table; as Synapse's DELETE_EXPIRED_STICKY_EVENTS_INTERVAL.
import type { BackgroundTask } from "../extensions.ts";

export const STICKY_SWEEP_INTERVAL_MS = 60 * 60_000;

export const stickyEventsSweeper: BackgroundTask = (s) => {
  let running: Promise<unknown> | undefined;
  const sweep = () => {
    running ??= s.sticky
      .deleteExpired(s.clock.now())
      .catch((err: unknown) => s.log.warn({ err }, "sticky events: deleting expired rows failed"))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(sweep, STICKY_SWEEP_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
};
