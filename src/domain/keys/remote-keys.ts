// Turning another server's key answers into keys we keep: a `GET /_matrix/key/v2/server` response must be
// self-signed and name the server we asked; each entry of a notary's `POST /_matrix/key/v2/query` answer
// must be self-signed by its server and, when the notary's verify_keys are configured, signed by the
// notary too. valid_until_ts is capped at 7 days after we fetched it (room versions 5+ rule).
// Spec: Server-Server API "Retrieving server keys", keys_server / keys_query definitions.
import { verifyServerKeysResponse } from "./server-keys.ts";
import type { StoredServerKey } from "../store/server-keys.ts";
import { ED25519, keyAlgorithm, verifyJsonSignature } from "../signing.ts";
import type { TrustedKeyServer } from "../../config/federation.ts";

/** Servers must not trust a key document for more than 7 days from when they fetched it. */
export const MAX_KEY_VALIDITY_MS = 7 * 86_400_000;

export type KeysResult = { ok: true; keys: StoredServerKey[] } | { ok: false; reason: string };

/** The keys a verified key document carries (current and old), ready to store. */
function keysOf(doc: Record<string, unknown>, fromServer: string, now: number): StoredServerKey[] {
  const serverName = doc.server_name as string;
  const keyJson = JSON.stringify(doc);
  const validUntil = Math.min(doc.valid_until_ts as number, now + MAX_KEY_VALIDITY_MS);
  const out: StoredServerKey[] = [];
  for (const [keyId, entry] of Object.entries(doc.verify_keys as Record<string, { key: string }>)) {
    if (keyAlgorithm(keyId) !== ED25519) continue;
    out.push({ serverName, keyId, verifyKey: entry.key, validUntilTs: validUntil, expiredTs: null, fromServer, addedTs: now, keyJson });
  }
  for (const [keyId, entry] of Object.entries((doc.old_verify_keys ?? {}) as Record<string, { key: string; expired_ts: number }>)) {
    if (keyAlgorithm(keyId) !== ED25519 || keyId in (doc.verify_keys as object)) continue;
    out.push({ serverName, keyId, verifyKey: entry.key, validUntilTs: entry.expired_ts, expiredTs: entry.expired_ts, fromServer, addedTs: now, keyJson });
  }
  return out;
}

/** Checks a server's own answer to GET /_matrix/key/v2/server. */
export function keysFromDirectResponse(body: unknown, serverName: string, now: number): KeysResult {
  const check = verifyServerKeysResponse(body, { expectedServerName: serverName });
  if (!check.ok) return { ok: false, reason: check.reason };
  return { ok: true, keys: keysOf(check.response as unknown as Record<string, unknown>, serverName, now) };
}

/**
 * Checks a notary's answer to POST /_matrix/key/v2/query and keeps the entries for `wanted` servers
 * that pass; a bad entry is skipped (and reported), the rest still count. The whole answer fails only
 * when it is not `{server_keys: [...]}`.
 */
export function keysFromNotaryResponse(
  body: unknown,
  notary: TrustedKeyServer,
  wanted: ReadonlySet<string>,
  now: number,
): KeysResult & { skipped?: string[] } {
  const list = (body as { server_keys?: unknown } | null)?.server_keys;
  if (typeof body !== "object" || body === null || !Array.isArray(list)) return { ok: false, reason: "no server_keys array" };
  const keys: StoredServerKey[] = [];
  const skipped: string[] = [];
  for (const entry of list) {
    const name = (entry as { server_name?: unknown } | null)?.server_name;
    if (typeof name !== "string" || !wanted.has(name)) continue;
    if (notary.verify_keys) {
      const signedByNotary = Object.entries(notary.verify_keys).some(([keyId, key]) => verifyJsonSignature(entry, notary.server_name, keyId, key));
      if (!signedByNotary) {
        skipped.push(`${name}: not signed by the notary ${notary.server_name} with a configured key`);
        continue;
      }
    }
    const check = verifyServerKeysResponse(entry, { expectedServerName: name });
    if (!check.ok) {
      skipped.push(`${name}: ${check.reason}`);
      continue;
    }
    keys.push(...keysOf(check.response as unknown as Record<string, unknown>, notary.server_name, now));
  }
  return { ok: true, keys, skipped };
}
