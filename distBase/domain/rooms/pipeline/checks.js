import { authEventIds, domainOf, isPlainObject } from "../../events/types.js";
import { checkContentHash } from "../../events/hashes.js";
import { redactEvent } from "../../events/redaction.js";
import { signingBytes, verifyBytes, keyAlgorithm, ED25519 } from "../../signing.js";
import { authTypesForEvent, checkAuth, checkAuthEventsList, stateMapKey, verifyThirdPartyInviteSigned } from "../../auth/index.js";
import { MatrixError } from "../../errors.js";
import { stateKeyOf } from "../../store/state-groups.js";
/**
 * The servers whose signatures an event needs: the sender's; in v1–2 also the event id's; from v8 on, for
 * a join naming `join_authorised_via_users_server`, that user's server.
 */
export function requiredSigners(pdu, v) {
    const out = new Set();
    const add = (id) => {
        const d = typeof id === "string" ? domainOf(id) : undefined;
        if (d)
            out.add(d);
        else
            throw new MatrixError("M_BAD_JSON", `Cannot tell the server of ${JSON.stringify(id)}`);
    };
    add(pdu.sender);
    if (v.eventIdFormat === "server-assigned")
        add(pdu.event_id);
    const via = pdu.content["join_authorised_via_users_server"];
    if (v.restricted && pdu.type === "m.room.member" && pdu.content["membership"] === "join" && typeof via === "string")
        add(via);
    return out;
}
/**
 * Checks the signatures of a received PDU (over its redacted form): each required server has signed it
 * with at least one ed25519 key the key ring knows (valid at the event's origin_server_ts from v5), and
 * every such signature verifies (also for the servers in `alsoRequired`: an invitee's server that
 * countersigned an invite). Returns the servers whose signatures verified; throws M_FORBIDDEN
 * otherwise (the event is then dropped).
 */
export async function checkSignatures(s, pdu, v, alsoRequired = []) {
    const bytes = signingBytes(redactEvent(pdu, v, { shareTopLevel: true }));
    const atTs = v.enforceKeyValidity ? pdu.origin_server_ts : 0;
    const verified = new Set();
    const sigs = isPlainObject(pdu.signatures) ? pdu.signatures : {};
    for (const server of new Set([...requiredSigners(pdu, v), ...alsoRequired])) {
        const mine = isPlainObject(sigs[server]) ? sigs[server] : {};
        let good = 0;
        for (const [keyId, signature] of Object.entries(mine)) {
            if (keyAlgorithm(keyId) !== ED25519 || typeof signature !== "string")
                continue;
            const key = await s.keyRing.verifyKey(server, keyId, atTs);
            if (!key)
                continue;
            if (!verifyBytes(bytes, signature, key))
                throw new MatrixError("M_FORBIDDEN", `Bad signature from ${server} (${keyId})`, 403);
            good++;
        }
        if (good === 0)
            throw new MatrixError("M_FORBIDDEN", `No valid signature from ${server}`, 403);
        verified.add(server);
    }
    return verified;
}
/**
 * The content hash check: the event as it continues through the pipeline — itself, or its redacted
 * form when `hashes.sha256` does not match its content.
 */
export function checkHashOrRedact(pdu, v) {
    if (checkContentHash(pdu))
        return { pdu, redacted: false };
    return { pdu: redactEvent(pdu, v), redacted: true };
}
/**
 * Authorizes `pdu` against its own auth events (already loaded, in `auth_events` order; a rejected one
 * is named by `isRejected`). Throws an AuthError (M_FORBIDDEN) naming the failed rule.
 */
export function authorizeWithAuthEvents(room, pdu, authEvents, signedBy, isRejected) {
    checkAuthEventsList(pdu, authEvents, room.version, { isRejected });
    const authState = new Map();
    for (const e of authEvents)
        authState.set(stateMapKey(e.type, e.state_key ?? ""), e);
    checkAuth(pdu, authState, room.version, {
        createEvent: room.createEvent,
        createEventId: room.createEventId,
        verifyServerSignature: (_event, serverName) => signedBy(serverName),
        verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
    });
}
/**
 * Authorizes `pdu` against a state map (the state before it, or current state): the auth events the
 * selection rules pick from that state are loaded and the rules run on them. Throws an AuthError.
 */
export async function authorizeWithState(room, pdu, state, signedBy, lookup) {
    const ids = authTypesForEvent(room.version, pdu.type, pdu.state_key, pdu.sender, pdu.content)
        .map(([t, k]) => state.get(stateKeyOf(t, k)))
        .filter((id) => id !== undefined);
    const events = await lookup(ids);
    const authState = new Map();
    for (const id of ids) {
        const e = events.get(id);
        if (e)
            authState.set(stateMapKey(e.type, e.state_key ?? ""), e);
    }
    checkAuth(pdu, authState, room.version, {
        createEvent: room.createEvent,
        createEventId: room.createEventId,
        verifyServerSignature: (_event, serverName) => signedBy(serverName),
        verifyThirdPartyInviteSignature: verifyThirdPartyInviteSigned,
    });
}
/** Authorizes an event this server built against its auth events (found through `lookup`). */
export async function authorizeEvent(s, room, pdu, lookup) {
    const authEvents = [];
    for (const id of authEventIds(pdu)) {
        const e = await lookup(id);
        if (!e)
            throw new MatrixError("M_FORBIDDEN", `Event references unknown auth event ${id}`, 403);
        authEvents.push(e);
    }
    // Local events are signed by this server as they are built.
    authorizeWithAuthEvents(room, pdu, authEvents, (server) => server === s.config.server_name);
}
