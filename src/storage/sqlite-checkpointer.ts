// Moves SQLite's WAL checkpoints off the event loop. Auto-checkpointing runs inside a committing write
// and fsyncs the database file (~110 µs per message on this machine's send path); instead the writers
// turn it off and a worker thread with its own connection runs PASSIVE checkpoints, which never block
// writers or readers. Closing runs one last TRUNCATE checkpoint so the WAL does not linger.
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 10000 });
let busy = false;
const tick = () => {
  if (busy) return;
  busy = true;
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch (err) { parentPort.postMessage({ error: String(err) }); }
  busy = false;
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m === "stop") {
    clearInterval(timer);
    try { db.pragma("wal_checkpoint(TRUNCATE)"); } catch {}
    db.close();
    parentPort.postMessage({ stopped: true });
  }
});
`;

export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(file: string, intervalMs = 250, onError: (msg: string) => void = () => {}): Checkpointer {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, intervalMs, driver: require.resolve("better-sqlite3") } });
  worker.unref();
  worker.on("message", (m: { error?: string }) => m.error && onError(m.error));
  worker.on("error", (err) => onError(String(err)));
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => resolve();
        worker.once("message", (m: { stopped?: boolean }) => m.stopped && void worker.terminate().then(done, done));
        worker.once("exit", done);
        worker.postMessage("stop");
      }),
  };
}
