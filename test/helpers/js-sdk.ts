// Small helpers for driving a real Weft server with matrix-js-sdk (no sync loop, no mocks): clients
// bound to a chosen API prefix, registration through the m.login.dummy UIA stage, awaiting a
// MatrixError, and polling a condition with a time bound instead of sleeping.
import * as sdk from "matrix-js-sdk";
import { MatrixRTCSessionEvent, type MatrixRTCSession } from "matrix-js-sdk/lib/matrixrtc/index.js";

/** The client API prefixes a client can be bound to; Weft serves every client route under each. */
export const CLIENT_PREFIXES = ["/_matrix/client/v3", "/_matrix/client/r0", "/_proto/client/v3"] as const;
export type ClientPrefixPath = (typeof CLIENT_PREFIXES)[number];

export interface Credentials {
  userId: string;
  accessToken: string;
  deviceId: string;
}

type SdkLogger = NonNullable<sdk.ICreateClientOpts["logger"]>;

/**
 * The SDK logs every request at debug level and a warning for each expected 401; tests stay quiet
 * unless WEFT_TEST_SDK_LOG=1.
 */
export function quietLogger(): SdkLogger {
  const on = process.env.WEFT_TEST_SDK_LOG === "1";
  const out = (...msg: unknown[]) => { if (on) console.log("[matrix-js-sdk]", ...msg); };
  const l: SdkLogger = { trace: out, debug: out, info: out, warn: out, error: out, getChild: () => l };
  return l;
}

/**
 * A client on `baseUrl` whose default prefix (used by every call that does not name its own) is
 * `prefix`. The SDK fixes it to /_matrix/client/v3 at construction; its http options stay writable.
 * `extra`: more client options (crypto callbacks, ...).
 */
export function makeClient(baseUrl: string, creds?: Credentials, prefix: ClientPrefixPath = "/_matrix/client/v3", extra: Partial<sdk.ICreateClientOpts> = {}): sdk.MatrixClient {
  const client = sdk.createClient({ baseUrl, ...(creds ?? {}), logger: quietLogger(), ...extra });
  (client.http.opts as { prefix: string }).prefix = prefix;
  return client;
}

/** Runs `p`, expecting it to reject with a MatrixError; returns that error. */
export async function expectMatrixError(p: Promise<unknown>): Promise<sdk.MatrixError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof sdk.MatrixError) return e;
    throw new Error(`expected a MatrixError, got ${String(e)}`);
  }
  throw new Error("expected a MatrixError, but the call succeeded");
}

/**
 * Registers `username` through the two-step dummy UIA flow; returns the 401 challenge's flows and the
 * registration response.
 */
export async function registerWithDummy(client: sdk.MatrixClient, username: string, password: string, extra: Partial<sdk.RegisterRequest> = {}): Promise<{ flows: string[][]; session: string; response: sdk.RegisterResponse }> {
  const challenge = await expectMatrixError(client.registerRequest({ username, password, ...extra }));
  if (challenge.httpStatus !== 401) throw challenge;
  const data = challenge.data as { session?: string; flows?: { stages: string[] }[] };
  if (!data.session) throw new Error(`no UIA session in ${JSON.stringify(data)}`);
  const response = await client.registerRequest({ username, password, ...extra, auth: { type: "m.login.dummy", session: data.session } });
  return { flows: (data.flows ?? []).map((f) => f.stages), session: data.session, response };
}

/** Calls `probe` until it returns a value other than undefined, at most `timeoutMs`; then throws. */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Starts the client's sync loop and resolves once its first sync is done (rejects on a sync error). */
export async function startSyncing(client: sdk.MatrixClient): Promise<void> {
  const prepared = new Promise<void>((resolve, reject) => {
    client.on(sdk.ClientEvent.Sync, (state) => {
      if (state === sdk.SyncState.Prepared) resolve();
      if (state === sdk.SyncState.Error) reject(new Error("sync error"));
    });
  });
  await client.startClient({ lazyLoadMembers: true, pollTimeout: 30000 });
  await prepared;
}

/** A call member as MatrixRTC sessions list them (`userId` in newer memberships, `sender` in older ones). */
export type RtcMember = { userId?: string; sender?: string; deviceId: string };

/** Resolves once `session`'s memberships satisfy `test` (checked now and on every change); rejects after `ms`. */
export function membershipsWhere(session: MatrixRTCSession, test: (members: RtcMember[]) => boolean, what: string, ms = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!test(session.memberships as unknown as RtcMember[])) return false;
      clearTimeout(timer);
      session.off(MatrixRTCSessionEvent.MembershipsChanged, check);
      resolve();
      return true;
    };
    const timer = setTimeout(() => { session.off(MatrixRTCSessionEvent.MembershipsChanged, check); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    session.on(MatrixRTCSessionEvent.MembershipsChanged, check);
    check();
  });
}
