// POST /keys/device_signing/upload: a user publishes cross-signing keys (master, self-signing,
// user-signing). The self- and user-signing keys must be signed by the master key (the one sent, or
// the stored one). The first upload needs no user-interactive auth; replacing existing keys does, while
// re-sending the stored keys unchanged succeeds without it (spec v1.11; application services never
// need it, v1.17). Spec: Client-Server API "Cross-signing".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { canonicalJson } from "../canonical-json.ts";
import { decodeBase64Strict, verifyJsonSignature } from "../signing.ts";
import { checkUia, finishUia, type UiaRequest } from "../uia/uia.ts";
import { isPlainObject, objectField, parseJson, type Json } from "./json.ts";
import { crossSigningPublicKey } from "./query-keys.ts";
import { announceDeviceListChange, recordDeviceListChange } from "./device-lists.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";
import { reauthUia } from "../uia/flows.ts";
import { crossSigningResetRequired } from "../oauth-delegation/cross-signing-reset.ts";
import { crossSigningResetApproved } from "../oauth/account.ts";

export const KEY_TYPES = [
  ["master_key", "master"],
  ["self_signing_key", "self_signing"],
  ["user_signing_key", "user_signing"],
] as const;
export type KeyType = (typeof KEY_TYPES)[number][1];

/** Checks a cross-signing key's shape: the user, the usage, one 32-byte ed25519 key. Returns the public key. */
export function checkCrossSigningKey(key: Json, userId: string, usage: KeyType): string {
  const bad = (msg: string) => new MatrixError("M_INVALID_PARAM", `Invalid ${usage} key: ${msg}`, 400);
  if (key.user_id !== userId) throw bad("user_id must be the user id of the access token");
  if (!Array.isArray(key.usage) || !key.usage.includes(usage) || !key.usage.every((u) => typeof u === "string")) throw bad(`usage must include "${usage}"`);
  const pub = crossSigningPublicKey(key);
  if (pub === undefined) throw bad("keys must hold exactly one ed25519 key");
  if ((key.keys as Json)[`ed25519:${pub}`] !== pub || decodeBase64Strict(pub)?.length !== 32) throw bad("the key id must name the public key, an unpadded base64 ed25519 key");
  if (key.signatures !== undefined && !isPlainObject(key.signatures)) throw bad("signatures must be an object");
  canonicalJson(key);
  return pub;
}

/** The keys of POST /keys/device_signing/upload, as both faces parse them (each optional). */
export type CrossSigningUpload = Partial<Record<KeyType, Json>>;

/** The REST body: `master_key`, `self_signing_key`, `user_signing_key` (its `auth` goes to UIA). */
export function crossSigningFromBody(body: Json): CrossSigningUpload {
  const out: CrossSigningUpload = {};
  for (const [field, type] of KEY_TYPES) {
    const k = objectField(body, field);
    if (k) out[type] = k;
  }
  return out;
}

export async function uploadCrossSigningKeys(s: Services, r: Requester, keys: CrossSigningUpload, uiaReq: UiaRequest): Promise<Record<string, never>> {
  requireNotGuest(r, "uploadCrossSigningKeys");
  const userId = r.userId;
  const given = new Map<KeyType, Json>();
  for (const [, type] of KEY_TYPES) {
    const k = keys[type];
    if (k) given.set(type, k);
  }
  const stored = (await s.e2ee.crossSigningKeysOf([userId])).get(userId) ?? new Map<string, string>();

  // Validate everything before asking for authentication or writing.
  const pubs = new Map<KeyType, string>();
  for (const [type, key] of given) pubs.set(type, checkCrossSigningKey(key, userId, type));
  const master = given.get("master") ?? (stored.has("master") ? parseJson(stored.get("master")!) : undefined);
  if (given.size > 0 && !master) throw new MatrixError("M_MISSING_PARAM", "No master key available", 400);
  const masterPub = master ? crossSigningPublicKey(master)! : "";
  for (const type of ["self_signing", "user_signing"] as const) {
    const key = given.get(type);
    if (key && !verifyJsonSignature(key, userId, `ed25519:${masterPub}`, masterPub))
      throw new MatrixError("M_INVALID_SIGNATURE", `Invalid signature on the ${type} key: it must be signed by the master key`, 400);
  }
  const deviceIds = new Set(await s.sessions.deviceIds(userId));
  for (const pub of pubs.values()) if (deviceIds.has(pub)) throw new MatrixError("M_FORBIDDEN", "Key ID in use", 403);

  const changed = [...given].filter(([type, key]) => stored.get(type) !== canonicalJson(key));
  if (changed.length === 0) return {}; // nothing new: idempotent, no authentication needed
  // With delegated authentication there is no password: the authorization server approves a reset
  // (through the admin API), after which the master key may be replaced without UIA for a while. With
  // Weft's own OAuth server, an OAuth session's reset is approved on the account page (m.oauth, MSC4312).
  const delegatedReset = stored.has("master") && !r.appserviceId && s.oauthDelegation !== undefined;
  if (delegatedReset && ((await s.e2ee.masterReplaceableUntil(userId)) ?? 0) <= s.clock.now()) throw await crossSigningResetRequired(s);
  const uia =
    stored.has("master") && !r.appserviceId && !delegatedReset && !(await crossSigningResetApproved(s, r.userId))
      ? await checkUia(s, { ...uiaReq, requester: r }, await reauthUia(s, r, { description: "reset the cross-signing keys on your account", action: "org.matrix.cross_signing_reset" }))
      : undefined;

  const now = s.clock.now();
  const notices = await s.storage.sql.transaction(async (tx) => {
    await s.e2ee.lock(tx, `e2e_cross_signing:${userId}`);
    const out: { pos: number; onlyFor: string | null }[] = [];
    const visible: string[] = [];
    for (const [type, key] of changed) {
      await s.e2ee.setCrossSigningKey(tx, userId, type, canonicalJson(key), now);
      if (type === "user_signing") out.push({ pos: await recordDeviceListChange(s, tx, userId, [pubs.get(type)!], userId), onlyFor: userId });
      else visible.push(pubs.get(type)!);
    }
    if (visible.length > 0) out.push({ pos: await recordDeviceListChange(s, tx, userId, visible), onlyFor: null });
    return out;
  });
  for (const n of notices) await announceDeviceListChange(s, userId, n.pos, n.onlyFor);
  if (uia) await finishUia(s, uia);
  return {};
}
