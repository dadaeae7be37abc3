// Presence over federation (Server-Server API "Presence", m.presence EDUs), only while presence is
// enabled (`presence.enabled` / `use_presence`). Outbound: each change of a local user's presence goes to
// the remote servers sharing a room with them; users not offline are re-announced every
// FEDERATION_PING_INTERVAL_MS so receivers do not time them out. Inbound: a remote server's updates of
// its own users (joined to a room here) are stored in the presence stream, shown in local /sync to those
// sharing a room; a remote user not heard of for FEDERATION_TIMEOUT_MS is taken offline (Synapse's rule).
import type { Services } from "../../services.ts";
import type { BackgroundTask } from "../../extensions.ts";
import type { EduHandler } from "../edu.ts";
import type { PresenceRow, PresenceState } from "../../store/presence.ts";
import { LAST_ACTIVE_GRANULARITY_MS, PRESENCE_STATES, announce, presenceContent } from "../../presence/presence.ts";
import { serverOfUser, serversSharingRoomsWith } from "../room-servers.ts";
import type { PresenceItem } from "../../../federation/sender/edu-buffer.ts";

/** Remote users not heard of this long are offline (Synapse's FEDERATION_TIMEOUT). */
export const FEDERATION_TIMEOUT_MS = 30 * 60_000;
/** Local users not offline are re-sent this often (Synapse's FEDERATION_PING_INTERVAL). */
export const FEDERATION_PING_INTERVAL_MS = 25 * 60_000;
/** How often the ping and the time-out are checked. */
const CHECK_INTERVAL_MS = 60_000;
const MAX_UPDATES_PER_EDU = 1000;
const MAX_STATUS_MSG = 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The m.presence update of a row, as of `now`. */
export function presenceItem(row: PresenceRow, now: number): PresenceItem {
  return { user_id: row.userId, ...presenceContent(row, now) };
}

/** Sends local users' rows to the remote servers sharing a room with each. */
async function sendRows(s: Services, rows: readonly PresenceRow[], lastSent: Map<string, number>): Promise<void> {
  const local = rows.filter((r) => serverOfUser(r.userId) === s.config.server_name);
  if (local.length === 0) return;
  const servers = await serversSharingRoomsWith(s, local.map((r) => r.userId));
  const now = s.clock.now();
  for (const row of local) {
    lastSent.set(row.userId, now);
    const destinations = servers.get(row.userId);
    if (destinations && destinations.size > 0) s.federationSender.sendPresence(destinations, [presenceItem(row, now)]);
  }
}

/** Remote users silent for FEDERATION_TIMEOUT_MS go offline. */
async function timeOutRemote(s: Services): Promise<void> {
  const now = s.clock.now();
  for (const userId of await s.presence.staleRemote(now - FEDERATION_TIMEOUT_MS)) {
    const row = await s.presence.update(userId, (cur) => (cur && cur.state !== "offline" ? { ...cur, state: "offline", currentlyActive: false } : undefined));
    if (row) await announce(s, userId, row.streamId);
  }
}

/** Local presence to the servers sharing rooms, the ping, and remote time-outs (declared in src/main.ts, `background`). */
export const presenceToFederation: BackgroundTask = (s) => {
  if (!s.config.use_presence) return () => {};
  const lastSent = new Map<string, number>();
  let last: number | undefined;
  let target = 0;
  let running = false;
  let stopped = false;

  const flush = async () => {
    while (!stopped && last !== undefined && target > last) {
      const upTo = target;
      const rows = await s.presence.changed(last, upTo);
      last = upTo;
      await sendRows(s, rows, lastSent);
    }
  };
  const kick = () => {
    if (running || last === undefined) return;
    running = true;
    flush()
      .catch((err: unknown) => s.log.warn({ err }, "could not send presence over federation"))
      .finally(() => {
        running = false;
        if (last !== undefined && target > last) kick();
      });
  };
  const off = s.rooms.notifier.onStream((n) => {
    if (n.stream !== "presence") return;
    target = Math.max(target, n.position);
    kick();
  });
  Promise.resolve(s.presence.currentPosition())
    .then((p) => {
      last = p;
      kick();
    })
    .catch((err: unknown) => s.log.warn({ err }, "presence stream position unreadable"));

  let checking = false;
  const timer = setInterval(() => {
    if (checking) return;
    checking = true;
    (async () => {
      const now = s.clock.now();
      const due = (await s.presence.notOffline()).filter((r) => serverOfUser(r.userId) === s.config.server_name && now - (lastSent.get(r.userId) ?? 0) >= FEDERATION_PING_INTERVAL_MS);
      await sendRows(s, due, lastSent);
      await timeOutRemote(s);
    })()
      .catch((err: unknown) => s.log.warn({ err }, "federation presence upkeep failed"))
      .finally(() => (checking = false));
  }, CHECK_INTERVAL_MS);
  timer.unref();
  return () => {
    stopped = true;
    off();
    clearInterval(timer);
  };
};

