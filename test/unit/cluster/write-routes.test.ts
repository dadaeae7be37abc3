// The routing table of several processes (src/domain/cluster/write-routes.ts): which instance owns a
// request by its route and path parameters, and which instance takes a federation EDU.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { topologyOf } from "../../../src/domain/cluster/topology.ts";
import { eduOwner, ownerOf, writeRuleOf } from "../../../src/domain/cluster/write-routes.ts";
import type { Services } from "../../../src/domain/services.ts";

const C = "/_matrix/client/v3";
const cluster = (worker: string, writers: Record<string, unknown>) =>
  ({
    topology: topologyOf(
      parseConfig(
        {
          server_name: "example.org",
          ...(worker === "master" ? {} : { worker_name: worker }),
          instance_map: { main: { host: "127.0.0.1", port: 9093 }, w1: { host: "127.0.0.1", port: 9094 }, w2: { host: "127.0.0.1", port: 9095 } },
          stream_writers: writers,
          redis: { enabled: true },
          worker_replication_secret: "s",
        },
        "/srv",
      ),
    ),
  }) as unknown as Services;

describe("write routes", () => {
  const writers = { events: ["w1", "w2"], typing: "w2", receipts: ["master", "w1"], to_device: "w1" };

  it("a room's writes go to its events writer, whichever process asks", async () => {
    const rule = writeRuleOf("PUT", `${C}/rooms/:roomId/send/:eventType/:txnId`)!;
    expect(rule).toEqual({ stream: "events", room: "roomId" });
    const rooms = Array.from({ length: 20 }, (_, i) => `!room${i}:example.org`);
    for (const asking of ["master", "w1", "w2"]) {
      const s = cluster(asking, writers);
      for (const roomId of rooms) expect(await ownerOf(s, rule, { roomId }, true)).toBe(s.topology.eventWriterFor(roomId));
    }
    // Both writers get a share.
    const owners = new Set(rooms.map((r) => cluster("master", writers).topology.eventWriterFor(r)));
    expect(owners).toEqual(new Set(["w1", "w2"]));
  });

  it("other streams go to their writer; a process among several writers keeps its own", async () => {
    const typing = writeRuleOf("PUT", `${C}/rooms/:roomId/typing/:userId`)!;
    const receipt = writeRuleOf("POST", `${C}/rooms/:roomId/receipt/:receiptType/:eventId`)!;
    const toDevice = writeRuleOf("PUT", `${C}/sendToDevice/:eventType/:txnId`)!;
    const pushRule = writeRuleOf("PUT", `${C}/pushrules/:scope/:kind/:ruleId`)!;
    expect(await ownerOf(cluster("master", writers), typing, {}, true)).toBe("w2");
    expect(await ownerOf(cluster("w2", writers), typing, {}, true)).toBe("w2");
    expect(await ownerOf(cluster("w1", writers), receipt, {}, true)).toBe("w1");
    expect(await ownerOf(cluster("w2", writers), receipt, {}, true)).toBe("master");
    expect(await ownerOf(cluster("w2", writers), toDevice, {}, true)).toBe("w1");
    expect(await ownerOf(cluster("w1", writers), pushRule, {}, true)).toBe("master");
  });

  it("createRoom stays on an events writer and goes to one from any other process", async () => {
    const rule = writeRuleOf("POST", `${C}/createRoom`)!;
    expect(await ownerOf(cluster("w1", writers), rule, {}, true)).toBe("w1");
    for (let i = 0; i < 10; i++) expect(["w1", "w2"]).toContain(await ownerOf(cluster("master", writers), rule, {}, true));
  });

  it("a join by alias without a token is answered where it lands; reads are not routed", async () => {
    const rule = writeRuleOf("POST", `${C}/join/:roomIdOrAlias`)!;
    expect(await ownerOf(cluster("master", writers), rule, { roomIdOrAlias: "#a:example.org" }, false)).toBe("master");
    expect(await ownerOf(cluster("master", writers), rule, { roomIdOrAlias: "!r:example.org" }, false)).toBe(cluster("master", writers).topology.eventWriterFor("!r:example.org"));
    expect(writeRuleOf("GET", `${C}/rooms/:roomId/messages`)).toBeUndefined();
    expect(writeRuleOf("GET", `${C}/sync`)).toBeUndefined();
  });

  it("federation EDUs go to their stream's writer; other types stay", () => {
    const s = cluster("master", writers);
    expect(eduOwner(s, "m.typing")).toBe("w2");
    expect(eduOwner(s, "m.direct_to_device")).toBe("w1");
    expect(eduOwner(s, "m.receipt")).toBe("master");
    expect(eduOwner(s, "m.presence")).toBe("master");
    expect(eduOwner(s, "org.example.unknown")).toBe("master");
  });

  it("a single process routes nothing", () => {
    expect(topologyOf(parseConfig({ server_name: "example.org" }, "/srv")).distributed).toBe(false);
    expect(cluster("master", writers).topology.distributed).toBe(true);
  });
});
