// Third-party invites across servers (spec: Server-Server API "Third-party invites": PUT
// /_matrix/federation/v1/3pid/onbind and /exchange_third_party_invite/{roomId}). When an identity server
// tells this server that one of our users bound an address with pending invites (onbind), each invite
// becomes an m.room.member invite carrying the identity server's `signed` block: made here when this
// server is in the room, else asked of the inviter's server (exchange_third_party_invite). That server,
// in the room, builds the invite from its own user and the matching m.room.third_party_invite; the auth
// rules check the signature against that event's public keys (src/domain/auth/third-party-invite.ts).
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import { domainOf, isPlainObject } from "../events/types.ts";
import { parseUserId } from "../ids.ts";
import { fedPath } from "../../federation/client.ts";
import { appendEvent } from "../rooms/append.ts";
import { currentStateEvent, requireRoom, type RoomSnapshot } from "../rooms/room-cache.ts";
import { hostInRoom } from "../federation/membership/residency.ts";
import { inviteRemoteUser } from "../federation/membership/invite-remote.ts";
import { assertServerAllowed } from "../federation/server-acl.ts";

/** One pending invite of an address: who invited whom (the bound user), where, and the identity server's proof. */
interface BoundInvite {
  roomId: string;
  sender: string;
  mxid: string;
  signed: Record<string, unknown>;
}

const bad = (what: string) => new MatrixError("M_BAD_JSON", what, 400);

function userIdOf(v: unknown, what: string): string {
  if (typeof v !== "string") throw bad(`${what} must be a user id`);
  try {
    parseUserId(v);
  } catch {
    throw bad(`${what} must be a user id`);
  }
  return v;
}

/** The `signed` block: mxid, token and signatures, as the auth rules need them. */
function signedOf(v: unknown, mxid: string): Record<string, unknown> {
  if (!isPlainObject(v) || typeof v.token !== "string" || !isPlainObject(v.signatures)) throw bad("signed must hold mxid, token and signatures");
  if (v.mxid !== mxid) throw bad("signed.mxid must be the invited user");
  return v;
}

const TPI_CONTENT_KEYS = ["display_name", "signed"] as const;

async function memberOf(s: Services, room: RoomSnapshot, userId: string): Promise<string | undefined> {
  return (await currentStateEvent(s, room, "m.room.member", userId))?.content.membership as string | undefined;
}

/**
 * Makes the invite in a room this server is in: from our user `sender`, to `mxid` (any server), with the
 * display name of the m.room.third_party_invite the token names. The auth rules refuse a bad signature.
 */
async function makeThirdPartyInvite(s: Services, inv: BoundInvite): Promise<void> {
  if (domainOf(inv.sender) !== s.config.server_name) throw new MatrixError("M_FORBIDDEN", "The inviter is not a user of this server", 403);
  const room = await requireRoom(s, inv.roomId);
  const token = inv.signed.token as string;
  const tpi = await currentStateEvent(s, room, "m.room.third_party_invite", token);
  if (!tpi) throw new MatrixError("M_FORBIDDEN", "No third-party invite in this room has that token", 403);
  const displayName = typeof tpi.content.display_name === "string" ? tpi.content.display_name : undefined;
  const content = {
    membership: "invite",
    third_party_invite: { ...(displayName !== undefined ? { display_name: displayName } : {}), signed: inv.signed },
  };
  const check = (current: string | undefined) => {
    if (current === "join" || current === "invite") throw new MatrixError("M_FORBIDDEN", `${inv.mxid} is already in the room`, 403);
    if (current === "ban") throw new MatrixError("M_FORBIDDEN", `${inv.mxid} is banned from the room`, 403);
  };
  const draft = { type: "m.room.member", stateKey: inv.mxid, sender: inv.sender, content };
  if (domainOf(inv.mxid) === s.config.server_name) {
    await appendEvent(s, inv.roomId, async (r) => (check(await memberOf(s, r, inv.mxid)), draft));
  } else {
    await inviteRemoteUser(s, inv.roomId, draft, async (r) => check(await memberOf(s, r, inv.mxid)));
  }
}

