// Encryption by default for new rooms (Synapse's `encryption_enabled_by_default_for_room_type`): `all`
// rooms, rooms made with the private_chat / trusted_private_chat presets (`invite`), or none (`off`)
// get m.room.encryption (m.megolm.v1.aes-sha2) in their initial state, unless the request's
// initial_state already sets it. Spec: Client-Server API "Messaging algorithms" / "m.room.encryption".
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { CreateRoomExtension, CreateRoomRequest } from "../rooms/create-room.ts";
import type { EventDraft } from "../rooms/build-event.ts";

export const DEFAULT_ROOM_ALGORITHM = "m.megolm.v1.aes-sha2";

async function encryptionState(s: Services, r: Requester, req: CreateRoomRequest): Promise<EventDraft[]> {
  const setting = s.config.encryption_enabled_by_default_for_room_type;
  if (setting === "off") return [];
  const preset = typeof req.preset === "string" ? req.preset : req.visibility === "public" ? "public_chat" : "private_chat";
  if (setting === "invite" && preset !== "private_chat" && preset !== "trusted_private_chat") return [];
  const initial = Array.isArray(req.initial_state) ? (req.initial_state as { type?: unknown; state_key?: unknown }[]) : [];
  if (initial.some((e) => e?.type === "m.room.encryption" && (e.state_key ?? "") === "")) return [];
  return [{ type: "m.room.encryption", stateKey: "", sender: r.userId, content: { algorithm: DEFAULT_ROOM_ALGORITHM } }];
}

/** The createRoom extension (declared in src/main.ts). */
export const encryptionByDefault: CreateRoomExtension = { extraState: encryptionState };
