// Waiting on the server's own signal that a long poll (/sync, /events) or a live subscription is parked on
// its notifier, so a test makes the change that must wake it only once it waits — and fails if the wake-up
// path breaks, instead of passing by luck after a sleep.
import type { TestServer } from "./server.ts";

/** The number of readers parked on the server's notifier now. */
export const parkedNow = (t: TestServer): number => t.hs.services.rooms.notifier.waiting;

/** Resolves once at least `n` readers are parked on the server's notifier; throws after `ms`. */
export async function untilParked(t: TestServer, n: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (parkedNow(t) < n) {
    if (Date.now() > deadline) throw new Error(`only ${parkedNow(t)} of ${n} readers parked after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
