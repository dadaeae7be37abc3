import { authTypesForEvent } from "../auth/index.js";
import { createHash } from "node:crypto";
import { referenceHash } from "../events/hashes.js";
import { redactEvent } from "../events/redaction.js";
import { checkContentDepth, checkPduSize, LIMITED_FIELDS, MAX_FIELD_BYTES, MAX_PDU_BYTES } from "../events/size.js";
import { signBytes } from "../signing.js";
import { base64Unpadded, base64UrlUnpadded, canonicalJson, MAX_SAFE } from "../canonical-json.js";
import { MatrixError } from "../errors.js";
import { randomString } from "../ids.js";
import { stateKeyOf } from "../store/state-groups.js";
const MAX_PREV_EVENTS = 20;
export async function buildEvent(s, ctx, draft, now = s.clock.now(), signer) {
    signer ??= { serverName: s.config.server_name, key: s.signingKeys[0] };
    const pdu = await unsignedPdu(s, ctx, draft, now, signer.serverName);
    // v1–2: the id is made up by the server that signs the event.
    if (ctx.version.eventIdFormat === "server-assigned")
        pdu.event_id = `$${randomString(18)}:${signer.serverName}`;
    return sealEvent(pdu, ctx.version, signer);
}
/**
 * The PDU of a draft before it is hashed, signed and named: prev_events, auth_events (v1–2 as references
 * with their hashes), depth, and `origin` (v1–10) naming `originServer`. It is also the template a
 * resident server answers make_join / make_leave with, for the joining server to complete and sign.
 */
export async function unsignedPdu(s, ctx, draft, now, originServer) {
    const v = ctx.version;
    const prevIds = ctx.extremities.slice(-MAX_PREV_EVENTS);
    const authIds = authTypesForEvent(v, draft.type, draft.stateKey, draft.sender, draft.content)
        .map(([t, k]) => ctx.state.get(stateKeyOf(t, k)))
        .filter((id) => id !== undefined);
    const pdu = {
        ...(ctx.roomId !== undefined ? { room_id: ctx.roomId } : {}),
        sender: draft.sender,
        type: draft.type,
        content: draft.content,
        origin_server_ts: now,
        depth: Math.min(ctx.maxDepth + 1, MAX_SAFE),
        prev_events: prevIds,
        auth_events: authIds,
        hashes: { sha256: "" },
        signatures: {},
    };
    if (draft.stateKey !== undefined)
        pdu.state_key = draft.stateKey;
    if (draft.redacts !== undefined && !v.redactsInContent)
        pdu.redacts = draft.redacts;
    if (!v.updatedRedactionRules)
        pdu.origin = originServer;
    if (v.eventIdFormat === "server-assigned") {
        // v1–2: references carry the referenced event's reference hash.
        const lookup = ctx.lookup ?? (async (id) => (await s.rooms.events.get(id))?.pdu);
        const refs = async (ids) => {
            const out = [];
            for (const id of ids) {
                const e = await lookup(id);
                if (!e)
                    throw new Error(`referenced event ${id} is unknown`);
                out.push([id, { sha256: base64Unpadded(referenceHash(e, v)) }]);
            }
            return out;
        };
        pdu.prev_events = await refs(prevIds);
        pdu.auth_events = await refs(authIds);
    }
    return pdu;
}
/** The bytes a server signs (and, from v3, the reference hash covers): the redacted event, canonical. */
function signedBytesOf(pdu, v) {
    const { signatures: _rs, unsigned: _ru, ...redacted } = redactEvent(pdu, v, { shareTopLevel: true });
    return Buffer.from(canonicalJson(redacted));
}
/**
 * Adds `signer`'s signature to an event signed by others (an invite this server countersigns, a
 * restricted join it authorises), keeping theirs. Returns the event with the new signatures.
 */
export function addSignature(pdu, v, signer) {
    const signature = base64Unpadded(signBytes(signedBytesOf(pdu, v), signer.key.privateKey));
    const signatures = { ...(pdu.signatures ?? {}), [signer.serverName]: { ...(pdu.signatures?.[signer.serverName] ?? {}), [signer.key.keyId]: signature } };
    return { ...pdu, signatures };
}
/**
 * Hashes, signs and names a PDU (its `unsigned` left out; v1–2: its `event_id` already set). The signature and the reference hash (the v3+ event id) are both
 * defined over the same bytes — the canonical JSON of the redacted event without `signatures` and
 * `unsigned` — so they are encoded once. The whole-PDU size limit is measured exactly only when the
 * event is near it.
 */
export function sealEvent(pdu, v, signer) {
    const serverName = signer.serverName;
    checkContentDepth(pdu);
    const { unsigned: _u, signatures: _s, hashes: _h, ...hashable } = pdu;
    const contentJson = canonicalJson(hashable);
    pdu.hashes = { sha256: base64Unpadded(createHash("sha256").update(contentJson).digest()) };
    const signedBytes = signedBytesOf(pdu, v);
    const key = signer.key;
    pdu.signatures = { [serverName]: { [key.keyId]: base64Unpadded(signBytes(signedBytes, key.privateKey)) } };
    if (Buffer.byteLength(contentJson) > MAX_PDU_BYTES - 1024)
        checkPduSize(pdu);
    else
        checkFieldSizes(pdu);
    let eventId;
    if (v.eventIdFormat === "server-assigned")
        eventId = pdu.event_id;
    else {
        const hash = createHash("sha256").update(signedBytes).digest();
        eventId = "$" + (v.eventIdFormat === "reference-hash-base64" ? base64Unpadded(hash) : base64UrlUnpadded(hash));
    }
    return { eventId, pdu, json: JSON.stringify(pdu) };
}
function checkFieldSizes(pdu) {
    for (const field of LIMITED_FIELDS) {
        const value = pdu[field];
        if (typeof value === "string" && Buffer.byteLength(value, "utf8") > MAX_FIELD_BYTES)
            throw new MatrixError("M_TOO_LARGE", `'${field}' is longer than ${MAX_FIELD_BYTES} bytes`);
    }
}