interface Update {
  userId: string;
  state: PresenceState;
  lastActiveAgo: number | undefined;
  currentlyActive: boolean;
  statusMsg: string | null;
}

function parseUpdates(s: Services, origin: string, content: unknown): Update[] {
  const out = new Map<string, Update>();
  if (!isObject(content) || !Array.isArray(content.push)) return [];
  for (const p of content.push.slice(0, MAX_UPDATES_PER_EDU)) {
    if (!isObject(p) || typeof p.user_id !== "string") continue;
    if (serverOfUser(p.user_id) !== origin) {
      s.log.info({ origin, userId: p.user_id }, "m.presence for a user of another server dropped");
      continue;
    }
    if (typeof p.presence !== "string" || !PRESENCE_STATES.includes(p.presence as PresenceState)) continue;
    const ago = p.last_active_ago;
    if (ago !== undefined && (typeof ago !== "number" || !Number.isSafeInteger(ago) || ago < 0)) continue;
    if (p.currently_active !== undefined && typeof p.currently_active !== "boolean") continue;
    const msg = p.status_msg;
    if (msg !== undefined && msg !== null && (typeof msg !== "string" || msg.length > MAX_STATUS_MSG)) continue;
    out.set(p.user_id, { userId: p.user_id, state: p.presence as PresenceState, lastActiveAgo: ago, currentlyActive: p.currently_active === true, statusMsg: msg ?? null });
  }
  return [...out.values()];
}

/** Inbound m.presence (declared in src/main.ts, `eduHandlers`). */
export const presenceEduHandler: EduHandler = {
  type: "m.presence",
  async handle(s: Services, origin: string, content: unknown): Promise<void> {
    if (!s.config.use_presence) return;
    const updates = parseUpdates(s, origin, content);
    if (updates.length === 0) return;
    // Only users in a room here matter to anyone here: one read for the whole EDU.
    const ids = updates.map((u) => u.userId);
    const inRooms = new Set(
      (await s.storage.sql.all<{ user_id: string }>(`SELECT DISTINCT user_id FROM room_memberships WHERE membership = 'join' AND user_id IN (${ids.map(() => "?").join(",")})`, ids)).map((r) => r.user_id),
    );
    const now = s.clock.now();
    const unchanged: string[] = [];
    for (const u of updates) {
      if (!inRooms.has(u.userId)) continue;
      const lastActiveTs = u.lastActiveAgo !== undefined ? now - u.lastActiveAgo : undefined;
      const row = await s.presence.update(u.userId, (cur) => {
        const sameActivity = cur !== undefined && lastActiveTs !== undefined && Math.abs(cur.lastActiveTs - lastActiveTs) < LAST_ACTIVE_GRANULARITY_MS;
        if (cur && cur.state === u.state && cur.statusMsg === u.statusMsg && cur.currentlyActive === u.currentlyActive && (lastActiveTs === undefined || sameActivity)) {
          unchanged.push(u.userId);
          return undefined;
        }
        return {
          userId: u.userId,
          state: u.state,
          statusMsg: u.statusMsg,
          lastActiveTs: lastActiveTs ?? cur?.lastActiveTs ?? now,
          lastUserSyncTs: 0,
          currentlyActive: u.currentlyActive,
          lastFederationUpdateTs: now,
        };
      });
      if (row) await announce(s, u.userId, row.streamId);
    }
    // A ping that changes nothing still says the user is there (their time-out starts again).
    await s.presence.touchFederationUpdate(unchanged, now);
  },
};
