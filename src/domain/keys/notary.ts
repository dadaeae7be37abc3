// Serving as a notary: other servers' key documents as we fetched them (and our own), each countersigned
// by us. A cached document that is not valid until the asked minimum_valid_until_ts (default: now) is
// refreshed from the server itself first; what we then have is returned (the asker judges validity).
// Spec: Server-Server API "Querying Keys Through Another Server" (GET/POST /_matrix/key/v2/query).
import type { Services } from "../services.ts";
import { badJson } from "../errors.ts";
import { isValidServerName } from "../ids.ts";
import { signJson } from "../signing.ts";
import { buildServerKeysResponse } from "./server-keys.ts";

/** server name → key id → criteria; no key ids means every key. */
export type KeyQuery = Record<string, Record<string, { minimum_valid_until_ts?: number }>>;

/** Servers refreshed at once while answering one query. */
const REFRESH_CONCURRENCY = 8;

/** Validates a POST /_matrix/key/v2/query body; M_BAD_JSON when it is not `{server_keys: {name: {keyId: {...}}}}`. */
export function parseKeyQuery(body: Record<string, unknown>): KeyQuery {
  const sk = body.server_keys;
  if (typeof sk !== "object" || sk === null || Array.isArray(sk)) throw badJson("server_keys must be an object");
  const out: KeyQuery = {};
  for (const [server, keys] of Object.entries(sk)) {
    if (typeof keys !== "object" || keys === null || Array.isArray(keys)) throw badJson(`server_keys.${server} must be an object`);
    const criteria: KeyQuery[string] = {};
    for (const [keyId, c] of Object.entries(keys)) {
      if (typeof c !== "object" || c === null || Array.isArray(c)) throw badJson(`criteria of ${keyId} must be an object`);
      const min = (c as { minimum_valid_until_ts?: unknown }).minimum_valid_until_ts;
      if (min !== undefined && min !== null && !Number.isSafeInteger(min)) throw badJson("minimum_valid_until_ts must be an integer");
      criteria[keyId] = typeof min === "number" ? { minimum_valid_until_ts: min } : {};
    }
    out[server] = criteria;
  }
  return out;
}

async function inBatches<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

/** The notary answer for `query`: `{server_keys: [signed key documents]}`. */
export async function queryServerKeys(s: Services, query: KeyQuery): Promise<{ server_keys: Record<string, unknown>[] }> {
  const now = s.clock.now();
  const own = s.config.server_name;
  const remote = Object.keys(query).filter((name) => name !== own && isValidServerName(name));

  // Refresh the servers whose cached keys do not cover what was asked.
  const stale: { name: string; min: number }[] = [];
  for (const name of remote) {
    const criteria = query[name]!;
    const rows = await s.serverKeys.forServer(name);
    const wanted = Object.keys(criteria);
    const min = Math.max(now, ...wanted.map((id) => criteria[id]!.minimum_valid_until_ts ?? now));
    const covered = wanted.length === 0
      ? rows.some((r) => r.expiredTs === null && r.validUntilTs >= min)
      : wanted.every((id) => rows.some((r) => r.keyId === id && r.validUntilTs >= (criteria[id]!.minimum_valid_until_ts ?? now)));
    if (!covered) stale.push({ name, min });
  }
  await inBatches(stale, REFRESH_CONCURRENCY, (x) => s.keyRing.refreshDirect(x.name, x.min));

  const docs: Record<string, unknown>[] = [];
  if (own in query) {
    docs.push(buildServerKeysResponse({ serverName: own, keys: s.signingKeys, validityMs: s.config.key_refresh_interval, now }) as unknown as Record<string, unknown>);
  }
  for (const name of remote) {
    const wanted = new Set(Object.keys(query[name]!));
    const texts = new Set<string>();
    for (const row of await s.serverKeys.forServer(name)) if (wanted.size === 0 || wanted.has(row.keyId)) texts.add(row.keyJson);
    for (const text of texts) {
      let doc = JSON.parse(text) as Record<string, unknown>;
      for (const key of s.signingKeys) doc = signJson(doc, own, key);
      docs.push(doc);
    }
  }
  return { server_keys: docs };
}
