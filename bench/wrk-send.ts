// wrk (C, much lighter than a Node load generator) sending PUT /rooms/{roomId}/send/m.room.message/{txnId}
// with unique txnIds for a fixed time: the load of bench/send.ts and bench/send-vs-peer.ts. Needs
// `apt-get install wrk`. Returns messages/s (2xx and other answers alike are counted by wrk; errors apart).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export interface SendRun {
  /** Answered requests (errors apart). */
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export interface WrkSend {
  base: string;
  token: string;
  roomId: string;
  connections: number;
  seconds: number;
}

/** Runs wrk for `seconds` with `connections`; p50/p99 in ms. */
export async function wrkSend(o: WrkSend): Promise<SendRun> {
  const dir = mkdtempSync(path.join(tmpdir(), "weft-wrk-"));
  const script = path.join(dir, "send.lua");
  const prefix = `/_matrix/client/v3/rooms/${encodeURIComponent(o.roomId)}/send/m.room.message/`;
  writeFileSync(
    script,
    `local n = 0
local run = "${randomBytes(4).toString("hex")}"
local id = 0
setup = function(thread) id = id + 1; thread:set("tid", id) end
request = function()
  n = n + 1
  return wrk.format("PUT", "${prefix}" .. run .. "-" .. tid .. "-" .. n, { ["authorization"] = "Bearer ${o.token}", ["content-type"] = "application/json" }, '{"msgtype":"m.text","body":"message ' .. n .. '"}')
end
local shown = false
response = function(status, headers, body)
  if status >= 300 and not shown then shown = true; io.stderr:write("wrk: first error " .. status .. " " .. body .. "\\n") end
end
done = function(summary, latency, requests)
  io.write(string.format("WRK %d %d %d %d %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
`,
  );
  const threads = Math.min(o.connections, 2);
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn("wrk", ["-t", String(threads), "-c", String(o.connections), "-d", `${o.seconds}s`, "--timeout", "30s", "-s", script, o.base], { stdio: ["ignore", "pipe", "inherit"] });
      let buf = "";
      p.stdout!.on("data", (d) => (buf += d));
      p.on("error", reject);
      p.on("exit", () => resolve(buf));
    });
    const m = /WRK (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(out);
    if (!m) throw new Error(`wrk printed no summary: ${out}`);
    const [requests, micros, p50, p99, errors] = m.slice(1).map(Number) as [number, number, number, number, number];
    return { requests: requests - errors, rps: (requests - errors) / (micros / 1e6), p50: p50 / 1000, p99: p99 / 1000, errors };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
