#!/usr/bin/env node
// Launcher of the `weft` command (`npm start`, `npx weft ...`): runs the compiled server, dist/cli.js,
// compiling src/ first when it changed since the last build (scripts/build.mjs). Without TypeScript
// installed and no build, it falls back to tsx's loader over src/cli.ts (slower start, more memory).
import { COMPILED_CLI, ensureBuilt } from "../scripts/build.mjs";
import { pathToFileURL } from "node:url";

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
