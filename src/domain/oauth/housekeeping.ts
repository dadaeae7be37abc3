// Hourly clean-up of Weft's own OAuth 2.0 server: expired authorisation codes (used ones included: a
// replay of an expired code is refused as unknown alike), browser sign-ins, device authorisation
// requests, cross-signing reset approvals and day-old retired refresh tokens. A background task
// (src/main.ts), idle unless oauth_server.enabled.
import type { BackgroundTask } from "../extensions.ts";
import type { Services } from "../services.ts";
import { oauthServerEnabled } from "./endpoints.ts";

export async function purgeExpiredOAuthRows(s: Services): Promise<number> {
  return s.oauth.purgeExpired(s.clock.now());
}

export const oauthHousekeeping: BackgroundTask = (s) => {
  if (!oauthServerEnabled(s)) return () => {};
  const timer = setInterval(() => {
    purgeExpiredOAuthRows(s).catch((err: unknown) => s.log.warn({ err }, "purging expired OAuth rows failed"));
  }, 60 * 60 * 1000);
  timer.unref();
  return () => clearInterval(timer);
};
