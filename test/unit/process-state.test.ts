// The inventory of per-process state stays in one file (src/domain/process-state.ts, Services.processState):
// a source scan fails when a module keeps state of its own keyed by Services again — a module-level
// WeakMap, WeakSet, Map or Set whose keys are Services objects.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ProcessState } from "../../src/domain/process-state.ts";

const ROOT = join(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
// `new WeakMap<Services, …>()`, or `const m: WeakMap<Services, …> = new WeakMap()`; Map and Set too.
const KEYED_BY_SERVICES = /(?:\bnew\s+|:\s*)(?:Weak)?(?:Map|Set)\s*<\s*Services\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return path === join(SRC, "generated") ? [] : sourceFiles(path);
    return d.name.endsWith(".ts") ? [path] : [];
  });
}

describe("per-process state", () => {
  it("lives on Services.processState, not in maps keyed by Services", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, i) => (KEYED_BY_SERVICES.test(line) ? [`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders, "declare the state in src/domain/process-state.ts and read it from s.processState").toEqual([]);
  });

  it("the scan sees the shapes it must refuse", () => {
    for (const line of ["const x = new WeakMap<Services, KeyedLanes>();", "const y = new WeakSet<Services>();", "const z = new Map<Services, number>();", "new WeakMap< Services , Buffer>()", "const w: WeakMap<Services, Flags> = new WeakMap();"])
      expect(KEYED_BY_SERVICES.test(line), line).toBe(true);
    for (const line of ["const x = new WeakMap<object, boolean>();", "const y = new Map<string, ServicesLike>();", "type T = WeakMap<Services, number>;", "const v = new WeakMap<ServicesLike, number>();"])
      expect(KEYED_BY_SERVICES.test(line), line).toBe(false);
  });

  it("each Services gets a state of its own, the costly pieces filled on first use", () => {
    const a = new ProcessState();
    const b = new ProcessState();
    expect(a.roomMessages).not.toBe(b.roomMessages);
    expect(a.gapLanes).not.toBe(b.gapLanes);
    expect([a.partialStateFlags, a.browserUrlKey, a.directoryStatsFilled]).toEqual([undefined, undefined, false]);
  });
});
