// POST /keys/query: the device keys (with `unsigned.device_display_name`) and cross-signing keys of the
// users asked for, with the stored signatures the requester may see (the owner's own, and the
// requester's); the user-signing key only for the requester's own user. Users of other servers need
// federation: their server is listed in `failures`. Spec: Client-Server API "POST /keys/query".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { isPlainObject, objectField, parseJson, withSignatures, type Json } from "./json.ts";
import type { SignatureRow } from "../store/e2ee.ts";

export interface KeysQueryResult {
  device_keys: Record<string, Record<string, Json>>;
  master_keys: Record<string, Json>;
  self_signing_keys: Record<string, Json>;
  user_signing_keys: Record<string, Json>;
  failures: Record<string, Json>;
}

/** The failure entry of a server we cannot ask yet. */
export const NO_FEDERATION = { status: 503, message: "Federation is not available on this server yet" };

/** The public key part of a cross-signing key's single `ed25519:<key>` id, if it has one. */
export function crossSigningPublicKey(key: Json): string | undefined {
  if (!isPlainObject(key.keys)) return undefined;
  const ids = Object.keys(key.keys);
  if (ids.length !== 1 || !ids[0]!.startsWith("ed25519:")) return undefined;
  return ids[0]!.slice("ed25519:".length);
}

function sigsFor(sigs: SignatureRow[], userId: string, keyId: string) {
  return sigs.filter((x) => x.targetUserId === userId && x.targetKeyId === keyId).map((x) => ({ signer: x.signerUserId, keyId: x.signingKeyId, signature: x.signature }));
}

/** Reads keys of local users: device_keys (all devices when the list is empty) and cross-signing keys. */
export async function localKeys(s: Services, viewer: string, query: Map<string, string[]>): Promise<Omit<KeysQueryResult, "failures">> {
  const userIds = [...query.keys()];
  const [devices, names, crossSigning, sigs] = await Promise.all([
    s.e2ee.deviceKeysOf(userIds),
    s.e2ee.deviceNames(userIds),
    s.e2ee.crossSigningKeysOf(userIds),
    s.e2ee.signaturesOn(userIds, viewer),
  ]);
  const out: Omit<KeysQueryResult, "failures"> = { device_keys: {}, master_keys: {}, self_signing_keys: {}, user_signing_keys: {} };
  for (const u of userIds) out.device_keys[u] = {};
  for (const d of devices) {
    const wanted = query.get(d.userId)!;
    if (wanted.length > 0 && !wanted.includes(d.deviceId)) continue;
    const name = names.get(`${d.userId}\u0000${d.deviceId}`);
    const keys = withSignatures(parseJson(d.json), sigsFor(sigs, d.userId, d.deviceId));
    out.device_keys[d.userId]![d.deviceId] = { ...keys, unsigned: name ? { device_display_name: name } : {} };
  }
  for (const [u, keys] of crossSigning) {
    const master = keys.get("master");
    if (master) {
      const m = parseJson(master);
      const pub = crossSigningPublicKey(m);
      out.master_keys[u] = pub ? withSignatures(m, sigsFor(sigs, u, pub)) : m;
    }
    const ssk = keys.get("self_signing");
    if (ssk) out.self_signing_keys[u] = parseJson(ssk);
    const usk = keys.get("user_signing");
    if (usk && u === viewer) out.user_signing_keys[u] = parseJson(usk);
  }
  return out;
}

export async function queryKeys(s: Services, r: Requester, body: Json): Promise<KeysQueryResult> {
  const wanted = objectField(body, "device_keys", true);
  const local = new Map<string, string[]>();
  const failures: Record<string, Json> = {};
  for (const [userId, devices] of Object.entries(wanted)) {
    const { serverName } = parseUserId(userId);
    if (devices !== null && (!Array.isArray(devices) || !devices.every((d) => typeof d === "string")))
      throw new MatrixError("M_BAD_JSON", `device_keys.${userId} must be a list of device ids`, 400);
    if (serverName !== s.config.server_name) {
      failures[serverName] = NO_FEDERATION;
      continue;
    }
    local.set(userId, (devices ?? []) as string[]);
  }
  return { ...(await localKeys(s, r.userId, local)), failures };
}
