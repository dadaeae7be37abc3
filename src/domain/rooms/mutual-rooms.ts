// GET /_matrix/client/v1/mutual_rooms (spec v1.19, MSC2666): the rooms the requester and another user
// are both joined to, by room id, a page at a time (`from` is the last room id of the previous page,
// opaque to clients), with the total count. A user id that is not one, or the requester's own, answers
// M_INVALID_PARAM; a user who shares nothing (or does not exist) gets an empty list.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isValidUserId } from "../ids.ts";

const PAGE = 100;

export interface MutualRooms {
  joined: string[];
  count: number;
  next_batch?: string;
}

export async function mutualRooms(s: Services, r: Requester, userId: string | undefined, from?: string): Promise<MutualRooms> {
  if (userId === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing user_id", 400);
  if (!isValidUserId(userId)) throw new MatrixError("M_INVALID_PARAM", "The user ID provided was invalid", 400);
  if (userId === r.userId) throw new MatrixError("M_INVALID_PARAM", "You cannot request a list of shared rooms with yourself", 400);
  let after = "";
  if (from !== undefined) {
    const m = /^m(![^\s]+)$/.exec(from);
    if (!m) throw new MatrixError("M_INVALID_PARAM", "Invalid from token", 400);
    after = m[1]!;
  }
  const { roomIds, count } = await s.rooms.store.mutualJoinedRooms(r.userId, userId, after, PAGE + 1);
  const joined = roomIds.slice(0, PAGE);
  return { joined, count, ...(roomIds.length > PAGE ? { next_batch: `m${joined[joined.length - 1]}` } : {}) };
}
