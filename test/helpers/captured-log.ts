// A server logger whose lines the test can read: what a hostile peer made the server log as an error
// (an "unhandled error", a Fastify FST_ERR_*, a stream error after headers were sent) fails the test.
// Warnings are kept (a remote failure is worth a warning) and echoed nowhere.
import { Writable } from "node:stream";
import pino from "pino";
import { expect } from "vitest";

export interface CapturedLog {
  logger: pino.Logger;
  lines: Record<string, any>[];
  /** Error-level lines and any line naming a Fastify error code, since the last `expectClean()`. */
  problems(): Record<string, any>[];
  /** Fails when `problems()` is not empty; then starts afresh. */
  expectClean(): void;
}

const summary = (l: Record<string, any>) => JSON.stringify({ level: l.level, msg: l.msg, err: l.err?.code ?? l.err?.message ?? l.err, url: l.url }).slice(0, 600);

export function capturedLog(level = "warn"): CapturedLog {
  const lines: Record<string, any>[] = [];
  let from = 0;
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString("utf8").split("\n")) {
        if (!text) continue;
        try {
          lines.push(JSON.parse(text));
        } catch {
          lines.push({ level: 60, msg: text });
        }
      }
      done();
    },
  });
  const out: CapturedLog = {
    logger: pino({ level }, sink),
    lines,
    problems: () => lines.slice(from).filter((l) => l.level >= 50 || /FST_ERR/.test(JSON.stringify(l))),
    expectClean: () => {
      const p = out.problems();
      from = lines.length;
      expect(p.map(summary)).toEqual([]);
    },
  };
  return out;
}
