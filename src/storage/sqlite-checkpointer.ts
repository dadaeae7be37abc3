// Moves SQLite's WAL checkpoints off the event loop. Auto-checkpointing runs inside a committing write
// and fsyncs the database file (~110 µs per message on this machine's send path); instead the writers
// turn it off and a worker thread with its own connection runs PASSIVE checkpoints, which never block
// writers or readers. Under a steady stream of writes a PASSIVE checkpoint never finds the WAL idle, so
// SQLite never starts the file over and it grows without end (every commit slowing with it): past a
// size the worker asks the owner of the write lane to hold writes for one checkpoint, after which the
// next write starts the WAL from the beginning (it catches up first, so that checkpoint is short).
// Closing runs one TRUNCATE checkpoint. A worker thread weighs ~17 MB of RSS, so it starts only under
// steady writes: the WAL is watched with a stat every interval, and a burst of writes followed by a quiet
// interval is checkpointed on this thread (`checkpointHere`, a few pages); only writes that go on for
// `steadyIntervals` intervals in a row, or a WAL past `spawnFrames`, start the worker, which then stays.
import { statSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 10000 });
// A checkpoint copies WAL frames into the database file: it needs next to no page cache of its own.
db.pragma("cache_size = -256");
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
  let r = checkpoint();
  if (r && r.log >= workerData.restartFrames && !asked) {
    // Catch up before writes are held: under steady writes the pass above leaves what was written while
    // it ran; a second pass copies that, so the pass under held writes copies tens of frames, not
    // thousands, and writes wait mostly for its two fsyncs (0.8-4.5 ms held at 1 connection, 4.5-5.6 ms
    // before).
    r = checkpoint() ?? r;
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

export interface Checkpointer {
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  intervalMs?: number;
  /** WAL frames (pages) past which writes are held for one full checkpoint. */
  restartFrames?: number;
  /** Runs `fn` with writes held (the caller's write lane). */
  holdWrites: (fn: () => Promise<void>) => void;
  onError?: (msg: string) => void;
  /** Runs a PASSIVE checkpoint on this thread (a connection outside any transaction). */
  checkpointHere: () => void;
  /** Intervals in a row with writes that start the worker (default 8: two seconds). */
  steadyIntervals?: number;
  /** WAL frames that start the worker (default 256: 1 MB). */
  spawnFrames?: number;
  /** Told when the worker starts. */
  onWorkerStart?: () => void;
}

const WAL_HEADER = 32;
const FRAME = 24 + 4096;

export function startCheckpointer(file: string, opts: CheckpointerOptions): Checkpointer {
  const { intervalMs = 250, restartFrames = 4096, holdWrites, onError = () => {}, checkpointHere, steadyIntervals = 8, spawnFrames = 256, onWorkerStart } = opts;
  let worker: Worker | undefined;
  let waiting: (() => void) | undefined;
  let stopping = false;
  const spawn = (): Worker => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, intervalMs, restartFrames, driver: require.resolve("better-sqlite3") } });
    w.unref();
    onWorkerStart?.();
    w.on("message", (m: { error?: string; large?: number; done?: boolean }) => {
      if (m.error) onError(m.error);
      if (m.large !== undefined && !stopping)
        holdWrites(
          () =>
            new Promise<void>((resolve) => {
              waiting = resolve;
              w.postMessage("now");
            }),
        );
      if (m.done) {
        waiting?.();
        waiting = undefined;
      }
    });
    w.on("error", (err) => onError(String(err)));
    w.on("exit", () => {
      waiting?.();
      waiting = undefined;
    });
    return w;
  };
  // The WAL's size and modification time: any committed write changes one of them.
  const walStat = () => statSync(`${file}-wal`, { throwIfNoEntry: false });
  const walState = (st = walStat()) => (st ? `${st.size}:${st.mtimeMs}` : "");
  let seen = walState();
  // Frames left by an earlier run (or written before this started) are checkpointed at the first quiet look.
  let streak = walStat()?.size ? 1 : 0;
  const watch = setInterval(() => {
    const st = walStat();
    const now = walState(st);
    if (now !== seen) {
      seen = now;
      if (++streak >= steadyIntervals || (st?.size ?? 0) >= WAL_HEADER + spawnFrames * FRAME) {
        clearInterval(watch);
        if (!stopping) worker = spawn();
      }
    } else if (streak > 0) {
      // Quiet after some writes: copy them back here (a few pages).
      streak = 0;
      try {
        checkpointHere();
      } catch (err) {
        onError(String(err));
      }
      seen = walState();
    }
  }, intervalMs).unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        clearInterval(watch);
        const w = worker;
        // Never started: nothing was written since the WAL was last emptied (or since the last look: the
        // last connection to close checkpoints it then).
        if (!w) return resolve();
        const done = () => resolve();
        w.on("message", (m: { stopped?: boolean }) => m.stopped && void w.terminate().then(done, done));
        w.once("exit", done);
        w.postMessage("stop");
      }),
  };
}
