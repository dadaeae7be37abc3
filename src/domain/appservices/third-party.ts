// Third-party networks (spec: Client-Server API "Third-party Lookups"; Application Service API
// "Third-party networks"): the protocols the application services declare, each described by the
// services themselves (GET /_matrix/app/v1/thirdparty/protocol/{protocol}, kept an hour as Synapse does)
// and merged — the first description, with every service's instances, each given an instance_id
// "<service id>|<network id>" (the third_party_instance_id of /publicRooms); and lookups of users and
// locations relayed to the services and their results merged. Query fields are free-form strings (none
// is required); services are untrusted, so malformed answers and results are dropped.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { AppServiceRegistration } from "../../config/appservices.ts";
import { servicesForProtocol } from "../accounts/appservices.ts";
import { isPlainObject } from "../events/types.ts";
import { APP_SERVICE_PREFIX, ServiceUnreachable } from "./client.ts";

const PROTOCOL_CACHE_MS = 60 * 60 * 1000;

export type ThirdPartyKind = "user" | "location";
/** Query fields as a client sent them (a repeated one is a list). */
export type LookupFields = Record<string, string | string[]>;

async function getJson(s: Services, as: AppServiceRegistration, path: string, query?: LookupFields): Promise<unknown> {
  try {
    const a = await s.appservices.client.call(as, { method: "GET", path, query });
    if (a.status >= 200 && a.status < 300) return a.json;
    if (a.status !== 404) s.log.warn({ appservice: as.id, path, status: a.status }, "third-party query answered an error");
  } catch (err) {
    if (!(err instanceof ServiceUnreachable)) throw err;
    s.log.warn({ appservice: as.id, path, reason: err.message }, "third-party query failed");
  }
  return undefined;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/**
 * A service's protocol description in the spec's shape (Protocol: user_fields, location_fields, icon,
 * field_types of {regexp, placeholder}), or undefined; instances lacking desc, fields or network_id are
 * left out (the service is untrusted: what reaches our clients must match the spec's schema).
 */
function protocolOf(info: unknown): { instances: Record<string, unknown>[] } & Record<string, unknown> | undefined {
  if (!isPlainObject(info) || !Array.isArray(info.instances)) return undefined;
  if (!isStringList(info.user_fields) || !isStringList(info.location_fields) || typeof info.icon !== "string" || !isPlainObject(info.field_types)) return undefined;
  const fieldTypes = info.field_types;
  if (!Object.values(fieldTypes).every((f) => isPlainObject(f) && typeof f.regexp === "string" && typeof f.placeholder === "string")) return undefined;
  const instances = info.instances.filter(
    (i): i is Record<string, unknown> => isPlainObject(i) && typeof i.desc === "string" && isPlainObject(i.fields) && typeof i.network_id === "string" && (i.icon === undefined || typeof i.icon === "string"),
  );
  return { ...info, instances };
}

/** One service's description of a protocol, instances stamped with their instance_id; undefined if unusable. */
async function describe(s: Services, as: AppServiceRegistration, protocol: string): Promise<Record<string, unknown> | undefined> {
  const key = `${as.id}\u0000${protocol}`;
  const cached = s.appservices.protocols.get(key);
  if (cached && cached.expires > s.clock.now()) return cached.info;
  const info = await getJson(s, as, `${APP_SERVICE_PREFIX}/thirdparty/protocol/${encodeURIComponent(protocol)}`);
  const checked = protocolOf(info);
  if (!checked) {
    if (info !== undefined) s.log.warn({ appservice: as.id, protocol }, "application service described a protocol not in the spec's shape");
    return undefined;
  }
  const out = { ...checked, instances: checked.instances.map((i) => ({ ...i, instance_id: `${as.id}|${i.network_id}` })) };
  s.appservices.protocols.set(key, { info: out, expires: s.clock.now() + PROTOCOL_CACHE_MS });
  return out;
}

/** GET /thirdparty/protocols (or one protocol): protocol → the merged description of every service's. */
export async function thirdPartyProtocols(s: Services, only?: string): Promise<Record<string, Record<string, unknown>>> {
  const asked: { protocol: string; as: AppServiceRegistration }[] = [];
  for (const as of s.config.app_services) {
    if (as.url === null) continue;
    for (const protocol of as.protocols) if (only === undefined || protocol === only) asked.push({ protocol, as });
  }
  const answers = await Promise.all(asked.map((q) => describe(s, q.as, q.protocol)));
  // A Map, not an object: a protocol named "__proto__" (or "constructor") is a name like any other.
  const out = new Map<string, Record<string, unknown>>();
  asked.forEach(({ protocol }, i) => {
    const info = answers[i];
    if (!info) return;
    const merged = out.get(protocol);
    if (!merged) out.set(protocol, { ...info, instances: [...(info.instances as unknown[])] });
    else (merged.instances as unknown[]).push(...(info.instances as unknown[]));
  });
  return Object.fromEntries(out);
}

/** GET /thirdparty/protocol/{protocol}: 404 when no service describes it. */
export async function thirdPartyProtocol(s: Services, protocol: string): Promise<Record<string, unknown>> {
  const all = await thirdPartyProtocols(s, protocol);
  const found = Object.hasOwn(all, protocol) ? all[protocol] : undefined;
  if (!found) throw new MatrixError("M_NOT_FOUND", "Unknown protocol", 404);
  return found;
}

/** A result the spec allows: a user (userid) or location (alias) with its protocol and fields. */
function validResult(kind: ThirdPartyKind, r: unknown): r is Record<string, unknown> {
  const id = kind === "user" ? "userid" : "alias";
  return isPlainObject(r) && typeof r[id] === "string" && typeof r.protocol === "string" && isPlainObject(r.fields);
}

/**
 * GET /thirdparty/{kind}/{protocol} (with the client's fields), or the reverse lookups GET
 * /thirdparty/location?alias= and /thirdparty/user?userid= (no protocol: every service declaring one is
 * asked). 404 M_NOT_FOUND when nothing was found, as the spec says.
 */
export async function thirdPartyLookup(s: Services, kind: ThirdPartyKind, protocol: string | undefined, fields: LookupFields): Promise<Record<string, unknown>[]> {
  if (protocol === undefined) {
    const required = kind === "user" ? "userid" : "alias";
    if (fields[required] === undefined) throw new MatrixError("M_MISSING_PARAM", `Missing ${required} query parameter`, 400);
  }
  const services = (protocol === undefined ? s.config.app_services.filter((as) => as.protocols.length > 0) : servicesForProtocol(s.config, protocol)).filter((as) => as.url !== null);
  const path = `${APP_SERVICE_PREFIX}/thirdparty/${kind}${protocol === undefined ? "" : `/${encodeURIComponent(protocol)}`}`;
  const answers = await Promise.all(services.map((as) => getJson(s, as, path, fields)));
  const out: Record<string, unknown>[] = [];
  answers.forEach((a, i) => {
    if (a === undefined) return;
    if (!Array.isArray(a)) {
      s.log.warn({ appservice: services[i]!.id, path }, "third-party lookup answered something other than a list");
      return;
    }
    for (const r of a) if (validResult(kind, r)) out.push(r);
  });
  if (out.length === 0) throw new MatrixError("M_NOT_FOUND", kind === "user" ? "No third-party users found" : "No third-party locations found", 404);
  return out;
}
