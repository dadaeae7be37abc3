// The background tasks of the ephemeral capabilities (declared in src/main.ts, `background`): typing
// changes (expiry included) wake the typing stream's readers, and online users idle too long are swept
// to unavailable. Their sync providers and the `set_presence` hook are declared beside them.
import type { BackgroundTask } from "../extensions.ts";
import { sweepIdlePresence } from "../presence/presence.ts";

/** How often online users are checked for idleness. */
const SWEEP_INTERVAL_MS = 60_000;

/** Typing changes notify the typing stream; stopping closes the typing state (its expiry timers). */
export const typingNotices: BackgroundTask = (s) => {
  s.typing.onChange(({ roomId, position }) => s.rooms.notifier.notify({ stream: "typing", position, roomIds: [roomId] }));
  return () => s.typing.close();
};

/** The presence idle sweep, one at a time. */
export const presenceSweeper: BackgroundTask = (s) => {
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepIdlePresence(s)
      .catch((err: unknown) => s.log.warn({ err }, "presence idle sweep failed"))
      .finally(() => (sweeping = false));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
};
