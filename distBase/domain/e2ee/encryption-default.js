export const DEFAULT_ROOM_ALGORITHM = "m.megolm.v1.aes-sha2";
async function encryptionState(s, r, req) {
    const setting = s.config.encryption_enabled_by_default_for_room_type;
    if (setting === "off")
        return [];
    const preset = typeof req.preset === "string" ? req.preset : req.visibility === "public" ? "public_chat" : "private_chat";
    if (setting === "invite" && preset !== "private_chat" && preset !== "trusted_private_chat")
        return [];
    const initial = Array.isArray(req.initial_state) ? req.initial_state : [];
    if (initial.some((e) => e?.type === "m.room.encryption" && (e.state_key ?? "") === ""))
        return [];
    return [{ type: "m.room.encryption", stateKey: "", sender: r.userId, content: { algorithm: DEFAULT_ROOM_ALGORITHM } }];
}
/** The createRoom extension (declared in src/main.ts). */
export const encryptionByDefault = { extraState: encryptionState };
