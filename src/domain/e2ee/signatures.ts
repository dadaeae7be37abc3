// POST /keys/signatures/upload: signatures of the requester's own devices by their self-signing key, of
// their master key by their devices, and of other users' master keys by their user-signing key. Each
// signature is checked against the stored key (the signed object must be that key) and verified;
// failures are reported per key (M_INVALID_SIGNATURE, M_NOT_FOUND) while the others are stored and
// merged into what /keys/query returns. Spec: Client-Server API "POST /keys/signatures/upload".
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { parseUserId } from "../ids.ts";
import { verifyJsonSignature } from "../signing.ts";
import type { SignatureRow } from "../store/e2ee.ts";
import { isPlainObject, parseJson, signedPart, type Json } from "./json.ts";
import { crossSigningPublicKey } from "./query-keys.ts";
import { announceDeviceListChange, recordDeviceListChange } from "./device-lists.ts";
import { requireNotGuest } from "../accounts/guest-access.ts";

type Failure = { errcode: string; error: string };
const failure = (errcode: "M_INVALID_SIGNATURE" | "M_NOT_FOUND", error: string) => new MatrixError(errcode, error, errcode === "M_NOT_FOUND" ? 404 : 400);

/** The signatures `signer` put on `signed` that are not already on `stored`. */
function newSignatures(signed: Json, stored: Json, signer: string): [string, string][] {
  const mine = isPlainObject(signed.signatures) && isPlainObject(signed.signatures[signer]) ? (signed.signatures[signer] as Json) : {};
  const old = isPlainObject(stored.signatures) && isPlainObject(stored.signatures[signer]) ? (stored.signatures[signer] as Json) : {};
  return Object.entries(mine).filter((e): e is [string, string] => typeof e[1] === "string" && old[e[0]] !== e[1]);
}

/** Signed objects of POST /keys/signatures/upload, as both faces parse them: user → key id → signed key. */
export type SignaturesUpload = Map<string, Map<string, Json>>;

/** The REST body: user → key id → signed object. */
export function signaturesFromBody(body: Json): SignaturesUpload {
  const out: SignaturesUpload = new Map();
  for (const [userId, keys] of Object.entries(body)) {
    if (!isPlainObject(keys) || !Object.values(keys).every(isPlainObject)) throw new MatrixError("M_INVALID_PARAM", `${userId} must map key ids to signed objects`, 400);
    out.set(userId, new Map(Object.entries(keys as Record<string, Json>)));
  }
  return out;
}

