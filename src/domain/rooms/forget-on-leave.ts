// forget_rooms_on_leave (Synapse's option; MSC4267, spec v1.18's `m.forget_forced_upon_leave`
// capability): when a local user's membership becomes leave or ban — leaving, rejecting an invite, being
// kicked or banned, here or by another server — the room is forgotten for them, as if they had called
// /forget. A commit listener (src/main.ts): it acts on the events this process committed.
import type { CommitListener } from "../consumers/commit-feed.ts";
import { inTimeline } from "../store/events.ts";

export const forgetRoomsOnLeave: CommitListener = (s, c) => {
  if (!s.config.forget_rooms_on_leave) return;
  const local = `:${s.config.server_name}`;
  for (const e of c.events) {
    const p = e.pdu;
    if (p.type !== "m.room.member" || p.state_key === undefined || !p.state_key.endsWith(local)) continue;
    if (p.content.membership !== "leave" && p.content.membership !== "ban") continue;
    if (!inTimeline(e) && !e.outlier) continue;
    const userId = p.state_key;
    s.rooms.store
      .forget(e.roomId, userId)
      .then(() => s.sync.streamCache.invalidateMemberships(userId))
      .catch((err: unknown) => s.log.warn({ err, roomId: e.roomId, userId }, "could not forget a room left (forget_rooms_on_leave)"));
  }
};
