// Pieces of the federation sender: the backoff schedule (Synapse's retry limiter: min, ×multiplier with
// jitter 0.8–1.4, capped) and the EDU buffer (the latest per key, receipts packed one per room, type and
// user in an EDU, presence packed, stale typing dropped, the 100-EDU cap, and a failed transaction's
// EDUs given back in order unless something newer arrived).
import { describe, expect, it } from "vitest";
import { afterFailure, afterSuccess, isDown, nextRetryInterval, quickRetryDelay, retryAt, upState } from "../../../src/federation/sender/backoff.ts";
import { EduBuffer, TYPING_STALE_MS } from "../../../src/federation/sender/edu-buffer.ts";

const cfg = { destination_min_retry_interval: 60_000, destination_retry_multiplier: 2, destination_max_retry_interval: 86_400_000, max_long_retries: 10, max_long_retry_delay: 60_000 };

describe("backoff", () => {
  it("starts at the minimum, grows by the multiplier with jitter, stops at the maximum", () => {
    expect(nextRetryInterval(0, cfg)).toBe(60_000);
    expect(nextRetryInterval(60_000, cfg, () => 0)).toBe(96_000); // ×2 ×0.8
    expect(nextRetryInterval(60_000, cfg, () => 1)).toBe(168_000); // ×2 ×1.4
    expect(nextRetryInterval(80_000_000, cfg, () => 0.5)).toBe(86_400_000);
    let interval = 0;
    const seen: number[] = [];
    for (let i = 0; i < 30; i++) seen.push((interval = nextRetryInterval(interval, cfg, () => 0.5)));
    expect(seen.slice(0, 4)).toEqual([60_000, 132_000, 290_400, 638_880]);
    expect(seen.every((v, i) => i === 0 || v >= seen[i - 1]!)).toBe(true);
    expect(seen.at(-1)).toBe(86_400_000);
  });

  it("quick retries: after 4, 16, 64 ... seconds, capped, jittered; none past max_long_retries", () => {
    expect([1, 2, 3].map((n) => quickRetryDelay(n, cfg, () => 1 / 3))).toEqual([4_000, 16_000, 60_000]);
    expect(quickRetryDelay(1, cfg, () => 0)).toBe(3_200);
    expect(quickRetryDelay(10, cfg, () => 1)).toBe(84_000);
    expect(quickRetryDelay(11, cfg)).toBeUndefined();
    expect(quickRetryDelay(1, { ...cfg, max_long_retries: 0 })).toBeUndefined();
  });

  it("records an outage and its end", () => {
    const up = upState("remote.example");
    expect(isDown(up)).toBe(false);
    expect(retryAt(up)).toBe(0);
    const down = afterFailure(up, 1000, cfg, () => 0.5);
    expect(down).toMatchObject({ retryLastTs: 1000, retryInterval: 60_000, failureTs: 1000 });
    expect(retryAt(down)).toBe(61_000);
    const still = afterFailure(down, 61_000, cfg, () => 0.5);
    expect(still).toMatchObject({ retryLastTs: 61_000, retryInterval: 132_000, failureTs: 1000 });
    expect(afterSuccess(still, 200_000)).toEqual({ destination: "remote.example", retryLastTs: 0, retryInterval: 0, failureTs: null, lastSuccessTs: 200_000 });
  });
});

describe("EduBuffer", () => {
  const room = "!r:x";

  it("keeps the latest per key and packs receipts one per room, type and user in an EDU", () => {
    let now = 1000;
    const buf = new EduBuffer(() => now);
    buf.addTyping(room, "@a:x", true);
    buf.addTyping(room, "@a:x", false);
    buf.addReceipt({ roomId: room, receiptType: "m.read", userId: "@a:x", threadId: "", eventId: "$old", ts: 1 });
    buf.addReceipt({ roomId: room, receiptType: "m.read", userId: "@a:x", threadId: "", eventId: "$new", ts: 2 });
    buf.addReceipt({ roomId: room, receiptType: "m.read", userId: "@a:x", threadId: "main", eventId: "$t", ts: 3 });
    buf.addReceipt({ roomId: room, receiptType: "m.read", userId: "@b:x", threadId: "", eventId: "$b", ts: 4 });
    buf.addPresence({ user_id: "@a:x", presence: "online" });
    buf.addPresence({ user_id: "@a:x", presence: "unavailable" });
    buf.addPresence({ user_id: "@b:x", presence: "offline" });
    const { edus } = buf.take(100);
    expect(edus).toEqual([
      { edu_type: "m.presence", content: { push: [{ user_id: "@a:x", presence: "unavailable" }, { user_id: "@b:x", presence: "offline" }] } },
      { edu_type: "m.receipt", content: { [room]: { "m.read": { "@a:x": { event_ids: ["$new"], data: { ts: 2 } }, "@b:x": { event_ids: ["$b"], data: { ts: 4 } } } } } },
      { edu_type: "m.receipt", content: { [room]: { "m.read": { "@a:x": { event_ids: ["$t"], data: { ts: 3, thread_id: "main" } } } } } },
      { edu_type: "m.typing", content: { room_id: room, user_id: "@a:x", typing: false } },
    ]);
    expect(buf.size).toBe(0);
    now += 1; // keep the clock moving
  });

  it("drops typing older than the receivers' timeout, caps a transaction, gives back a failed one's EDUs in order", () => {
    let now = 0;
    const buf = new EduBuffer(() => now);
    buf.addTyping(room, "@old:x", true);
    now = TYPING_STALE_MS + 1;
    for (let n = 0; n < 150; n++) buf.addOther({ edu_type: "t", content: { n } });
    const first = buf.take(100);
    expect(first.edus.map((e) => e.content.n)).toEqual([...Array(100).keys()]);
    expect(first.edus.some((e) => e.edu_type === "m.typing")).toBe(false);
    buf.restore(first);
    const again = buf.take(100);
    expect(again.edus.map((e) => e.content.n)).toEqual([...Array(100).keys()]);
    expect(buf.take(100).edus.map((e) => e.content.n)).toEqual([...Array(50).keys()].map((n) => n + 100));

    // A newer entry of the same key wins over the failed transaction's.
    buf.addTyping(room, "@a:x", true);
    const taken = buf.take(10);
    buf.addTyping(room, "@a:x", false);
    buf.restore(taken);
    expect(buf.take(10).edus).toEqual([{ edu_type: "m.typing", content: { room_id: room, user_id: "@a:x", typing: false } }]);
  });
});
