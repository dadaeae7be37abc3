// POST /keys/query: the device keys (with `unsigned.device_display_name`) and cross-signing keys of the
// users asked for, with the stored signatures the requester may see (the owner's own, and the
// requester's); the user-signing key only for the requester's own user. Users of other servers are read
// from the copy of their device list kept here (remote-device-lists.ts) when it is kept up to date for a
// room the requester shares with them — made first through GET /user/devices when all their devices are
// asked for and no copy is held — else asked of their servers (one request per server, within the
// request's `timeout`; those that fail are listed in `failures`). Spec: Client-Server API "POST /keys/query".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { isPlainObject, objectField, parseJson, withSignatures, type Json } from "./json.ts";
import type { SignatureRow } from "../store/e2ee.ts";
import { queryRemoteKeys, requestTimeout } from "../federation/e2ee/remote-key-queries.ts";
import { cachedDeviceLists } from "../federation/e2ee/remote-device-store.ts";
import { resyncForQuery } from "../federation/e2ee/remote-device-lists.ts";

export interface KeysQueryResult {
  device_keys: Record<string, Record<string, Json>>;
  master_keys: Record<string, Json>;
  self_signing_keys: Record<string, Json>;
  user_signing_keys: Record<string, Json>;
  failures: Record<string, Json>;
}

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
    // Remote users' keys (the copy kept of their device list) carry no display name.
    out.device_keys[d.userId]![d.deviceId] = parseUserId(d.userId).serverName === s.config.server_name ? { ...keys, unsigned: name ? { device_display_name: name } : {} } : keys;
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

/** What POST /keys/query asks, as both faces parse it: user → device ids (empty: all), and a timeout in ms. */
export interface KeysQueryInput {
  deviceKeys: Map<string, string[]>;
  timeout?: number;
}

/** The REST body: `device_keys` (user → device ids or null) and an optional `timeout`. */
export function keysQueryFromBody(body: Json): KeysQueryInput {
  const wanted = objectField(body, "device_keys", true);
  const deviceKeys = new Map<string, string[]>();
  for (const [userId, devices] of Object.entries(wanted)) {
    parseUserId(userId); // M_INVALID_PARAM for a malformed id, even with nothing for it
    if (devices !== null && (!Array.isArray(devices) || !devices.every((d) => typeof d === "string")))
      throw new MatrixError("M_BAD_JSON", `device_keys.${userId} must be a list of device ids`, 400);
    deviceKeys.set(userId, (devices ?? []) as string[]);
  }
  return { deviceKeys, timeout: requestTimeout(body.timeout) };
}

export async function queryKeys(s: Services, r: Requester, input: KeysQueryInput): Promise<KeysQueryResult> {
  const local = new Map<string, string[]>();
  const remote = new Map<string, string[]>();
  for (const [userId, devices] of input.deviceKeys) {
    const { serverName } = parseUserId(userId);
    (serverName === s.config.server_name ? local : remote).set(userId, devices);
  }
  // Remote users whose device list is kept here and who share a room with the requester: read like ours.
  // Those asked for all their devices whose list no copy holds yet are resynced first (as Synapse), each
  // within the request's timeout; what is left of it goes to the servers not answered so.
  const timeout = requestTimeout(input.timeout);
  const started = Date.now();
  if (remote.size > 0) {
    const sharing = await s.e2ee.usersSharingRoomsWith(r.userId);
    let cached = await cachedDeviceLists(s.storage.sql, [...remote.keys()]);
    const unsynced = [...remote].filter(([u, devices]) => devices.length === 0 && sharing.has(u) && !cached.has(u)).map(([u]) => u);
    if (unsynced.length > 0) {
      await resyncForQuery(s, unsynced, timeout);
      cached = await cachedDeviceLists(s.storage.sql, [...remote.keys()]);
    }
    for (const u of cached.keys()) {
      if (!sharing.has(u)) continue;
      local.set(u, remote.get(u)!);
      remote.delete(u);
    }
  }
  const byServer = new Map<string, Map<string, string[]>>();
  for (const [userId, devices] of remote) {
    const server = parseUserId(userId).serverName;
    let m = byServer.get(server);
    if (!m) byServer.set(server, (m = new Map()));
    m.set(userId, devices);
  }
  const left = Math.max(0, timeout - (Date.now() - started));
  const [ours, theirs] = await Promise.all([localKeys(s, r.userId, local), byServer.size > 0 ? queryRemoteKeys(s, byServer, left) : undefined]);
  if (!theirs) return { ...ours, failures: {} };
  // The requester's own signatures on remote users' master keys are stored here: merged in.
  const sigs = await s.e2ee.signaturesOn(Object.keys(theirs.master_keys), r.userId);
  const master_keys = { ...ours.master_keys };
  for (const [u, key] of Object.entries(theirs.master_keys)) {
    const pub = crossSigningPublicKey(key);
    master_keys[u] = pub ? withSignatures(key, sigsFor(sigs, u, pub).filter((x) => x.signer === r.userId)) : key;
  }
  return {
    device_keys: { ...ours.device_keys, ...theirs.device_keys },
    master_keys,
    self_signing_keys: { ...ours.self_signing_keys, ...theirs.self_signing_keys },
    user_signing_keys: ours.user_signing_keys,
    failures: theirs.failures,
  };
}