export async function uploadSignatures(s: Services, r: Requester, body: SignaturesUpload): Promise<{ failures: Record<string, Record<string, Failure>> }> {
  requireNotGuest(r, "uploadSignatures");
  const me = r.userId;
  for (const userId of body.keys()) parseUserId(userId);
  const users = [...body.keys()].filter((u) => parseUserId(u).serverName === s.config.server_name);
  const [crossSigning, devices] = await Promise.all([s.e2ee.crossSigningKeysOf([...new Set([me, ...users])]), s.e2ee.deviceKeysOf([me])]);
  const csk = (u: string, type: string) => {
    const j = crossSigning.get(u)?.get(type);
    return j === undefined ? undefined : parseJson(j);
  };
  const myDevices = new Map(devices.map((d) => [d.deviceId, parseJson(d.json)]));
  const myMaster = csk(me, "master");
  const myMasterPub = myMaster && crossSigningPublicKey(myMaster);
  const mySsk = csk(me, "self_signing");
  const mySskPub = mySsk && crossSigningPublicKey(mySsk);
  const myUsk = csk(me, "user_signing");
  const myUskPub = myUsk && crossSigningPublicKey(myUsk);

  // A Map: user ids and key ids come from the body ("__proto__" too), never keys looked up on a plain object.
  const failures = new Map<string, Map<string, Failure>>();
  const toStore: SignatureRow[] = [];
  const selfChanged = new Set<string>();
  const othersChanged = new Set<string>();

  for (const [userId, keys] of body) {
    for (const [keyId, signed] of keys) {
      try {
        if (parseUserId(userId).serverName !== s.config.server_name) throw failure("M_NOT_FOUND", "Keys of users on other servers need federation");
        if (!isPlainObject(signed.signatures) || !isPlainObject(signed.signatures[me])) throw failure("M_INVALID_SIGNATURE", "Invalid signature: none by the uploading user");
        const rows: SignatureRow[] = [];
        if (userId === me && keyId === myMasterPub) {
          // My master key, signed by my devices.
          const sigs = newSignatures(signed, myMaster!, me);
          if (sigs.length === 0) continue;
          if (signedPart(signed) !== signedPart(myMaster!)) throw failure("M_INVALID_SIGNATURE", "The signed object is not the stored master key");
          for (const [sigKeyId, signature] of sigs) {
            const deviceId = sigKeyId.startsWith("ed25519:") ? sigKeyId.slice(8) : "";
            const pub = (myDevices.get(deviceId)?.keys as Json | undefined)?.[sigKeyId];
            if (typeof pub !== "string" || !verifyJsonSignature(signed, me, sigKeyId, pub)) throw failure("M_INVALID_SIGNATURE", "Invalid signature");
            rows.push({ signerUserId: me, signingKeyId: sigKeyId, targetUserId: me, targetKeyId: keyId, signature });
          }
          selfChanged.add(keyId);
        } else if (userId === me) {
          // One of my devices, signed by my self-signing key.
          if (!mySskPub) throw failure("M_NOT_FOUND", "No self-signing key found");
          const device = myDevices.get(keyId);
          if (!device) throw failure("M_NOT_FOUND", "Unknown device");
          const sigKeyId = `ed25519:${mySskPub}`;
          const signature = (signed.signatures[me] as Json)[sigKeyId];
          if (typeof signature !== "string") throw failure("M_INVALID_SIGNATURE", "Invalid signature: none by the self-signing key");
          if (signedPart(signed) !== signedPart(device)) throw failure("M_INVALID_SIGNATURE", "The signed object is not the stored device key");
          if (!verifyJsonSignature(signed, me, sigKeyId, mySskPub)) throw failure("M_INVALID_SIGNATURE", "Invalid signature");
          rows.push({ signerUserId: me, signingKeyId: sigKeyId, targetUserId: me, targetKeyId: keyId, signature });
          selfChanged.add(keyId);
        } else {
          // Another user's master key, signed by my user-signing key.
          if (!myUskPub) throw failure("M_NOT_FOUND", "No user-signing key found");
          const master = csk(userId, "master");
          const masterPub = master && crossSigningPublicKey(master);
          if (!master || masterPub !== keyId) throw failure("M_NOT_FOUND", "Unknown device");
          const sigKeyId = `ed25519:${myUskPub}`;
          const signature = (signed.signatures[me] as Json)[sigKeyId];
          if (typeof signature !== "string") throw failure("M_INVALID_SIGNATURE", "Invalid signature: none by the user-signing key");
          if (signedPart(signed) !== signedPart(master)) throw failure("M_INVALID_SIGNATURE", "The signed object is not the stored master key");
          if (!verifyJsonSignature(signed, me, sigKeyId, myUskPub)) throw failure("M_INVALID_SIGNATURE", "Invalid signature");
          rows.push({ signerUserId: me, signingKeyId: sigKeyId, targetUserId: userId, targetKeyId: keyId, signature });
          othersChanged.add(userId);
        }
        toStore.push(...rows);
      } catch (err) {
        if (!(err instanceof MatrixError)) throw err;
        let byKey = failures.get(userId);
        if (!byKey) failures.set(userId, (byKey = new Map()));
        byKey.set(keyId, { errcode: err.errcode, error: err.message });
      }
    }
  }

  if (toStore.length > 0) {
    const notices = await s.storage.sql.transaction(async (tx) => {
      for (const row of toStore) await s.e2ee.putSignature(tx, row);
      const out: { userId: string; pos: number; onlyFor: string | null }[] = [];
      if (selfChanged.size > 0) out.push({ userId: me, pos: await recordDeviceListChange(s, tx, me, [...selfChanged]), onlyFor: null });
      for (const u of othersChanged) out.push({ userId: u, pos: await recordDeviceListChange(s, tx, u, [], me), onlyFor: me });
      return out;
    });
    for (const n of notices) await announceDeviceListChange(s, n.userId, n.pos, n.onlyFor);
  }
  return { failures: Object.fromEntries([...failures].map(([userId, byKey]) => [userId, Object.fromEntries(byKey)])) };
}
