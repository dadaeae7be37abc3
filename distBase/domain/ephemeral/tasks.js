import { sweepIdlePresence } from "../presence/presence.js";
/** How often online users are checked for idleness. */
const SWEEP_INTERVAL_MS = 60_000;
/** Typing changes notify the typing stream; stopping closes the typing state (its expiry timers). */
export const typingNotices = (s) => {
    s.typing.onChange(({ roomId, position }) => s.rooms.notifier.notify({ stream: "typing", position, roomIds: [roomId] }));
    return () => s.typing.close();
};
/** The presence idle sweep, one at a time. */
export const presenceSweeper = (s) => {
    let sweeping = false;
    const timer = setInterval(() => {
        if (sweeping)
            return;
        sweeping = true;
        sweepIdlePresence(s)
            .catch((err) => s.log.warn({ err }, "presence idle sweep failed"))
            .finally(() => (sweeping = false));
    }, SWEEP_INTERVAL_MS);
    timer.unref();
    return () => clearInterval(timer);
};
