// A real redis-server (Debian's /usr/bin/redis-server) on a free loopback port for the scale-out tests,
// which can be killed (an outage, SIGKILL) and started again on the same port. No persistence.
import { spawn, type ChildProcess } from "node:child_process";
import { connect } from "node:net";
import { freePort } from "./net.ts";

export const REDIS_SERVER = "/usr/bin/redis-server";

/** Resolves once `port` on loopback accepts a connection (or is refused, with `up` false), within `ms`. */
export async function waitPort(port: number, up: boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: "127.0.0.1", port }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.on("error", () => resolve(false));
    });
    if (open === up) return;
    if (Date.now() > deadline) throw new Error(`port ${port} did not ${up ? "open" : "close"} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export class RedisServer {
  private child: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const r = new RedisServer(await freePort());
    await r.start();
    return r;
  }

  /** Starts redis-server (again) on its port, without persistence. */
  async start(): Promise<void> {
    this.child = spawn(REDIS_SERVER, ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await waitPort(this.port, true, 10_000);
  }

  /** Kills it (SIGKILL: an outage, not a clean shutdown) and waits until the port is closed. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    await waitPort(this.port, false, 10_000);
  }
}

