// The objects every send makes and caches share one hidden class each (V8 Maps): a PDU built here, its
// client form and unsigned, a room snapshot moved by a commit. An object literal that starts with a spread
// (`{ ...x, a }`) gets a Map of its own in V8 (Node 20): every cached event then carried one more Map and
// DescriptorArray, and every reader of PDUs went megamorphic (send throughput -25 to -30%, bench/send-vs-peer).
// The objects are made in a node with --allow-natives-syntax (hidden-classes.probe.ts), which asks V8.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

describe("hidden classes of the send path's objects", () => {
  it("PDUs, client events, their unsigned and room snapshots each share one hidden class", () => {
    const probe = path.join(import.meta.dirname, "hidden-classes.probe.ts");
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", probe], { encoding: "utf8", timeout: 60_000 });
    expect(r.stderr).not.toMatch(/Error/);
    const { n, sharing } = JSON.parse(r.stdout.trim().split("\n").pop()!) as { n: number; sharing: Record<string, number> };
    expect(Object.keys(sharing)).toHaveLength(10);
    for (const [kind, count] of Object.entries(sharing)) expect({ kind, count }).toEqual({ kind, count: n });
  });
});
