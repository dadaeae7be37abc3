// Element X's engine (test/element-x, a Rust program on matrix-sdk and matrix-sdk-ui 0.18) as a child
// process for the client tests: where its binary is (WEFT_ELEMENT_X_BIN, or built by
// scripts/build-element-x.sh), and the running program, fed one JSON command a line and read one JSON
// observation a line (test/element-x/README.md).
import { expect } from "vitest";
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** A cold build of the program (registry downloaded, no target cache) took 9.5 min on two cores; a warm one 0.3 s. */
export const BUILD_TIMEOUT_MS = Number(process.env.WEFT_ELEMENT_X_BUILD_TIMEOUT_MS ?? 20 * 60_000);

/** The program's path: WEFT_ELEMENT_X_BIN, or what scripts/build-element-x.sh builds (and prints). */
export function elementXBinary(): string {
  const given = process.env.WEFT_ELEMENT_X_BIN;
  if (given) {
    if (!existsSync(given)) throw new Error(`WEFT_ELEMENT_X_BIN=${given} does not exist`);
    return given;
  }
  const out = execFileSync("bash", [path.join(REPO, "scripts/build-element-x.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: BUILD_TIMEOUT_MS,
    maxBuffer: 64 << 20,
  });
  const bin = out.trim().split("\n").pop()!;
  if (!existsSync(bin)) throw new Error(`scripts/build-element-x.sh printed ${bin}, which does not exist`);
  return bin;
}

/** One observation line of the program (see test/element-x/README.md). */
export type Line = { event: string; [k: string]: any };

/**
 * The running program. `run(cmd)` writes one command and resolves with the lines printed until its
 * `done` line (rejecting on its `error` line or the program's exit); `lines` holds everything printed,
 * the asynchronous sync_state lines included.
 */
export class ElementX {
  readonly lines: Line[] = [];
  private stderr = "";
  private nextId = 1;
  private pending = new Map<number, { from: number; resolve: (l: Line[]) => void; reject: (e: Error) => void }>();
  private watchers = new Set<{ pred: (l: Line) => boolean; resolve: (l: Line) => void }>();
  private exited: Promise<number | null>;
  exitCode: number | null | undefined;

  private constructor(private proc: ChildProcessWithoutNullStreams) {
    createInterface({ input: proc.stdout }).on("line", (text) => this.onLine(text));
    proc.stderr.on("data", (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-30_000);
      if (process.env.WEFT_ELEMENT_X_LOG) process.stderr.write(d);
    });
    this.exited = new Promise((resolve) => proc.once("exit", (code) => {
      this.exitCode = code;
      for (const p of this.pending.values()) p.reject(new Error(`element-x exited (${code}) during a command:\n${this.tail()}`));
      this.pending.clear();
      resolve(code);
    }));
  }

  /** Starts the program; `extraArgs` are passed on (e.g. `--insecure-tls` for a self-signed server). */
  static start(bin: string, homeserver: string, extraArgs: string[] = []): ElementX {
    const args = ["--homeserver", homeserver, "--timeout", "600", "--log", process.env.WEFT_ELEMENT_X_LOG ?? "warn", ...extraArgs];
    return new ElementX(spawn(bin, args, { stdio: ["pipe", "pipe", "pipe"] }));
  }

  private onLine(text: string) {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      line = { event: "unparsed", text };
    }
    this.lines.push(line);
    for (const w of [...this.watchers]) if (w.pred(line)) w.resolve(line);
    const p = typeof line.id === "number" ? this.pending.get(line.id) : undefined;
    if (!p) return;
    if (line.event === "done") {
      this.pending.delete(line.id);
      p.resolve(this.lines.slice(p.from, -1).filter((l) => l.id === undefined || l.id === line.id));
    } else if (line.event === "error") {
      this.pending.delete(line.id);
      p.reject(new Error(`element-x ${line.cmd}: ${line.message}\n${this.tail()}`));
    }
  }

  /**
   * The first line (already printed or to come) that `pred` accepts, e.g. an observation printed in the
   * middle of a running command; rejects after `timeoutMs` or when the program exits.
   */
  waitLine(pred: (l: Line) => boolean, timeoutMs: number, what: string): Promise<Line> {
    const seen = this.lines.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (l: Line) => {
          clearTimeout(timer);
          this.watchers.delete(w);
          resolve(l);
        },
      };
      const timer = setTimeout(() => {
        this.watchers.delete(w);
        reject(new Error(`no ${what} line within ${timeoutMs} ms:\n${this.tail()}`));
      }, timeoutMs);
      this.watchers.add(w);
      void this.exited.then((code) => {
        if (!this.watchers.has(w)) return;
        clearTimeout(timer);
        this.watchers.delete(w);
        reject(new Error(`element-x exited (${code}) before a ${what} line:\n${this.tail()}`));
      });
    });
  }

  /** Runs one command; resolves with the observations it printed. */
  run(cmd: Record<string, unknown>): Promise<Line[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (this.exitCode !== undefined) return reject(new Error(`element-x has exited (${this.exitCode}):\n${this.tail()}`));
      this.pending.set(id, { from: this.lines.length, resolve, reject });
      this.proc.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
    });
  }

  /** Runs one command and returns its single observation of kind `event`. */
  async one(cmd: Record<string, unknown>, event: string): Promise<Line> {
    const out = await this.run(cmd);
    const found = out.filter((l) => l.event === event);
    expect(found, `${event} in ${JSON.stringify(out)}`).toHaveLength(1);
    return found[0]!;
  }

  tail(): string {
    return `last lines: ${this.lines.slice(-8).map((l) => JSON.stringify(l)).join("\n")}\nstderr: ${this.stderr.slice(-4000)}`;
  }

  /** Ends the input (the program stops its syncs and exits); resolves with its exit status. */
  async quit(): Promise<number | null> {
    if (this.exitCode === undefined) this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 15_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}
