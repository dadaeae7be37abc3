// Synapse admin API "Server Notices" (POST /v1/send_server_notice, PUT /v1/send_server_notice/{txnId}):
// a server admin has the system user send an event (an m.room.message unless `type` says otherwise; a
// state event with `state_key`) into a local user's server notices room, made and the user invited to it
// as needed (server-notices/notice-room.ts). A retried PUT with its txnId answers the first event.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isPlainObject } from "../events/types.ts";
import { requireAdmin } from "./require-admin.ts";
import { actingAs } from "./join.ts";
import { existingLocalUser } from "./users.ts";
import { sendMessage, sendStateEvent } from "../rooms/send.ts";
import { noticeRoomFor } from "../server-notices/notice-room.ts";

function field(body: Record<string, unknown>, key: string): unknown {
  if (body[key] === undefined) throw new MatrixError("M_MISSING_PARAM", `Missing params: ['${key}']`, 400);
  return body[key];
}

/** `body` is read once the requester is known to be an admin (anyone else gets 403 whatever they sent, as Synapse). */
export async function sendServerNotice(s: Services, r: Requester, readBody: () => Record<string, unknown>, txnId?: string): Promise<{ event_id: string }> {
  requireAdmin(r);
  const body = readBody();
  const userId = field(body, "user_id");
  const content = field(body, "content");
  if (typeof userId !== "string") throw new MatrixError("M_INVALID_PARAM", "user_id must be a string", 400);
  if (!isPlainObject(content)) throw new MatrixError("M_BAD_JSON", "content must be an object", 400);
  const type = body.type ?? "m.room.message";
  const stateKey = body.state_key ?? undefined;
  if (typeof type !== "string") throw new MatrixError("M_BAD_JSON", "type must be a string", 400);
  if (stateKey !== undefined && typeof stateKey !== "string") throw new MatrixError("M_BAD_JSON", "state_key must be a string", 400);
  const c = s.config.server_notices;
  if (!c) throw new MatrixError("M_UNKNOWN", "Server notices are not enabled on this server", 400);
  await existingLocalUser(s, userId, "send server notices to");
  const roomId = await noticeRoomFor(s, c, userId);
  // The system user sends; the admin's session scopes the transaction id (as Synapse's per-token cache).
  const sender: Requester = { ...actingAs(c.system_mxid, true), deviceId: `server-notices ${r.userId} ${r.deviceId ?? r.accessTokenId ?? ""}` };
  if (stateKey !== undefined) return sendStateEvent(s, sender, roomId, type, stateKey, content);
  return sendMessage(s, sender, roomId, type, txnId, content);
}