/**
 * PUT /3pid/onbind (or POST, as Sydent sends it; from the identity server, unsigned, as in the spec): `{medium, address, mxid,
 * invites}`. Each invite is made or exchanged; one that fails is logged and the others go on (Synapse).
 */
export async function onThirdPartyBind(s: Services, body: Record<string, unknown>): Promise<Record<string, never>> {
  for (const key of ["medium", "address", "mxid"]) {
    if (body[key] === undefined) throw new MatrixError("M_MISSING_PARAM", `Missing param ${key}`, 400);
    if (typeof body[key] !== "string") throw bad(`${key} must be a string`);
  }
  const mxid = userIdOf(body.mxid, "mxid");
  if (domainOf(mxid) !== s.config.server_name) throw new MatrixError("M_FORBIDDEN", "mxid is not a user of this server", 403);
  const invites = body.invites ?? [];
  if (!Array.isArray(invites)) throw bad("invites must be an array");
  if (invites.length > 100) throw new MatrixError("M_TOO_LARGE", "Too many invites", 413);
  const parsed: BoundInvite[] = [];
  for (const raw of invites) {
    if (!isPlainObject(raw) || typeof raw.room_id !== "string" || !raw.room_id.startsWith("!")) throw bad("each invite needs room_id, sender, mxid and signed");
    const invitee = userIdOf(raw.mxid, "invites[].mxid");
    if (invitee !== mxid) throw bad("an invite is for another user than the bound one");
    parsed.push({ roomId: raw.room_id, sender: userIdOf(raw.sender, "invites[].sender"), mxid, signed: signedOf(raw.signed, mxid) });
  }
  for (const inv of parsed) {
    try {
      if (await hostInRoom(s, inv.roomId)) await makeThirdPartyInvite(s, inv);
      else await exchangeWith(s, inv);
    } catch (err) {
      s.log.warn({ err: (err as Error).message, roomId: inv.roomId, sender: inv.sender }, "a third-party invite of a newly bound address could not be made");
    }
  }
  return {};
}

/** Asks the inviter's server to make the invite (PUT exchange_third_party_invite). */
async function exchangeWith(s: Services, inv: BoundInvite): Promise<void> {
  const server = domainOf(inv.sender)!;
  await s.federation.putJson(server, fedPath`/_matrix/federation/v1/exchange_third_party_invite/${inv.roomId}`, {
    type: "m.room.member",
    room_id: inv.roomId,
    sender: inv.sender,
    state_key: inv.mxid,
    content: { membership: "invite", third_party_invite: { signed: inv.signed } },
  }, { maxBytes: 64 * 1024 });
}

/**
 * PUT /exchange_third_party_invite/{roomId} from the invitee's server: the event to make. Only that
 * server may ask (it speaks for its user), in a room this server is in and whose ACL admits it.
 */
export async function exchangeThirdPartyInvite(s: Services, origin: string, roomId: string, body: Record<string, unknown>): Promise<Record<string, never>> {
  if (body.type !== "m.room.member") throw bad("type must be m.room.member");
  if (body.room_id !== roomId) throw bad("room_id does not match the path");
  const mxid = userIdOf(body.state_key, "state_key");
  const sender = userIdOf(body.sender, "sender");
  if (domainOf(mxid) !== origin) throw new MatrixError("M_FORBIDDEN", "A server may only exchange invites for its own users", 403);
  const content = body.content;
  if (!isPlainObject(content) || content.membership !== "invite" || !isPlainObject(content.third_party_invite)) throw bad("content must be an invite with third_party_invite");
  for (const key of Object.keys(content.third_party_invite)) if (!(TPI_CONTENT_KEYS as readonly string[]).includes(key)) throw bad(`unexpected third_party_invite.${key}`);
  const signed = signedOf(content.third_party_invite.signed, mxid);
  if (!(await hostInRoom(s, roomId))) throw new MatrixError("M_NOT_FOUND", "This server is not in that room", 404);
  await assertServerAllowed(s, (await requireRoom(s, roomId)).state, origin);
  await makeThirdPartyInvite(s, { roomId, sender, mxid, signed });
  return {};
}
