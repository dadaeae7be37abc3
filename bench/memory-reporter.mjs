// Loaded into the homeserver's process by bench/soak and bench/footprint (node --import): every second,
// writes the process's memory figures (RSS, V8 heap used and total, external and array buffers, in bytes)
// as one JSON line to $WEFT_BENCH_MEMORY_FILE, after a full GC when node runs with --expose-gc and
// $WEFT_BENCH_MEMORY_GC=1. Plain JavaScript: the server it measures runs compiled, without a TypeScript
// loader. Bench-only: the server itself never loads it.
import { writeFileSync } from "node:fs";

const file = process.env.WEFT_BENCH_MEMORY_FILE;
if (file) {
  const gc = globalThis.gc;
  setInterval(() => {
    if (gc && process.env.WEFT_BENCH_MEMORY_GC === "1") gc();
    const m = process.memoryUsage();
    writeFileSync(file, JSON.stringify({ ts: Date.now(), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers }));
  }, 1000).unref();
}
