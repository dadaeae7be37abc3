// Small GraphQL clients for the tests: POST /graphql over HTTP (status and JSON body), and a graphql-ws
// client over the `ws` package that runs one operation and returns its single result, and a collector of
// a subscription's payloads.
import WebSocket from "ws";
import { createClient, type Client } from "graphql-ws";
import type { FormattedExecutionResult } from "graphql";
import type { TestServer } from "../helpers/server.ts";

export interface GqlResponse {
  status: number;
  body: { data?: any; errors?: { message: string; extensions?: Record<string, any>; path?: string[] }[] };
}

export async function gql(t: TestServer, query: string, variables?: Record<string, unknown>, token?: string): Promise<GqlResponse> {
  const r = await t.call("POST", "/graphql", { body: { query, variables }, token });
  return { status: r.status, body: r.json };
}

/** The errcode of the first error, or undefined. */
export const errcode = (r: { errors?: readonly { extensions?: Record<string, unknown> }[] | null }) =>
  r.errors?.[0]?.extensions?.errcode as string | undefined;

/** A WebSocket that accepts the test servers' self-signed certificates (federating servers listen on TLS). */
class TestWebSocket extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { rejectUnauthorized: false });
  }
}

export function wsClient(t: TestServer, connectionParams?: Record<string, unknown>): Client {
  return createClient({
    url: t.baseUrl.replace(/^http/, "ws") + "/graphql",
    webSocketImpl: t.baseUrl.startsWith("https:") ? TestWebSocket : WebSocket,
    connectionParams,
    retryAttempts: 0,
    lazy: true,
  });
}

/** Runs one query or mutation on `client` and resolves with its result (rejects on a protocol error). */
export function wsRun(client: Client, query: string, variables?: Record<string, unknown>): Promise<FormattedExecutionResult<any, any>> {
  return new Promise((resolve, reject) => {
    let result: FormattedExecutionResult<any, any> | undefined;
    client.subscribe<any, any>({ query, variables }, {
      next: (r) => { result = r; },
      error: reject,
      complete: () => (result ? resolve(result) : reject(new Error("completed without a result"))),
    });
  });
}

export const REGISTER = `mutation ($input: RegisterInput!) {
  register(input: $input) { userId accessToken deviceId refreshToken expiresInMs homeServer }
}`;
export const LOGIN = `mutation ($input: LoginInput!) {
  login(input: $input) { userId accessToken deviceId refreshToken expiresInMs homeServer }
}`;
export const VIEWER = `{ viewer { userId deviceId isGuest displayName avatarUrl devices { deviceId displayName lastSeenIp lastSeenTs } } }`;
export const SET_DISPLAY_NAME = `mutation ($name: String) { setDisplayName(displayName: $name) { userId displayName } }`;
export const SET_AVATAR_URL = `mutation ($url: String) { setAvatarUrl(avatarUrl: $url) { userId avatarUrl displayName } }`;

/** Subscribes over `c` and collects the payloads; `until(n)` waits for the n-th one. */
export function subscribe(c: Client, query: string, variables: Record<string, unknown>) {
  const results: any[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let error: unknown;
  const stop = c.subscribe<any>({ query, variables }, {
    next: (r) => {
      results.push(r);
      for (const w of waiters.filter((w) => results.length >= w.n)) w.resolve();
    },
    error: (e) => { error = e; for (const w of waiters) w.resolve(); },
    complete: () => { for (const w of waiters) w.resolve(); },
  });
  return {
    results,
    get error() { return error; },
    stop,
    until: (n: number, ms = 10000) =>
      new Promise<void>((resolve, reject) => {
        if (results.length >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${results.length} of ${n} results`)), ms);
        waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
      }),
  };
}
