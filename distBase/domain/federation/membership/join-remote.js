import { isPlainObject } from "../../events/types.js";
import { eventIdOf } from "../../events/hashes.js";
import { fedPath } from "../../../federation/client.js";
import { stateKeyOf } from "../../store/state-groups.js";
import { receiveRemoteEvents } from "../../rooms/receive.js";
import { badAnswer, makeAndSign, sameEvent, throughServers } from "./handshake.js";
import { loadRoom } from "../../rooms/room-cache.js";
import { markPartialState } from "../partial-state/flag.js";
import { resyncInBackground } from "../partial-state/resync.js";
/** Most events a send_join answer may hold (state and auth chain together). */
const MAX_JOIN_EVENTS = 100_000;
const SEND_JOIN_MAX_BYTES = 200 * 1024 * 1024;
const SEND_JOIN_TIMEOUT_MS = 180_000;
/** Most servers a partial-state answer's servers_in_room may name. */
const MAX_SERVERS_IN_ROOM = 10_000;
/** servers_in_room of a partial-state answer: the joined server first, this one left out. */
function serversInRoom(s, server, answer) {
    const list = answer.servers_in_room;
    if (!Array.isArray(list) || list.length > MAX_SERVERS_IN_ROOM || !list.every((x) => typeof x === "string" && x.length > 0 && x.length <= 255))
        throw badAnswer(server, "send_join omitted members but named no servers_in_room");
    return [...new Set([server, ...list])].filter((x) => x !== s.config.server_name);
}
/** Joins `userId` to `roomId` through the first of `servers` that lets it in; `content` is the member event's. */
export async function joinRemoteRoom(s, roomId, userId, servers, content) {
    // Partial state only for a room this server holds no state of (else it knows the members already).
    const askPartial = (await loadRoom(s, roomId)) === undefined;
    const partial = await throughServers(s, servers, "join the room", async (server) => {
        const { version, built } = await makeAndSign(s, server, roomId, userId, "join", content);
        const answer = await s.federation.putJson(server, fedPath `/_matrix/federation/v2/send_join/${roomId}/${built.eventId}`, built.pdu, {
            maxBytes: SEND_JOIN_MAX_BYTES,
            timeoutMs: SEND_JOIN_TIMEOUT_MS,
            ...(askPartial ? { query: { omit_members: "true" } } : {}),
        });
        if (!isPlainObject(answer) || !Array.isArray(answer.state) || !Array.isArray(answer.auth_chain))
            throw badAnswer(server, "send_join answered no state and auth chain");
        const { state, auth_chain: chain } = answer;
        const partialServers = askPartial && answer.members_omitted === true ? serversInRoom(s, server, answer) : undefined;
        if (state.length + chain.length > MAX_JOIN_EVENTS)
            throw badAnswer(server, "send_join answered too many events");
        // The create event, of the version make_join named.
        const create = state.find((e) => isPlainObject(e) && e.type === "m.room.create" && e.state_key === "");
        if (!create)
            throw badAnswer(server, "send_join answered a state without a create event");
        const createVersion = isPlainObject(create.content) && create.content.room_version !== undefined ? create.content.room_version : "1";
        if (createVersion !== version.id)
            throw badAnswer(server, `the create event says room version ${String(createVersion)}, make_join said ${version.id}`);
        // A restricted join comes back countersigned by the authorising server: the same event, more signatures.
        let join = built.pdu;
        if (answer.event !== undefined && sameEvent(built.pdu, answer.event) && isPlainObject(answer.event.signatures))
            join = { ...built.pdu, signatures: { ...answer.event.signatures, ...built.pdu.signatures } };
        const stateBefore = new Map();
        for (const e of state) {
            if (!isPlainObject(e) || typeof e.type !== "string" || typeof e.state_key !== "string")
                throw badAnswer(server, "send_join answered a state entry that is not a state event");
            try {
                stateBefore.set(stateKeyOf(e.type, e.state_key), eventIdOf(e, version));
            }
            catch {
                throw badAnswer(server, "send_join answered a state event without an id");
            }
        }
        const inputs = [
            ...chain.map((pdu) => ({ pdu, outlier: true })),
            ...state.map((pdu) => ({ pdu, outlier: true })),
            { pdu: join, stateBefore, noSoftFail: true },
        ];
        const mark = partialServers ? { roomId, joinEventId: built.eventId, servers: partialServers } : undefined;
        const outcomes = await receiveRemoteEvents(s, roomId, inputs, {
            mustAccept: [inputs.length - 1],
            ...(mark ? { partialState: true, alsoWrite: (tx) => markPartialState(s, tx, mark) } : {}),
        });
        const stored = await s.rooms.events.get(built.eventId);
        if (!stored || stored.outlier || stored.rejectedReason !== null || stored.softFailed) {
            const o = outcomes[inputs.length - 1];
            throw badAnswer(server, `the join is not allowed by the state ${server} answered (${o.status}${"reason" in o ? `: ${o.reason}` : ""})`);
        }
        return mark !== undefined;
    });
    if (partial)
        resyncInBackground(s, roomId);
}
