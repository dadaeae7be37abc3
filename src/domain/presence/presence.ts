// Presence (spec: Client-Server API "Presence"): PUT/GET /presence/{userId}/status, the `set_presence`
// parameter of /sync, and the idle sweep (online → unavailable after 5 minutes without activity, as
// Synapse's IDLE_TIMER). Each change moves the presence stream and wakes the syncs of the user and of
// everyone who shares a room with them (the only users who may see it). With `use_presence: false`
// (Synapse's `presence.enabled`) updates are accepted and dropped, and everyone reads as offline.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { PresenceRow, PresenceState } from "../store/presence.ts";
import { checkStorableText } from "../text.ts";
import { runOnWriter, writerElsewhere } from "../cluster/stream-ops.ts";

export const PRESENCE_STATES: readonly PresenceState[] = ["online", "unavailable", "offline"];
/** Online users idle this long become unavailable (Synapse's IDLE_TIMER). */
export const IDLE_TIMEOUT_MS = 5 * 60_000;
/** last_active is refreshed by syncs at most this often; within it a user counts as currently active. */
export const LAST_ACTIVE_GRANULARITY_MS = 60_000;

export interface PresenceContent {
  presence: PresenceState;
  last_active_ago?: number;
  currently_active?: boolean;
  status_msg?: string;
}

/** The presence content of a row as clients see it, now. */
export function presenceContent(row: PresenceRow | undefined, now: number): PresenceContent {
  if (!row) return { presence: "offline" };
  return {
    presence: row.state,
    ...(row.lastActiveTs > 0 ? { last_active_ago: Math.max(0, now - row.lastActiveTs) } : {}),
    ...(row.state !== "offline" ? { currently_active: row.currentlyActive && now - row.lastActiveTs < IDLE_TIMEOUT_MS } : {}),
    ...(row.statusMsg !== null ? { status_msg: row.statusMsg } : {}),
  };
}

/** The m.presence event of a row (sync's presence.events). */
export function presenceEvent(row: PresenceRow, now: number): { type: "m.presence"; sender: string; content: PresenceContent } {
  return { type: "m.presence", sender: row.userId, content: presenceContent(row, now) };
}

/** Wakes the syncs that may see `userId`'s presence (a local or remote user). */
export async function announce(s: Services, userId: string, position: number): Promise<void> {
  const userIds = [...new Set([userId, ...(await s.e2ee.usersSharingRoomsWith(userId))])];
  s.rooms.notifier.notify({ stream: "presence", position, userIds });
}

/** Applies a change computed from the current row (undefined: no change) and announces it. */
async function change(s: Services, userId: string, next: (cur: PresenceRow | undefined, now: number) => Omit<PresenceRow, "streamId"> | undefined): Promise<PresenceRow | undefined> {
  if (!s.config.use_presence) return undefined;
  const now = s.clock.now();
  const row = await s.presence.update(userId, (cur) => next(cur, now));
  if (row) await announce(s, userId, row.streamId);
  return row;
}

export interface PresenceUpdate {
  presence: PresenceState;
  statusMsg: string | null;
}

export function parsePresenceBody(body: Record<string, unknown>): PresenceUpdate {
  const p = body.presence;
  if (p === undefined) throw new MatrixError("M_MISSING_PARAM", "Missing presence", 400);
  if (typeof p !== "string") throw new MatrixError("M_BAD_JSON", "presence must be a string", 400);
  if (!PRESENCE_STATES.includes(p as PresenceState)) throw new MatrixError("M_INVALID_PARAM", "presence must be online, unavailable or offline", 400);
  const msg = body.status_msg;
  if (msg !== undefined && msg !== null && typeof msg !== "string") throw new MatrixError("M_BAD_JSON", "status_msg must be a string", 400);
  if (typeof msg === "string" && msg.length > 1024) throw new MatrixError("M_INVALID_PARAM", "status_msg is too long", 400);
  if (typeof msg === "string") checkStorableText(msg, "status_msg");
  return { presence: p as PresenceState, statusMsg: (msg as string | null | undefined) ?? null };
}

