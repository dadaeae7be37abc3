#!/usr/bin/env node
// Launcher of the `weft` command (`npm start`, `npx weft ...`): checks the Node it runs on, then runs the
// compiled server, dist/cli.js, compiling src/ first when it changed since the last build
// (scripts/build.mjs). Without TypeScript installed and no build, it falls back to tsx's loader over
// src/cli.ts (slower start, more memory). Everything else is imported after the version check
// (scripts/node-version.mjs): on a Node too old, the first failure would otherwise be a cryptic one, later.
const { nodeVerdict } = await import("../scripts/node-version.mjs");
const verdict = nodeVerdict(process.versions.node);
if (verdict.refuse) {
  process.stderr.write(`weft: ${verdict.refuse}\n`);
  process.exit(1);
}
if (verdict.warn) process.stderr.write(`weft: ${verdict.warn}\n`);

const { pathToFileURL } = await import("node:url");
const { COMPILED_CLI, ensureBuilt } = await import("../scripts/build.mjs");
let built;
try {
  built = ensureBuilt();
} catch (err) {
  process.stderr.write(`weft: ${err.message}\n`);
  process.exit(1);
}
if (built) {
  await import(pathToFileURL(COMPILED_CLI).href);
} else {
  process.stderr.write("weft: typescript is not installed and dist/ is missing: running src/ through tsx\n");
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("../src/cli.ts", import.meta.url).href);
}
