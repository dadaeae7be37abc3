// Inviting by third-party identifier (spec: Client-Server API "Invite by third-party ID endpoint";
// Identity Service API "Hashed lookup", "Invitation storage"): the identity server the client names is
// asked whom the address belongs to (sha256-hashed lookup, else "none"); a known user is invited as usual,
// otherwise the identity server stores the invite and the room gets an m.room.third_party_invite event
// carrying its public keys (the stored invite names the room's type, as the spec asks).
import { createHash } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { requireRoom, currentStateEvent } from "../rooms/room-cache.ts";
import { sendStateEvent } from "../rooms/send.ts";
import { checkIdServer, isRequest, toClientError } from "./identity-server.ts";
import { canonicalEmail } from "./email-validation.ts";
import { isPlainObject } from "../events/types.ts";
import { parseUserId } from "../ids.ts";

export interface ThirdPartyInvite {
  idServer: string;
  idAccessToken: string;
  medium: string;
  address: string;
}

/** The body's third-party fields, or undefined when it invites by user_id. */
export function thirdPartyInviteOf(body: Record<string, unknown>): ThirdPartyInvite | undefined {
  if (body.user_id !== undefined || (body.id_server === undefined && body.medium === undefined && body.address === undefined)) return undefined;
  return parseThirdPartyInvite(body);
}

/** A third-party invite's fields (an /invite body, an entry of createRoom's invite_3pid), each required. */
export function parseThirdPartyInvite(body: Record<string, unknown>): ThirdPartyInvite {
  const get = (key: string) => {
    const v = body[key];
    if (v === undefined || v === null) throw new MatrixError("M_MISSING_PARAM", `Missing param ${key}`, 400);
    if (typeof v !== "string") throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
    return v;
  };
  const medium = get("medium");
  if (medium !== "email" && medium !== "msisdn") throw new MatrixError("M_INVALID_PARAM", "medium must be email or msisdn", 400);
  const address = medium === "email" ? canonicalEmail(get("address")) : get("address");
  return { idServer: checkIdServer(get("id_server")), idAccessToken: get("id_access_token"), medium, address };
}

/** POST /lookup (v2): the user id the address is bound to, if any. */
async function lookup(s: Services, t: ThirdPartyInvite): Promise<string | undefined> {
  const details = await isRequest(s, t.idServer, { method: "GET", path: "/hash_details", accessToken: t.idAccessToken });
  const algorithms = Array.isArray(details.algorithms) ? details.algorithms : [];
  const pepper = typeof details.lookup_pepper === "string" ? details.lookup_pepper : "";
  let algorithm: string;
  let key: string;
  if (algorithms.includes("sha256")) {
    algorithm = "sha256";
    key = createHash("sha256").update(`${t.address} ${t.medium} ${pepper}`).digest("base64url");
  } else if (algorithms.includes("none")) {
    algorithm = "none";
    key = `${t.address} ${t.medium}`;
  } else {
    throw new MatrixError("M_UNKNOWN", `The identity server ${t.idServer} offers no lookup algorithm this server knows`, 502);
  }
  const answer = await isRequest(s, t.idServer, { method: "POST", path: "/lookup", accessToken: t.idAccessToken, body: { addresses: [key], algorithm, pepper } });
  const mxid = isPlainObject(answer.mappings) ? answer.mappings[key] : undefined;
  if (typeof mxid !== "string") return undefined;
  try {
    parseUserId(mxid);
  } catch {
    throw new MatrixError("M_UNKNOWN", `The identity server ${t.idServer} answered an invalid user id`, 502);
  }
  return mxid;
}

async function stateContent(s: Services, roomId: string, type: string, stateKey = ""): Promise<Record<string, unknown>> {
  const room = await requireRoom(s, roomId);
  return (await currentStateEvent(s, room, type, stateKey))?.content ?? {};
}

/** What the identity server said of an address, asked before (createRoom asks before making the room). */
export interface LookedUp {
  mxid: string | undefined;
}

/** Asks the identity server whom the address belongs to (its refusals as the client's errors). */
export async function lookupThirdParty(s: Services, t: ThirdPartyInvite): Promise<LookedUp> {
  try {
    return { mxid: await lookup(s, t) };
  } catch (err) {
    throw toClientError(err);
  }
}

/**
 * Invites the address: returns the user id when the identity server knew it (the caller invites them),
 * else stores the invite there and sends m.room.third_party_invite. `looked` is the lookup made already.
 */
export async function inviteThirdParty(s: Services, r: Requester, roomId: string, t: ThirdPartyInvite, looked?: LookedUp): Promise<{ userId: string } | { eventId: string }> {
  try {
    const room = await requireRoom(s, roomId);
    // Only a member may make this server ask an identity server on the room's behalf.
    const own = await stateContent(s, roomId, "m.room.member", r.userId);
    if (own.membership !== "join") throw new MatrixError("M_FORBIDDEN", "You are not in this room", 403);
    const mxid = looked ? looked.mxid : await lookup(s, t);
    if (mxid) return { userId: mxid };
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    const [name, avatar, joinRules, alias, member] = await Promise.all([
      stateContent(s, roomId, "m.room.name"),
      stateContent(s, roomId, "m.room.avatar"),
      stateContent(s, roomId, "m.room.join_rules"),
      stateContent(s, roomId, "m.room.canonical_alias"),
      stateContent(s, roomId, "m.room.member", r.userId),
    ]);
    const request: Record<string, unknown> = {
      medium: t.medium,
      address: t.address,
      room_id: roomId,
      sender: r.userId,
      room_type: str(room.createEvent.content.type) ?? null,
    };
    const optional: Record<string, string | undefined> = {
      room_name: str(name.name),
      room_avatar_url: str(avatar.url),
      room_join_rules: str(joinRules.join_rule),
      room_alias: str(alias.alias),
      sender_display_name: str(member.displayname),
      sender_avatar_url: str(member.avatar_url),
    };
    for (const [k, v] of Object.entries(optional)) if (v !== undefined) request[k] = v;
    const stored = await isRequest(s, t.idServer, { method: "POST", path: "/store-invite", accessToken: t.idAccessToken, body: request });
    const { token, public_keys: keys, display_name: displayName } = stored;
    if (typeof token !== "string" || token.length === 0 || token.length > 255 || !Array.isArray(keys) || keys.length === 0 || typeof displayName !== "string")
      throw new MatrixError("M_UNKNOWN", `The identity server ${t.idServer} answered store-invite without token, public_keys or display_name`, 502);
    const publicKeys = keys.flatMap((k) => (isPlainObject(k) && typeof k.public_key === "string" ? [{ public_key: k.public_key, ...(typeof k.key_validity_url === "string" ? { key_validity_url: k.key_validity_url } : {}) }] : []));
    if (publicKeys.length === 0) throw new MatrixError("M_UNKNOWN", `The identity server ${t.idServer} answered no usable public key`, 502);
    const first = publicKeys[0]!;
    const content = {
      display_name: displayName,
      key_validity_url: first.key_validity_url ?? `https://${t.idServer}/_matrix/identity/v2/pubkey/isvalid`,
      public_key: first.public_key,
      public_keys: publicKeys,
    };
    const { event_id } = await sendStateEvent(s, r, roomId, "m.room.third_party_invite", token, content);
    return { eventId: event_id };
  } catch (err) {
    throw toClientError(err);
  }
}
