// Options of what clients discover about this server outside the API proper: the client
// `.well-known` document's extra content (Synapse's `extra_well_known_client_content`,
// `default_identity_server`) and MatrixRTC's transports (Synapse's `matrix_rtc.transports`, MSC4143:
// the SFUs Element Call may use, e.g. `{type: livekit, livekit_service_url: https://...}`).
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

export interface ClientDiscoveryConfig {
  /** MSC4143 transports, as written (each a mapping with a string `type`; livekit needs its service URL). */
  matrix_rtc: { transports: Record<string, unknown>[] };
  /** Keys added to /.well-known/matrix/client (never m.homeserver or m.identity_server, which have their own options). */
  extra_well_known_client_content: Record<string, unknown>;
  /** Advertised as `m.identity_server` in /.well-known/matrix/client. */
  default_identity_server?: string;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function readTransport(raw: unknown, i: number): Record<string, unknown> {
  const name = `matrix_rtc.transports[${i}]`;
  if (!isMapping(raw)) throw new ConfigError(name, "must be a mapping");
  if (typeof raw.type !== "string" || raw.type === "") throw new ConfigError(`${name}.type`, "must be a non-empty string");
  const url = raw.livekit_service_url;
  if (url !== undefined && url !== null && typeof url !== "string") throw new ConfigError(`${name}.livekit_service_url`, "must be a string");
  if (raw.type === "livekit") {
    if (!url) throw new ConfigError(`${name}.livekit_service_url`, "is required for a livekit transport");
    if (!URL.canParse(url as string)) throw new ConfigError(`${name}.livekit_service_url`, "must be a URL");
  }
  return { ...raw };
}

export function readClientDiscoveryConfig(r: Reader): ClientDiscoveryConfig {
  const rtc = r.section("matrix_rtc");
  const transports = rtc.list("transports").map(readTransport);
  const extra = r.value("extra_well_known_client_content");
  if (extra !== undefined && extra !== null && !isMapping(extra)) throw new ConfigError("extra_well_known_client_content", "must be a mapping");
  // The server's own keys are set by their own options (Synapse refuses them here alike).
  if (isMapping(extra) && "m.homeserver" in extra) throw new ConfigError("extra_well_known_client_content", "may not set m.homeserver: it comes from public_baseurl");
  if (isMapping(extra) && "m.identity_server" in extra) throw new ConfigError("extra_well_known_client_content", "may not set m.identity_server: it comes from default_identity_server");
  const idServer = r.optString("default_identity_server");
  if (idServer !== undefined && !/^https?:\/\//.test(idServer)) throw new ConfigError("default_identity_server", "must be an http(s) URL");
  return {
    matrix_rtc: { transports },
    extra_well_known_client_content: isMapping(extra) ? { ...extra } : {},
    ...(idServer !== undefined ? { default_identity_server: idServer.replace(/\/$/, "") } : {}),
  };
}
