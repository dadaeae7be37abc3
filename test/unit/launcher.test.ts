// The launcher's checks (bin/weft.js): which Node versions it runs on (scripts/node-version.mjs), and
// that it finds the TypeScript compiler it builds dist/ with (scripts/build.mjs): were it not found,
// `npm start` would silently fall back to running src/ through tsx, slower and heavier.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JavaScript modules without declarations
import { nodeVerdict } from "../../scripts/node-version.mjs";
// @ts-expect-error: plain JavaScript modules without declarations
import { tscPath } from "../../scripts/build.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("the Node versions the launcher accepts", () => {
  it.each(["14.21.3", "18.20.8", "20.20.2", "22.12.0", "22.18.1"])("refuses %s with one line naming it and the supported ones", (v) => {
    expect(nodeVerdict(v)).toEqual({ refuse: `this is Node ${v}; Weft runs on Node 22 (22.19 or later), 24 or 26` });
  });
  it.each(["22.19.0", "22.23.5", "24.0.0", "24.22.3", "26.0.0", "26.12.1", "28.1.0"])("runs on %s without a word", (v) => {
    expect(nodeVerdict(v)).toEqual({});
  });
  it.each(["23.11.1", "25.9.0"])("runs on the odd line %s with a warning", (v) => {
    expect(nodeVerdict(v).warn).toMatch(new RegExp(`^Node ${v.replace(/\./g, "\\.")} is not a release line`));
  });
  it("says what package.json's engines say", () => {
    const engines = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).engines.node;
    expect(engines).toBe("^22.19.0 || ^24.0.0 || >=26.0.0");
  });
  it("lets this Node run the launcher", () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, "bin/weft.js"), "--help"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).not.toMatch(/Weft runs on|not a release line/);
    expect(r.stdout).toMatch(/^Usage: weft <command>/);
  });
});

describe("the compiler the launcher builds with", () => {
  it("is found in node_modules and runs", () => {
    const tsc = tscPath();
    expect(typeof tsc).toBe("string");
    const r = spawnSync(process.execPath, [tsc, "--version"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Version \d+\.\d+/);
  });
});
