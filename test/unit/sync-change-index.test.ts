// Sync's in-memory index of which streams moved for whom (src/domain/sync/change-index.ts): a token is
// "quiet" only when memory knows no notice since it named the user, one of their rooms or everyone; a
// token below the floor, above the current position, or below an evicted record's position is "maybe".
import { describe, expect, it } from "vitest";
import { CacheRegistry } from "../../src/domain/cache/lru.ts";
import { Notifier } from "../../src/domain/rooms/notifier.ts";
import { SyncChangeIndex } from "../../src/domain/sync/change-index.ts";
import { zeroToken, type SyncToken } from "../../src/domain/sync/token.ts";
import type { Services } from "../../src/domain/services.ts";

const token = (t: Partial<SyncToken>): SyncToken => ({ ...zeroToken(), ...t });

/** An index over a fresh notifier whose floor (the streams' positions when first asked) is `floor`. */
function setup(floor: Partial<SyncToken>, factor = 1) {
  const notifier = new Notifier();
  const index = new SyncChangeIndex(new CacheRegistry({ global_factor: factor, per_cache_factors: {}, event_cache_size: 10 }));
  index.listen(notifier);
  const s = { sync: { currentToken: async () => token(floor) } } as unknown as Services;
  return { notifier, index, s };
}

describe("SyncChangeIndex", () => {
  it("knows a caught-up token is quiet, and which notices concern the user", async () => {
    const { notifier, index, s } = setup({ events: 10, typing: 3 });
    const since = token({ events: 10, typing: 3 });
    // Nothing moved at all.
    expect(await index.mayHaveChanged(s, "@a:x", ["!r:x"], since, since)).toBe(false);
    // Another room's event, another user's account data: still quiet for @a.
    notifier.notify({ stream: "events", position: 11, roomIds: ["!other:x"] });
    notifier.notify({ stream: "account_data", position: 1, userIds: ["@b:x"] });
    const now = token({ events: 11, typing: 3, account_data: 1 });
    expect(await index.mayHaveChanged(s, "@a:x", ["!r:x"], since, now)).toBe(false);
    // One of @a's rooms, @a named, or everyone: a change.
    notifier.notify({ stream: "typing", position: 4, roomIds: ["!r:x"] });
    expect(await index.mayHaveChanged(s, "@a:x", ["!r:x"], since, token({ ...now, typing: 4 }))).toBe(true);
    expect(await index.mayHaveChanged(s, "@a:x", ["!r:x"], token({ ...since, typing: 4 }), token({ ...now, typing: 4 }))).toBe(false);
    notifier.notify({ stream: "to_device", position: 2, userIds: ["@a:x"] });
    expect(await index.mayHaveChanged(s, "@a:x", [], token({ ...since, typing: 4 }), token({ ...now, typing: 4, to_device: 2 }))).toBe(true);
    notifier.notify({ stream: "presence", position: 5 });
    expect(await index.mayHaveChanged(s, "@c:x", [], token({ ...now, typing: 4, to_device: 2 }), token({ ...now, typing: 4, to_device: 2, presence: 5 }))).toBe(true);
  });

  it("says maybe below its floor and above the current position", async () => {
    const { index, s } = setup({ events: 10 });
    // Below the floor: changes before this process started are unknown to memory.
    expect(await index.mayHaveChanged(s, "@a:x", [], token({ events: 9 }), token({ events: 10 }))).toBe(true);
    // A position above the stream's (an in-memory stream restarted): its provider resets it.
    expect(await index.mayHaveChanged(s, "@a:x", [], token({ events: 10, typing: 7 }), token({ events: 10, typing: 2 }))).toBe(true);
  });

  it("says maybe below the position of an evicted record", async () => {
    // Tiny caches: the users' records are evicted as others arrive.
    const { notifier, index, s } = setup({ account_data: 0 }, 0.00001);
    const since = token({});
    notifier.notify({ stream: "account_data", position: 1, userIds: ["@a:x"] });
    notifier.notify({ stream: "account_data", position: 2, userIds: ["@b:x"] });
    // @a's record is gone; memory cannot say whether @a's stream moved after 0.
    expect(await index.mayHaveChanged(s, "@a:x", [], since, token({ account_data: 2 }))).toBe(true);
    expect(await index.mayHaveChanged(s, "@z:x", [], token({ account_data: 1 }), token({ account_data: 2 }))).toBe(false);
  });
});
