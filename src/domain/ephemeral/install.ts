// Installs the ephemeral capabilities into a running server: the typing, receipts and presence sync
// providers (replacing the placeholders), the `set_presence` hook of /sync, the typing stream's
// notifications (expiry included), the presence idle sweep, and their shutdown. Called once from
// src/main.ts with the services; idempotent.
import type { Services } from "../services.ts";
import { typingProvider } from "../sync/providers/typing.ts";
import { receiptsProvider } from "../sync/providers/receipts.ts";
import { presenceProvider } from "../sync/providers/presence.ts";
import { presenceFromSync, sweepIdlePresence } from "../presence/presence.ts";

/** How often online users are checked for idleness. */
const SWEEP_INTERVAL_MS = 60_000;
const installed = new WeakSet<Services>();

export function installEphemeral(s: Services): void {
  if (installed.has(s)) return;
  installed.add(s);
  s.sync.register(typingProvider);
  s.sync.register(receiptsProvider);
  s.sync.register(presenceProvider);
  s.sync.presenceSetters.push(presenceFromSync);
  s.typing.onChange(({ roomId, position }) => s.rooms.notifier.notify({ stream: "typing", position, roomIds: [roomId] }));
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepIdlePresence(s)
      .catch((err: unknown) => s.log.warn({ err }, "presence idle sweep failed"))
      .finally(() => (sweeping = false));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  s.onClose.push(() => {
    clearInterval(timer);
    s.typing.close();
  });
}
