// Moves SQLite's WAL checkpoints off the event loop. Auto-checkpointing runs inside a committing write
// and fsyncs the database file (~110 µs per message on this machine's send path); instead the writers
// turn it off and a worker thread with its own connection runs PASSIVE checkpoints, which never block
// writers or readers. Under a steady stream of writes a PASSIVE checkpoint never finds the WAL idle, so
// SQLite never starts the file over and it grows without end (every commit slowing with it): past a
// size the worker asks the owner of the write lane to hold writes for one checkpoint, after which the
// next write starts the WAL from the beginning. Closing runs one TRUNCATE checkpoint.
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 10000 });
let busy = false;
let asked = false;
const checkpoint = () => {
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    return r;
  } catch (err) {
    parentPort.postMessage({ error: String(err) });
    return undefined;
  }
};
const tick = () => {
  if (busy) return;
  busy = true;
  const r = checkpoint();
  if (r && r.log >= workerData.restartFrames && !asked) {
    asked = true;
    parentPort.postMessage({ large: r.log });
  }
  busy = false;
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m === "now") {
    // Writes are held: this checkpoint copies every frame, so the next write restarts the WAL.
    checkpoint();
    asked = false;
    parentPort.postMessage({ done: true });
  } else if (m === "stop") {
    clearInterval(timer);
    try { db.pragma("wal_checkpoint(TRUNCATE)"); } catch {}
    db.close();
    parentPort.postMessage({ stopped: true });
  }
});
`;
export function startCheckpointer(file, opts) {
    const { intervalMs = 250, restartFrames = 4096, holdWrites, onError = () => { } } = opts;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, intervalMs, restartFrames, driver: require.resolve("better-sqlite3") } });
    worker.unref();
    let waiting;
    let stopping = false;
    worker.on("message", (m) => {
        if (m.error)
            onError(m.error);
        if (m.large !== undefined && !stopping)
            holdWrites(() => new Promise((resolve) => {
                waiting = resolve;
                worker.postMessage("now");
            }));
        if (m.done) {
            waiting?.();
            waiting = undefined;
        }
    });
    worker.on("error", (err) => onError(String(err)));
    worker.on("exit", () => {
        waiting?.();
        waiting = undefined;
    });
    return {
        stop: () => new Promise((resolve) => {
            stopping = true;
            const done = () => resolve();
            worker.on("message", (m) => m.stopped && void worker.terminate().then(done, done));
            worker.once("exit", done);
            worker.postMessage("stop");
        }),
    };
}
