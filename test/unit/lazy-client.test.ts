// The Prisma client created on first use (src/storage/lazy-client.ts): nothing is created until an
// operation is awaited, once however many ask at once; operations asked before it existed run on it, a
// batch `$transaction([...])` of them too; a failed creation is tried again by the next operation.
import { describe, expect, it } from "vitest";
import { lazyClient } from "../../src/storage/lazy-client.ts";
import type { Db } from "../../src/storage/database.ts";

/** A stand-in client: model operations record their call and return a lazy "Prisma promise". */
function fakeClient(calls: string[]) {
  const op = (name: string) => (args: unknown) => ({ name, args, then: (ok: (v: unknown) => unknown) => ok(calls.push(`${name}(${JSON.stringify(args)})`) && { name }) });
  return {
    user: { findFirst: op("user.findFirst"), create: op("user.create") },
    $queryRawUnsafe: op("$queryRawUnsafe"),
    async $transaction(arg: unknown) {
      if (Array.isArray(arg)) {
        calls.push(`batch[${arg.map((p: { name: string }) => p.name).join(",")}]`);
        return arg.map((p: { name: string }) => p.name);
      }
      return (arg as (tx: string) => Promise<unknown>)("tx");
    },
    async $disconnect() {
      calls.push("$disconnect");
    },
  } as unknown as Db;
}

describe("lazy Prisma client", () => {
  it("creates the client on the first awaited operation, once, and runs the operations on it", async () => {
    const calls: string[] = [];
    let created = 0;
    const firstUses: string[] = [];
    const { db, loaded } = lazyClient(async () => (created++, fakeClient(calls)), (op) => firstUses.push(op));
    const pending = db.user.findFirst({ where: { userId: "@a:x" } });
    expect([created, loaded()]).toEqual([0, undefined]); // asked, not awaited: nothing yet
    const [a, b] = await Promise.all([pending, db.$queryRawUnsafe("SELECT 1")]);
    expect([a, b]).toEqual([{ name: "user.findFirst" }, { name: "$queryRawUnsafe" }]);
    expect(created).toBe(1);
    expect(firstUses).toEqual(["user.findFirst"]);
    expect(calls).toEqual(['user.findFirst({"where":{"userId":"@a:x"}})', '$queryRawUnsafe("SELECT 1")']);
    expect(loaded()).toBeDefined();
    // Loaded: the handle hands out the client's own delegates.
    await db.user.create({ data: {} } as never);
    expect(calls.at(-1)).toBe('user.create({"data":{}})');
  });

  it("runs a batch transaction of operations asked before the client existed, and interactive ones", async () => {
    const calls: string[] = [];
    const { db } = lazyClient(async () => fakeClient(calls));
    const out = await db.$transaction([db.user.create({ data: {} } as never), db.user.findFirst({})]);
    expect(out).toEqual(["user.create", "user.findFirst"]);
    expect(calls).toEqual(["batch[user.create,user.findFirst]"]);
    expect(await db.$transaction(async (tx) => `in ${String(tx)}`)).toBe("in tx");
  });

  it("disconnects only a client that was created, and tries a failed creation again", async () => {
    const calls: string[] = [];
    let attempts = 0;
    const { db } = lazyClient(async () => {
      if (attempts++ === 0) throw new Error("database down");
      return fakeClient(calls);
    });
    await db.$disconnect();
    expect([attempts, calls]).toEqual([0, []]);
    await expect(db.user.findFirst({})).rejects.toThrow("database down");
    await expect(db.user.findFirst({})).resolves.toEqual({ name: "user.findFirst" });
    await db.$disconnect();
    expect(calls.at(-1)).toBe("$disconnect");
  });
});
