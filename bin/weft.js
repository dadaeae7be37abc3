#!/usr/bin/env node
// Launcher of the `weft` command (`npx weft ...`): registers tsx's TypeScript loader in this process and
// runs src/cli.ts, which reads process.argv and handles signals itself.
import { register } from "tsx/esm/api";

register();
await import(new URL("../src/cli.ts", import.meta.url).href);
