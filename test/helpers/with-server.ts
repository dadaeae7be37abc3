// The preamble most suites repeat, as one fixture: inside the enclosing `describe`, start a server on one
// backend, register the named users (and log some in again as second devices), close it all afterwards.
// It returns handles usable in test bodies at once: they forward to the server and sessions made in
// beforeAll (reading one before that is an error, not an undefined).
import { afterAll, beforeAll } from "vitest";
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts";
import { loginUser, registerUser, type Session } from "./users.ts";

export interface WithServerOptions<U extends string, L extends string> extends TestServerOptions {
  /** Localparts to register (password "password"), in order; each becomes `users[localpart]`. */
  users?: readonly U[];
  /** More sessions of those users: name → localpart logged in again (a second device), e.g. { alice2: "alice" }. */
  logins?: Readonly<Record<L, U>>;
}

export interface ServerFixture<U extends string, L extends string> {
  t: TestServer;
  users: Record<U | L, Session>;
}

/** A handle on a value that exists only once `get` can answer (after beforeAll ran). */
function late<T extends object>(what: string, get: () => T | undefined): T {
  const real = () => {
    const v = get();
    if (v === undefined) throw new Error(`withServer: ${what} is used before beforeAll ran`);
    return v;
  };
  return new Proxy({} as T, {
    get: (_t, p) => {
      const v = real();
      const value = Reflect.get(v, p, v);
      return typeof value === "function" ? value.bind(v) : value;
    },
    has: (_t, p) => Reflect.has(real(), p),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_t, p) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), p);
      return d && { ...d, configurable: true };
    },
  });
}

/**
 * Starts a server for the enclosing describe block and registers `users`:
 *
 *   describe.each(backends())("things on %s", (backend) => {
 *     const { t, users: { alice, bob } } = withServer({ backend, users: ["alice", "bob"] });
 *     it("...", async () => { await t.call("GET", "/...", { token: alice.access_token }); });
 *   });
 */
export function withServer<U extends string = never, L extends string = never>(opts: WithServerOptions<U, L> = {}): ServerFixture<U, L> {
  let server: TestServer | undefined;
  const sessions = new Map<string, Session>();
  const names = [...(opts.users ?? []), ...Object.keys(opts.logins ?? {})] as (U | L)[];
  const users = Object.fromEntries(names.map((n) => [n, late(`user ${n}`, () => sessions.get(n))])) as Record<U | L, Session>;

  beforeAll(async () => {
    server = await startTestServer(opts);
    for (const u of opts.users ?? []) sessions.set(u, await registerUser(server, u));
    for (const [name, localpart] of Object.entries(opts.logins ?? {}) as [L, U][]) sessions.set(name, await loginUser(server, localpart));
  });
  afterAll(async () => {
    await server?.close();
  });
  return { t: late("the server", () => server), users };
}
