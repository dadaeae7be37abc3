// Domain operations on a stream another instance writes (typing, presence, account data, receipts; and
// createRoom on a process that writes no events, made by an events writer) or on a room another writes
// (joins, leaves, knocks and invites, which may go over federation), called
// by a face that does not forward its requests as they came — the GraphQL face, or a domain caller — run
// by the stream's writer over the internal route: the operation's name, the requester (already
// authenticated here) and its arguments, all plain JSON; the writer runs the same operation and answers its
// result. The REST face forwards those requests whole (compat/cluster.ts) and never gets here. An
// operation that reaches an instance that does not write its stream either is refused, never sent on.
// Spec: none (process architecture).
import type { WriterStream } from "../../config/workers.ts";
import type { Requester } from "../accounts/requester.ts";
import type { Services } from "../services.ts";
import { writerOf } from "./write-routes.ts";

/** The internal route that runs a stream operation on its writer. */
export const INTERNAL_STREAM_OP = "/streams/op";

/** The operations that run on their stream's writer, and the stream of each. */
export const STREAM_OPS = { setTyping: "typing", setPresence: "presence", presenceFromSync: "presence", setAccountData: "account_data", markRead: "receipts", createRoom: "events" } as const satisfies Record<string, WriterStream>;
export type StreamOp = keyof typeof STREAM_OPS;

/** The writer of `op`'s stream when it is another instance (undefined: run it here). */
export function writerElsewhere(s: Services, op: StreamOp): string | undefined {
  if (!s.topology.distributed) return undefined;
  const writer = writerOf(s, STREAM_OPS[op]);
  return writer === s.topology.instanceName ? undefined : writer;
}

/**
 * The room operations that run whole on the room's events writer (a remote join, leave or knock
 * persists what the other server answers, outside the append path): the first argument names the room.
 */
export const ROOM_OPS = ["joinRoom", "knockRoom", "leaveRoom", "inviteUser"] as const;
export type RoomOp = (typeof ROOM_OPS)[number];

/** The events writer of `roomId` when it is another instance (undefined: run it here). */
export function roomWriterElsewhere(s: Services, roomId: string): string | undefined {
  if (!s.topology.distributed) return undefined;
  const writer = s.topology.eventWriterFor(roomId);
  return writer === s.topology.instanceName ? undefined : writer;
}

/** Runs `op` on `writer` (from writerElsewhere or roomWriterElsewhere) as `r`; its result. */
export async function runOnWriter<T>(s: Services, writer: string, op: StreamOp | RoomOp, r: Requester, args: unknown[]): Promise<T> {
  const answer = await s.internal.call(writer, INTERNAL_STREAM_OP, { op, requester: r, args });
  return answer.result as T;
}
