// What a client learns about this server before and beside the API: GET /.well-known/matrix/client
// (spec: Client-Server API "Server Discovery": `m.homeserver`, `m.identity_server`, and extra keys such
// as MSC4143's `org.matrix.msc4143.rtc_foci`) and MatrixRTC's transports (MSC4143:
// GET /_matrix/client/unstable/org.matrix.msc4143/rtc/transports), both from the same configured list.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { MatrixError } from "../errors.ts";
import type { Config } from "../../config/config.ts";
import { wellKnownAuthentication } from "./auth-metadata.ts";

/** MSC4143's `rtc_foci` key of the client .well-known document (Element Call reads it there). */
export const RTC_FOCI_KEY = "org.matrix.msc4143.rtc_foci";

/**
 * The client .well-known document: the server's own keys (with delegated authentication, MSC2965's
 * `org.matrix.msc2965.authentication`), `extra_well_known_client_content`'s (which the
 * config keeps off the server's own, as Synapse's does), and the configured MatrixRTC transports as
 * `rtc_foci` unless the extra content already names them.
 */
export async function clientWellKnown(s: Services): Promise<Record<string, unknown>> {
  const c = s.config;
  const doc: Record<string, unknown> = { "m.homeserver": { base_url: c.public_baseurl.replace(/\/$/, "") } };
  if (c.default_identity_server) doc["m.identity_server"] = { base_url: c.default_identity_server };
  // Delegated authentication (MSC3861): where clients log in and manage the account (MSC2965).
  const authentication = await wellKnownAuthentication(s);
  if (authentication) doc["org.matrix.msc2965.authentication"] = authentication;
  for (const [key, value] of Object.entries(c.extra_well_known_client_content)) {
    if (!(key in doc)) doc[key] = value;
  }
  if (!(RTC_FOCI_KEY in doc) && c.matrix_rtc.transports.length > 0) doc[RTC_FOCI_KEY] = c.matrix_rtc.transports.map((t) => ({ ...t }));
  return doc;
}

/**
 * Whether MSC4143's endpoint is served: with Synapse's `experimental_features.msc4143_enabled`, or once
 * transports are configured (an operator who lists them wants clients to find them). Otherwise it is
 * unknown (404 M_UNRECOGNIZED, as on Synapse), which clients read as "not supported".
 */
export function rtcTransportsServed(c: Pick<Config, "experimental_features" | "matrix_rtc">): boolean {
  return c.experimental_features.msc4143_enabled || c.matrix_rtc.transports.length > 0;
}

/**
 * The MatrixRTC transports for a signed-in client: `{rtc_transports: [...]}`, or `{}` when none are
 * configured (Synapse's answer then). Any signed-in user but a guest may ask (as Synapse).
 */
export function rtcTransports(s: Services, requester: Requester): { rtc_transports?: Record<string, unknown>[] } {
  if (!rtcTransportsServed(s.config)) throw new MatrixError("M_UNRECOGNIZED", "Unrecognized request", 404);
  requireNotGuest(requester, "rtcTransports");
  const list = s.config.matrix_rtc.transports;
  return list.length > 0 ? { rtc_transports: list.map((t) => ({ ...t })) } : {};
}
