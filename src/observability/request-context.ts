// The request a piece of work belongs to: its id, which the request's own log line and the lines the
// faces write for it carry, and the user it authenticated as, which the request line names
// (http-observer.ts). Both faces note the requester here.
// With `log_request_context` (on by default at log_level debug and trace) the context is also carried
// through every async call the request makes (AsyncLocalStorage), so that every line written while it is
// handled — the domain's and storage's too — carries its id (log.ts). Off, nothing is carried: on Node 20
// AsyncLocalStorage runs a hook for every promise the process creates, which measured 14–25% of the
// server's CPU per /sync long-poll cycle (bench/sync), so it is what an operator turns on to trace.
import { AsyncLocalStorage } from "node:async_hooks";

export interface RequestContext {
  /** Unique within this process's lifetime; sent back as `X-Request-Id`. */
  readonly id: string;
  /** The authenticated user, once a face authenticated the request. */
  user?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();
/** Each request's context, by its request object (the face's, e.g. Fastify's request). */
const byRequest = new WeakMap<object, RequestContext>();

/** The request being handled by the caller's async chain, if any (only while contexts are carried). */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore();
}

/** Runs `fn` (and every async continuation it starts) inside `ctx`. */
export function runInRequest<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** Ties `ctx` to the face's request object `req` (read back by contextOf and noteRequester). */
export function attachContext(req: object, ctx: RequestContext): void {
  byRequest.set(req, ctx);
}

/** The context tied to `req`, if any. */
export function contextOf(req: object): RequestContext | undefined {
  return byRequest.get(req);
}

/** Records the user `req` authenticated as (a no-op for a request without a context). */
export function noteRequester(req: object, userId: string): void {
  const ctx = byRequest.get(req);
  if (ctx) ctx.user = userId;
}

const epoch = Date.now().toString(36);
let seq = 0;

/** A fresh request id: this process's start time and a counter (short, unique, ordered). */
export function newRequestId(): string {
  return `${epoch}-${(++seq).toString(36)}`;
}
