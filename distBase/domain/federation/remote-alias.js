// Resolving a room alias of another server: GET /_matrix/federation/v1/query/directory on the alias's
// server, its answer checked (a remote server is untrusted input: a room id, and a bounded list of server
// names), merged with the servers this server knows to be in the room, as Synapse does. Used by the
// client's GET /directory/room/{roomAlias} and by joins through a remote alias (fed-membership).
// Spec: Server-Server API "Querying for information" (query/directory).
import { MatrixError, notFound } from "../errors.js";
import { isValidServerName, parseRoomAlias, tryParseRoomId } from "../ids.js";
import { FederationError } from "../../federation/errors.js";
import { remoteServersInRoom } from "./room-servers.js";
/** Most servers taken from a remote answer (they are join candidates, tried in order). */
const MAX_SERVERS = 100;
/** Asks the alias's server where `alias` points: M_NOT_FOUND when it knows no such alias, 502 when it cannot answer. */
export async function resolveRemoteAlias(s, alias) {
    const { serverName } = parseRoomAlias(alias);
    let answer;
    try {
        answer = await s.federation.getJson(serverName, "/_matrix/federation/v1/query/directory", { room_alias: alias }, { maxBytes: 64 * 1024, timeoutMs: 30_000 });
    }
    catch (err) {
        if (err instanceof FederationError && err.is(404))
            throw notFound(`Room alias ${alias} not found`);
        throw err;
    }
    const a = (typeof answer === "object" && answer !== null ? answer : {});
    if (typeof a.room_id !== "string" || !tryParseRoomId(a.room_id))
        throw new MatrixError("M_UNKNOWN", `${serverName} answered the alias query without a valid room_id`, 502);
    const servers = new Set();
    if (Array.isArray(a.servers))
        for (const v of a.servers.slice(0, MAX_SERVERS))
            if (typeof v === "string" && isValidServerName(v))
                servers.add(v);
    if (servers.size === 0)
        servers.add(serverName);
    for (const known of await remoteServersInRoom(s, a.room_id))
        servers.add(known);
    return { roomId: a.room_id, servers: [...servers] };
}
