// A local user joins a room this server is not in, through a server that is: make_join (offering every
// room version we implement), the join completed and signed here, send_join v2 (v1 for a server that
// serves no v2: v1-fallback.ts), then everything the
// answer holds checked before anything is kept — the create event and the room version, each state and
// auth chain event's format, signatures, content hash and authorization (through the remote planner, as
// outliers), and the join itself against the returned state. One commit stores it all: the room then
// exists here with its state and the user joined. A server whose answer fails is skipped for the next.
// Unless this server is in the room with its full state, the join asks for partial state (omit_members=true,
// "faster joins", as Synapse): when the resident server leaves the members out, the join is accepted
// against the state it answered, the room is marked partial in the same commit (a room already partial
// keeps its first join's mark), and the full state is fetched in the background (partial-state/resync.ts)
// while /join returns. A join the answer's own state refuses is 403 (Synapse's "Join event was rejected").
// Joining another server's replacement of a room this server is in carries its members' state over
// (rooms/upgrade-user-state.ts).
// Spec: Server-Server API "Joining Rooms" (make_join, send_join v2 and omit_members), "Checks performed on
// receipt of a PDU".
import type { Services } from "../../services.ts";
import type { Pdu } from "../../events/types.ts";
import { isPlainObject, prevEventIds } from "../../events/types.ts";
import { eventIdOf } from "../../events/hashes.ts";
import { fedPath } from "../../../federation/client.ts";
import { stateKeyOf } from "../../store/state-groups.ts";
import { receiveRemoteEvents, type RemoteEventInput } from "../../rooms/receive.ts";
import { badAnswer, JOIN_FAILOVER_ERRCODES, makeAndSign, sameEvent, throughServers } from "./handshake.ts";
import { putV2OrV1 } from "./v1-fallback.ts";
import { loadRoom } from "../../rooms/room-cache.ts";
import { isPartialState, markPartialState, markPartialStateJoin } from "../partial-state/flag.ts";
import { hostInRoom } from "./residency.ts";
import { MatrixError } from "../../errors.ts";
import { resyncInBackground } from "../partial-state/resync.ts";
import { transferFromPredecessor } from "../../rooms/upgrade-user-state.ts";

/** Most events a send_join answer may hold (state and auth chain together). */
const MAX_JOIN_EVENTS = 100_000;
const SEND_JOIN_MAX_BYTES = 200 * 1024 * 1024;
const SEND_JOIN_TIMEOUT_MS = 180_000;
/** Most servers a partial-state answer's servers_in_room may name. */
const MAX_SERVERS_IN_ROOM = 10_000;

/** servers_in_room of a partial-state answer: the joined server first, this one left out. */
function serversInRoom(s: Services, server: string, answer: Record<string, unknown>): string[] {
  const list = answer.servers_in_room;
  if (!Array.isArray(list) || list.length > MAX_SERVERS_IN_ROOM || !list.every((x) => typeof x === "string" && x.length > 0 && x.length <= 255))
    throw badAnswer(server, "send_join omitted members but named no servers_in_room");
  return [...new Set([server, ...(list as string[])])].filter((x) => x !== s.config.server_name);
}

export interface JoinRemoteOptions {
  /**
   * Called with a server's make_join template before its send_join: true when the caller joined another
   * way meanwhile (a restricted join a member of ours may authorise after all), and the remote join is
   * dropped.
   */
  instead?: (template: Pdu) => Promise<boolean>;
}

