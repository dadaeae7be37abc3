// Builds the compiled server that `npm start` and the `weft` command run: tsc (tsconfig.build.json) from
// src/ to dist/, incremental, and only when something under src/ (or a tsconfig, or package.json) is newer
// than the last successful build. Node then runs plain JavaScript: no type-stripping at every start.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DIST = path.join(ROOT, "dist");
/** Written after each successful build; its mtime is the build's time. */
const STAMP = path.join(DIST, ".build-stamp");
/** The compiled command line. */
export const COMPILED_CLI = path.join(DIST, "cli.js");

/** The newest mtime below `dir` (files and folders: a deleted file changes its folder's mtime). */
function newestBelow(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestBelow(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether dist/ is older than its inputs (or missing). */
export function buildIsStale() {
  if (!existsSync(STAMP) || !existsSync(COMPILED_CLI)) return true;
  // A deployment of the compiled server alone (dist/ without src/, as in an image): nothing to rebuild from.
  if (!existsSync(path.join(ROOT, "src"))) return false;
  const built = statSync(STAMP).mtimeMs;
  const inputs = ["tsconfig.json", "tsconfig.build.json", "package.json"].filter((f) => existsSync(path.join(ROOT, f))).map((f) => statSync(path.join(ROOT, f)).mtimeMs);
  return Math.max(newestBelow(path.join(ROOT, "src")), ...inputs) > built;
}

/** The TypeScript compiler's entry, or undefined when typescript is not installed (npm ci --omit=dev). */
export function tscPath() {
  try {
    // The package's `bin` entry: TypeScript 7's exports map leaves bin/ out of what resolve() may reach.
    const manifest = createRequire(path.join(ROOT, "package.json")).resolve("typescript/package.json");
    const { bin } = JSON.parse(readFileSync(manifest, "utf8"));
    return path.join(path.dirname(manifest), typeof bin === "string" ? bin : bin.tsc);
  } catch {
    return undefined;
  }
}

/**
 * Compiles src/ to dist/ when stale. Returns true when dist/ is usable, false when it cannot be built
 * here (no TypeScript installed). A failed compilation (a type error) throws with tsc's output printed.
 */
export function ensureBuilt({ quiet = false } = {}) {
  if (!buildIsStale()) return true;
  const tsc = tscPath();
  if (!tsc) return false;
  if (!quiet) {
    const first = !existsSync(STAMP);
    process.stderr.write(
      first
        ? "weft: compiling src/ to dist/ for the first time (a few seconds; later starts reuse it) ...\n"
        : "weft: src/ changed since the last build: compiling it to dist/ ...\n",
    );
  }
  const started = Date.now();
  const r = spawnSync(process.execPath, [tsc, "-p", path.join(ROOT, "tsconfig.build.json")], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (exit status ${r.status ?? r.signal}): see its output above`);
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  if (!quiet) process.stderr.write(`weft: compiled in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    if (!ensureBuilt()) {
      process.stderr.write("weft: typescript is not installed: cannot build dist/\n");
      process.exit(1);
    }
  } catch (err) {
    process.stderr.write(`weft: ${err.message}\n`);
    process.exit(1);
  }
}