/** PUT /presence/{userId}/status: one's own state and status message (cleared when absent, as in Synapse). */
export async function setPresence(s: Services, r: Requester, userId: string, u: PresenceUpdate): Promise<void> {
  const writer = writerElsewhere(s, "setPresence"); // presence is written by its writer (cluster/stream-ops.ts)
  if (writer) return runOnWriter(s, writer, "setPresence", r, [userId, u]);
  checkUserId(userId);
  if (r.userId !== userId) throw new MatrixError("M_FORBIDDEN", "You cannot set the presence of another user", 403);
  await change(s, userId, (cur, now) => ({
    userId,
    state: u.presence,
    statusMsg: u.statusMsg,
    lastActiveTs: u.presence === "online" ? now : (cur?.lastActiveTs ?? now),
    lastUserSyncTs: cur?.lastUserSyncTs ?? 0,
    currentlyActive: u.presence === "online",
  }));
}

/** GET /presence/{userId}/status: oneself, or a user who shares a room with the requester (M_FORBIDDEN otherwise). */
export async function getPresence(s: Services, r: Requester, userId: string): Promise<PresenceContent> {
  checkUserId(userId);
  if (r.userId !== userId && !(await s.e2ee.usersSharingRoomsWith(r.userId)).has(userId))
    throw new MatrixError("M_FORBIDDEN", "You are not allowed to see their presence", 403);
  if (!s.config.use_presence) return { presence: "offline" };
  return presenceContent(await s.presence.get(userId), s.clock.now());
}

/**
 * /sync `set_presence`: "online" marks the user online and active (written when the state changes or
 * last_active is older than the granularity), "unavailable" marks them unavailable, "offline" leaves
 * their presence alone (Synapse: a sync that does not affect presence).
 */
export async function presenceFromSync(s: Services, r: Requester, state: PresenceState): Promise<void> {
  if (state === "offline" || r.isGuest || !s.config.use_presence) return;
  const next = (cur: PresenceRow | undefined, now: number): Omit<PresenceRow, "streamId"> | undefined => {
    if (state === "online" && cur?.state === "online" && now - cur.lastActiveTs < LAST_ACTIVE_GRANULARITY_MS) return undefined;
    if (state === "unavailable" && cur?.state === "unavailable") return undefined;
    return {
      userId: r.userId,
      state,
      statusMsg: cur?.statusMsg ?? null,
      lastActiveTs: state === "online" ? now : (cur?.lastActiveTs ?? now),
      lastUserSyncTs: now,
      currentlyActive: state === "online",
    };
  };
  // Most syncs change nothing (online within the granularity): decided on the cached row, without queueing
  // behind other users' presence writes. A change is decided again in the write's turn.
  if (next(await s.presence.get(r.userId), s.clock.now()) === undefined) return;
  // With several processes the presence writer writes it (two processes writing one user's row race);
  // a sync does not fail because that writer is unreachable (Synapse's workers' USER_SYNC is fire-and-forget too).
  const writer = writerElsewhere(s, "presenceFromSync");
  if (writer) {
    await runOnWriter(s, writer, "presenceFromSync", r, [state]).catch((err: unknown) => s.log.warn({ err, writer }, "presence: the presence writer did not take a sync's presence"));
    return;
  }
  await change(s, r.userId, next);
}

/** Marks online users idle since `now - IDLE_TIMEOUT_MS` unavailable. Returns how many changed. */
export async function sweepIdlePresence(s: Services, now = s.clock.now()): Promise<number> {
  if (!s.config.use_presence) return 0;
  let n = 0;
  for (const userId of await s.presence.idleOnline(now - IDLE_TIMEOUT_MS, s.config.server_name)) {
    const row = await change(s, userId, (cur) =>
      cur && cur.state === "online" && cur.lastActiveTs < now - IDLE_TIMEOUT_MS ? { ...cur, state: "unavailable", currentlyActive: false } : undefined,
    );
    if (row) n++;
  }
  return n;
}

/** Validates a presence user id path parameter loosely (a user id). */
export function checkUserId(userId: string): void {
  if (!/^@[^:]+:.+$/.test(userId)) throw new MatrixError("M_INVALID_PARAM", `${userId} is not a valid user ID`, 400);
}