/** Joins `userId` to `roomId` through the first of `servers` that lets it in; `content` is the member event's. */
export async function joinRemoteRoom(s: Services, roomId: string, userId: string, servers: readonly string[], content: Record<string, unknown>, opts: JoinRemoteOptions = {}): Promise<void> {
  // Partial state unless this server is in the room with its full state (Synapse: not the host joined,
  // or the room already partial); a room already partial stays marked from its first join.
  const known = await loadRoom(s, roomId);
  const alreadyPartial = known !== undefined && (await isPartialState(s, roomId));
  const askPartial = !known || alreadyPartial || !(await hostInRoom(s, roomId));
  const partial = await throughServers(s, servers, "join the room", async (server) => {
    const { version, built } = await makeAndSign(s, server, roomId, userId, "join", content);
    if (opts.instead && (await opts.instead(built.pdu))) return "instead" as const;
    const answer = await putV2OrV1(s, server, "send_join", {
      v2: { path: fedPath`/_matrix/federation/v2/send_join/${roomId}/${built.eventId}`, body: built.pdu },
      v1: { path: fedPath`/_matrix/federation/v1/send_join/${roomId}/${built.eventId}`, body: built.pdu },
    }, {
      maxBytes: SEND_JOIN_MAX_BYTES,
      timeoutMs: SEND_JOIN_TIMEOUT_MS,
      ...(askPartial ? { query: { omit_members: "true" } } : {}),
    });
    if (!isPlainObject(answer) || !Array.isArray(answer.state) || !Array.isArray(answer.auth_chain)) throw badAnswer(server, "send_join answered no state and auth chain");
    const { state, auth_chain: chain } = answer;
    const partialServers = askPartial && answer.members_omitted === true ? serversInRoom(s, server, answer) : undefined;
    if (state.length + chain.length > MAX_JOIN_EVENTS) throw badAnswer(server, "send_join answered too many events");

    // The create event, of the version make_join named.
    const create = state.find((e) => isPlainObject(e) && e.type === "m.room.create" && e.state_key === "") as Pdu | undefined;
    if (!create) throw badAnswer(server, "send_join answered a state without a create event");
    const createVersion = isPlainObject(create.content) && create.content.room_version !== undefined ? create.content.room_version : "1";
    if (createVersion !== version.id) throw badAnswer(server, `the create event says room version ${String(createVersion)}, make_join said ${version.id}`);

    // A restricted join comes back countersigned by the authorising server: the same event, more signatures.
    let join = built.pdu;
    if (answer.event !== undefined && sameEvent(built.pdu, answer.event) && isPlainObject(answer.event.signatures))
      join = { ...built.pdu, signatures: { ...answer.event.signatures, ...built.pdu.signatures } };

    const stateBefore = new Map<string, string>();
    for (const e of state) {
      if (!isPlainObject(e) || typeof e.type !== "string" || typeof e.state_key !== "string") throw badAnswer(server, "send_join answered a state entry that is not a state event");
      try {
        stateBefore.set(stateKeyOf(e.type, e.state_key), eventIdOf(e as Pdu, version));
      } catch {
        throw badAnswer(server, "send_join answered a state event without an id");
      }
    }
    // A partial join into a room this server holds: the state before it from the prev_events it has, the
    // answer standing for those it lacks (Synapse: a second partial join keeps the first one's members).
    const prevs = prevEventIds(join as Pdu);
    const held = partialServers && known ? await s.rooms.events.getMany(prevs) : new Map();
    const missing = prevs.filter((id) => !held.get(id) || held.get(id)!.outlier);
    const joinInput: RemoteEventInput =
      partialServers && known && missing.length < prevs.length
        ? { pdu: join, prevStates: new Map(missing.map((id) => [id, stateBefore])), noSoftFail: true }
        : { pdu: join, stateBefore, noSoftFail: true };
    const inputs: RemoteEventInput[] = [...chain.map((pdu) => ({ pdu, outlier: true })), ...state.map((pdu) => ({ pdu, outlier: true })), joinInput];
    const mark = partialServers && !alreadyPartial ? { roomId, joinEventId: built.eventId, servers: partialServers } : undefined;
    const outcomes = await receiveRemoteEvents(s, roomId, inputs, {
      mustAccept: [inputs.length - 1],
      ...(partialServers
        ? {
            partialState: true,
            alsoWrite: (tx) => (mark ? markPartialState(s, tx, mark) : markPartialStateJoin(s, tx, built.eventId)),
          }
        : {}),
    });
    const stored = await s.rooms.events.get(built.eventId);
    if (!stored || stored.outlier || stored.rejectedReason !== null || stored.softFailed) {
      const o = outcomes[inputs.length - 1]!;
      // The answer's own state refuses the join (e.g. a ban): refused, as Synapse ("Join event was rejected").
      if (o.status === "rejected") throw new MatrixError("M_FORBIDDEN", `Join event was rejected: ${o.reason}`, 403);
      throw badAnswer(server, `the join is not allowed by the state ${server} answered (${o.status}${"reason" in o ? `: ${o.reason}` : ""})`);
    }
    return partialServers !== undefined;
  }, JOIN_FAILOVER_ERRCODES);
  if (partial === "instead") return;
  if (partial) resyncInBackground(s, roomId);
  // The replacement of a room this server is in: its local members' push rules, tags and m.direct follow.
  await transferFromPredecessor(s, roomId);
}
