// The pushers API (spec: Client-Server API "Pushers": GET /pushers, POST /pushers/set): validation of a
// pusher (pushkey at most 512 bytes, app_id at most 64 characters, `http` pushers with a `data.url` whose
// path is /_matrix/push/v1/notify and whose address outbound requests may reach; `email` pushers stored
// for the mail sender to come), creation and replacement (other users' pushers with the same app_id and
// pushkey removed unless `append`), deletion with `kind: null`. The gateway queues follow (gateway/pool.ts).
import { isIP } from "node:net";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import type { Requester } from "../accounts/requester.ts";
import { isPlainObject } from "../events/types.ts";
import type { PusherRow } from "../store/pushers.ts";

export const NOTIFY_PATH = "/_matrix/push/v1/notify";
const invalid = (msg: string) => new MatrixError("M_INVALID_PARAM", msg, 400);

export interface PusherJson {
  pushkey: string;
  kind: string;
  app_id: string;
  app_display_name: string;
  device_display_name: string;
  profile_tag?: string;
  lang: string;
  data: Record<string, unknown>;
}

export function pusherJson(p: PusherRow): PusherJson {
  return {
    pushkey: p.pushkey,
    kind: p.kind,
    app_id: p.appId,
    app_display_name: p.appDisplayName,
    device_display_name: p.deviceDisplayName,
    ...(p.profileTag !== null ? { profile_tag: p.profileTag } : {}),
    lang: p.lang,
    data: p.data,
  };
}

export async function getPushers(s: Services, r: Requester): Promise<{ pushers: PusherJson[] }> {
  requireNotGuest(r, "pushers");
  return { pushers: (await s.push.pushers.store.ofUser(r.userId)).map(pusherJson) };
}

/** Checks an http pusher's URL: http(s), the notify path, and an address outbound requests may reach. */
export function checkGatewayUrl(s: Services, raw: unknown): string {
  if (typeof raw !== "string") throw invalid("data.url is required for http pushers");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("data.url is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid("data.url must be an https URL");
  if (url.pathname !== NOTIFY_PATH) throw invalid(`data.url must have the path ${NOTIFY_PATH}`);
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) && !s.push.pushers.policy.allows(host)) throw invalid("data.url points to an address this server may not reach (ip_range_blacklist)");
  return raw;
}

/**
 * A pusher to set (or, with `kind: null`, to delete) as either face sends it: REST's POST /pushers/set
 * body goes through pusherInputOf, GraphQL's PusherInput maps field by field.
 */
export interface PusherInput {
  kind: string | null;
  appId: string;
  pushkey: string;
  appDisplayName?: string;
  deviceDisplayName?: string;
  profileTag?: string;
  lang?: string;
  data?: Record<string, unknown>;
  append?: boolean;
}

/** POST /pushers/set's body as a PusherInput: the three keys every call needs, and the types of the others. */
export function pusherInputOf(body: Record<string, unknown>): PusherInput {
  const missing = ["kind", "app_id", "pushkey"].filter((k) => !(k in body));
  if (missing.length) throw new MatrixError("M_MISSING_PARAM", `Missing parameters: ${missing.join(", ")}`, 400);
  const { pushkey, app_id: appId, kind } = body;
  if (typeof pushkey !== "string") throw invalid("pushkey must be a string of at most 512 bytes");
  if (typeof appId !== "string") throw invalid("app_id must be a string of at most 64 characters");
  if (kind !== null && typeof kind !== "string") throw invalid("kind must be http, email or null");
  const input: PusherInput = { kind, appId, pushkey };
  if (kind === null) return input;
  for (const k of ["app_display_name", "device_display_name", "lang", "profile_tag"]) if (body[k] !== undefined && typeof body[k] !== "string") throw invalid(`${k} must be a string`);
  if (body.append !== undefined && typeof body.append !== "boolean") throw invalid("append must be a boolean");
  if (body.data !== undefined && !isPlainObject(body.data)) throw invalid("data must be an object");
  return {
    ...input,
    appDisplayName: body.app_display_name as string | undefined,
    deviceDisplayName: body.device_display_name as string | undefined,
    profileTag: body.profile_tag as string | undefined,
    lang: body.lang as string | undefined,
    data: body.data as Record<string, unknown> | undefined,
    append: body.append as boolean | undefined,
  };
}

export async function setPusher(s: Services, r: Requester, p: PusherInput): Promise<void> {
  requireNotGuest(r, "pushers");
  const { pushkey, appId, kind } = p;
  if (pushkey === "" || Buffer.byteLength(pushkey) > 512) throw invalid("pushkey must be a string of at most 512 bytes");
  if (appId === "" || appId.length > 64) throw invalid("app_id must be a string of at most 64 characters");
  if (kind === null) {
    if (await s.push.pushers.store.delete(r.userId, appId, pushkey)) s.push.pushers.removed(r.userId, appId, pushkey);
    return;
  }
  if (kind !== "http" && kind !== "email") throw invalid("kind must be http, email or null");
  const need = (["appDisplayName", "deviceDisplayName", "lang", "data"] as const).filter((k) => p[k] === undefined);
  if (need.length) throw new MatrixError("M_MISSING_PARAM", `Missing parameters: ${need.map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)).join(", ")}`, 400);
  const data = p.data!;
  if (kind === "http") {
    checkGatewayUrl(s, data.url);
    if (data.format !== undefined && typeof data.format !== "string") throw invalid("data.format must be a string");
  }
  const existing = await s.push.pushers.store.get(r.userId, appId, pushkey);
  const row: PusherRow = {
    userId: r.userId,
    appId,
    pushkey,
    kind,
    appDisplayName: p.appDisplayName!,
    deviceDisplayName: p.deviceDisplayName!,
    profileTag: p.profileTag ?? null,
    lang: p.lang!,
    data,
    deviceId: r.deviceId,
    pushkeyTs: s.clock.now(),
    // A new pusher starts at the current position: no notifications from before it existed.
    lastStreamOrdering: existing?.lastStreamOrdering ?? (await s.rooms.events.streamIds.current()),
    failingSince: existing?.failingSince ?? null,
  };
  const removed = await s.push.pushers.store.set(row, p.append === true);
  for (const q of removed) s.push.pushers.removed(q.userId, q.appId, q.pushkey);
  s.push.pushers.upserted(row);
}
