// User-interactive authentication (spec: Client-Server API "User-Interactive Authentication API").
// Sessions live in the database, so they survive restarts and work across workers; a session is bound to
// the request (path and method) that started it and serves exactly one completed request.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import type { UiaSessionRow } from "../store/uia.ts";
import { STAGES, UiaRefused, type StageContext } from "./stages.ts";

/** The 401 that tells a client which flows it may complete; a failed stage adds errcode/error. */
export class UserInteractiveAuthRequired extends MatrixError {
  constructor(readonly body: Record<string, unknown>, failure?: MatrixError) {
    super(failure?.errcode ?? "M_UNAUTHORIZED", failure?.message ?? "User-interactive authentication required", 401, body);
    this.failure = failure;
  }
  readonly failure: MatrixError | undefined;
  override toJSON(): Record<string, unknown> {
    return this.failure ? { ...this.body, errcode: this.failure.errcode, error: this.failure.message } : { ...this.body };
  }
}

export interface UiaRequest {
  /** The request path (any prefix and version; compared without them). */
  path: string;
  method: string;
  body: Record<string, unknown>;
  requester?: Requester;
  clientIp: string;
}

export interface UiaResult {
  sessionId: string;
  /** The request's parameters: this request's body, or the session's stored body if this one was empty. */
  params: Record<string, unknown>;
  serverData: Record<string, unknown>;
  completed: Map<string, unknown>;
}

/** Strips the brand prefix and API version so a session started on /r0 may finish on /v3. */
function operationOf(path: string): string {
  return path.split("?")[0]!.replace(/^\/_(?:matrix|proto)\/client\/(?:r0|v\d+|unstable)\//, "");
}

function withoutSecrets(body: Record<string, unknown>): Record<string, unknown> {
  const { auth: _auth, password: _password, new_password: _np, ...rest } = body;
  return rest;
}

export interface UiaOptions {
  flows: string[][];
  description: string;
  /** Each stage's parameters; a function of the session ID when they name it (m.oauth's account page URL). */
  params?: Record<string, Record<string, unknown>> | ((sessionId: string) => Record<string, Record<string, unknown>>);
  /** Runs once when a session is created or its body replaced: e.g. hashing a password on arrival. */
  onNewParams?: (body: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

/**
 * Checks the request's `auth` against `flows`. Returns when a flow is complete; otherwise throws the
 * 401 describing what is left. The caller performs the operation and then calls `finishUia`.
 */
export async function checkUia(s: Services, req: UiaRequest, opts: UiaOptions): Promise<UiaResult> {
  const auth = req.body.auth;
  if (auth !== undefined && (typeof auth !== "object" || auth === null || Array.isArray(auth)))
    throw new MatrixError("M_BAD_JSON", "auth must be an object");
  const authDict = (auth ?? {}) as Record<string, unknown>;
  const sessionIdIn = authDict.session;
  if (sessionIdIn !== undefined && typeof sessionIdIn !== "string") throw new MatrixError("M_BAD_JSON", "auth.session must be a string");

  const now = s.clock.now();
  let session: UiaSessionRow | null;
  const bodyParams = withoutSecrets(req.body);
  if (sessionIdIn !== undefined) {
    session = await s.uia.get(sessionIdIn);
    if (!session || now - session.createdTs > 24 * 3_600_000) throw new MatrixError("M_UNKNOWN", `Unknown session ID: ${sessionIdIn}`, 400);
    if (session.uri !== operationOf(req.path) || session.method !== req.method.toUpperCase())
      throw new MatrixError("M_FORBIDDEN", "Requested operation has changed during the UI authentication session.", 403);
    if (Object.keys(bodyParams).length > 0 && opts.onNewParams) {
      session.serverData = { ...session.serverData, ...(await opts.onNewParams(req.body)) };
      session.clientDict = bodyParams;
      await s.uia.setServerData(session.sessionId, session.serverData);
    }
  } else {
    session = {
      sessionId: randomBytes(18).toString("base64url"),
      createdTs: now,
      uri: operationOf(req.path),
      method: req.method.toUpperCase(),
      clientDict: bodyParams,
      // Who started it: the SSO stage completes only for the same user (sso/flow.ts).
      serverData: { ...(opts.onNewParams ? await opts.onNewParams(req.body) : {}), ...(req.requester ? { request_user_id: req.requester.userId } : {}) },
      description: opts.description,
    };
    await s.uia.create(session);
  }

  const completed = await s.uia.completedStages(session.sessionId);
  let failure: MatrixError | undefined;
  const stageType = authDict.type;
  if (stageType !== undefined) {
    if (typeof stageType !== "string") throw new MatrixError("M_BAD_JSON", "auth.type must be a string");
    const allowed = opts.flows.some((f) => f.includes(stageType));
    const stage = STAGES[stageType];
    if (!allowed || !stage) {
      failure = new MatrixError("M_UNRECOGNIZED", `Unrecognised or disallowed login type ${stageType}`, 400);
    } else {
      const ctx: StageContext = { s, requester: req.requester, session, clientIp: req.clientIp };
      try {
        const result = await stage(ctx, authDict);
        await s.uia.markStageCompleted(session.sessionId, stageType, result);
        completed.set(stageType, result);
      } catch (err) {
        if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED" || err instanceof UiaRefused) throw err;
        failure = err;
      }
    }
  }

  if (opts.flows.some((flow) => flow.every((stage) => completed.has(stage)))) {
    const params = Object.keys(bodyParams).length > 0 ? bodyParams : session.clientDict;
    return { sessionId: session.sessionId, params, serverData: session.serverData, completed };
  }
  const body: Record<string, unknown> = {
    flows: opts.flows.map((stages) => ({ stages })),
    params: typeof opts.params === "function" ? opts.params(session.sessionId) : (opts.params ?? {}),
    session: session.sessionId,
  };
  // Once the client presented an auth dict, the answer says which stages are done, none included (as
  // Synapse: a client tells a failed stage from a fresh session by `completed` and `errcode`).
  if (completed.size > 0 || Object.keys(authDict).length > 0) body.completed = [...completed.keys()];
  throw new UserInteractiveAuthRequired(body, failure);
}

/** A session serves one request: once the operation succeeded, it is gone. */
export async function finishUia(s: Services, result: UiaResult): Promise<void> {
  await s.uia.delete(result.sessionId);
}
