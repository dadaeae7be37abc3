// Simplified sliding sync (MSC4186, POST /unstable/org.matrix.simplified_msc3575/sync) reduced to what
// thread subscriptions need, served only with experimental_features.msc4306_enabled: its extensions
// part, of which this server knows one, MSC4308's `io.element.msc4308.thread_subscriptions`
// ({enabled, limit}: the user's latest `limit` subscription changes since `pos`). Room lists and room
// subscriptions are not served (a request asking for them is refused, 400 M_INVALID_PARAM, rather than
// answered with no rooms); other extensions are ignored, as the MSC allows. `pos` (query) is
// `ss<thread-subscriptions position>`; with `timeout` (ms) an incremental request with nothing new
// waits for a change. As Synapse: the extension is left out when nothing changed.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { isPlainObject } from "../events/types.ts";
import type { Cancel } from "./wait.ts";
import { formatChanges, parseSlidingPos, slidingPos, type ThreadSubscriptionUpdates } from "../threads/subscription-feed.ts";

export const THREAD_SUBSCRIPTIONS_EXTENSION = "io.element.msc4308.thread_subscriptions";
const MAX_TIMEOUT_MS = 5 * 60_000;
const MAX_LIMIT = 512;

export interface SlidingSyncRequest {
  pos?: string;
  timeoutMs?: number;
  body: Record<string, unknown>;
  cancel?: Cancel;
}

export interface SlidingSyncResponse {
  pos: string;
  rooms: Record<string, never>;
  extensions: { [THREAD_SUBSCRIPTIONS_EXTENSION]?: ThreadSubscriptionUpdates & { prev_batch?: string } };
}

const badJson = (msg: string) => new MatrixError("M_BAD_JSON", msg, 400);

/** The thread-subscriptions extension's request: undefined when not enabled. */
function threadSubscriptionsRequest(body: Record<string, unknown>): { limit: number } | undefined {
  const extensions = body.extensions;
  if (extensions === undefined || extensions === null) return undefined;
  if (!isPlainObject(extensions)) throw badJson("extensions must be an object");
  const ext = extensions[THREAD_SUBSCRIPTIONS_EXTENSION];
  if (ext === undefined || ext === null) return undefined;
  if (!isPlainObject(ext)) throw badJson(`extensions.${THREAD_SUBSCRIPTIONS_EXTENSION} must be an object`);
  if (ext.enabled !== undefined && ext.enabled !== null && typeof ext.enabled !== "boolean") throw badJson("enabled must be a boolean");
  const limit = ext.limit ?? 100;
  if (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 0) throw badJson("limit must be a non-negative integer");
  return ext.enabled === true ? { limit: Math.min(limit, MAX_LIMIT) } : undefined;
}

function refuseRooms(body: Record<string, unknown>): void {
  for (const key of ["lists", "room_subscriptions"]) {
    const v = body[key];
    if (v === undefined || v === null) continue;
    if (!isPlainObject(v)) throw badJson(`${key} must be an object`);
    if (Object.keys(v).length > 0) throw new MatrixError("M_INVALID_PARAM", `This server's sliding sync serves extensions only (thread subscriptions), not ${key}`, 400);
  }
}

export async function slidingSync(s: Services, r: Requester, req: SlidingSyncRequest): Promise<SlidingSyncResponse> {
  let from: number | undefined;
  if (req.pos !== undefined) {
    from = parseSlidingPos(req.pos);
    if (from === undefined) throw new MatrixError("M_INVALID_PARAM", "Invalid pos", 400);
  }
  refuseRooms(req.body);
  const ext = threadSubscriptionsRequest(req.body);
  const store = s.threadSubscriptions.store;
  const watch = s.threadSubscriptions.feed.watch(r.userId);
  try {
    let to = await store.currentPosition();
    if (from !== undefined && from > to) throw new MatrixError("M_INVALID_PARAM", "pos is ahead of the server", 400);
    const read = async () => (ext && ext.limit > 0 ? store.changes(r.userId, from ?? 0, to, ext.limit) : []);
    let changes = await read();
    if (from !== undefined && changes.length === 0 && (req.timeoutMs ?? 0) > 0) {
      await watch.until(Math.max(from, to), Math.min(req.timeoutMs!, MAX_TIMEOUT_MS), [s.sync.shuttingDown, ...(req.cancel ? [req.cancel] : [])]);
      to = await store.currentPosition();
      changes = await read();
    }
    const res: SlidingSyncResponse = { pos: slidingPos(to), rooms: {}, extensions: {} };
    if (changes.length > 0) {
      const out: ThreadSubscriptionUpdates & { prev_batch?: string } = formatChanges(changes);
      if (changes.length === ext!.limit) out.prev_batch = `ts${changes[0]!.streamId - 1}`;
      res.extensions[THREAD_SUBSCRIPTIONS_EXTENSION] = out;
    }
    return res;
  } finally {
    watch.dispose();
  }
}
