// User-interactive authentication (spec: Client-Server API "User-Interactive Authentication API").
// Sessions live in the database, so they survive restarts and work across workers; a session is bound to
// the request (path and method) that started it and serves exactly one completed request.
import { randomBytes } from "node:crypto";
import { MatrixError } from "../errors.js";
import { STAGES, UiaRefused } from "./stages.js";
/** The 401 that tells a client which flows it may complete; a failed stage adds errcode/error. */
export class UserInteractiveAuthRequired extends MatrixError {
    body;
    constructor(body, failure) {
        super(failure?.errcode ?? "M_UNAUTHORIZED", failure?.message ?? "User-interactive authentication required", 401, body);
        this.body = body;
        this.failure = failure;
    }
    failure;
    toJSON() {
        return this.failure ? { ...this.body, errcode: this.failure.errcode, error: this.failure.message } : { ...this.body };
    }
}
/** Strips the brand prefix and API version so a session started on /r0 may finish on /v3. */
function operationOf(path) {
    return path.split("?")[0].replace(/^\/_(?:matrix|proto)\/client\/(?:r0|v\d+|unstable)\//, "");
}
function withoutSecrets(body) {
    const { auth: _auth, password: _password, new_password: _np, ...rest } = body;
    return rest;
}
/**
 * Checks the request's `auth` against `flows`. Returns when a flow is complete; otherwise throws the
 * 401 describing what is left. The caller performs the operation and then calls `finishUia`.
 */
export async function checkUia(s, req, opts) {
    const auth = req.body.auth;
    if (auth !== undefined && (typeof auth !== "object" || auth === null || Array.isArray(auth)))
        throw new MatrixError("M_BAD_JSON", "auth must be an object");
    const authDict = (auth ?? {});
    const sessionIdIn = authDict.session;
    if (sessionIdIn !== undefined && typeof sessionIdIn !== "string")
        throw new MatrixError("M_BAD_JSON", "auth.session must be a string");
    const now = s.clock.now();
    let session;
    const bodyParams = withoutSecrets(req.body);
    if (sessionIdIn !== undefined) {
        session = await s.uia.get(sessionIdIn);
        if (!session || now - session.createdTs > 24 * 3_600_000)
            throw new MatrixError("M_UNKNOWN", `Unknown session ID: ${sessionIdIn}`, 400);
        if (session.uri !== operationOf(req.path) || session.method !== req.method.toUpperCase())
            throw new MatrixError("M_FORBIDDEN", "Requested operation has changed during the UI authentication session.", 403);
        if (Object.keys(bodyParams).length > 0 && opts.onNewParams) {
            session.serverData = { ...session.serverData, ...(await opts.onNewParams(req.body)) };
            session.clientDict = bodyParams;
            await s.uia.setServerData(session.sessionId, session.serverData);
        }
    }
    else {
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
    let failure;
    const stageType = authDict.type;
    if (stageType !== undefined) {
        if (typeof stageType !== "string")
            throw new MatrixError("M_BAD_JSON", "auth.type must be a string");
        const allowed = opts.flows.some((f) => f.includes(stageType));
        const stage = STAGES[stageType];
        if (!allowed || !stage) {
            failure = new MatrixError("M_UNRECOGNIZED", `Unrecognised or disallowed login type ${stageType}`, 400);
        }
        else {
            const ctx = { s, requester: req.requester, session, clientIp: req.clientIp };
            try {
                const result = await stage(ctx, authDict);
                await s.uia.markStageCompleted(session.sessionId, stageType, result);
                completed.set(stageType, result);
            }
            catch (err) {
                if (!(err instanceof MatrixError) || err.errcode === "M_LIMIT_EXCEEDED" || err instanceof UiaRefused)
                    throw err;
                failure = err;
            }
        }
    }
    if (opts.flows.some((flow) => flow.every((stage) => completed.has(stage)))) {
        const params = Object.keys(bodyParams).length > 0 ? bodyParams : session.clientDict;
        return { sessionId: session.sessionId, params, serverData: session.serverData, completed };
    }
    const body = {
        flows: opts.flows.map((stages) => ({ stages })),
        params: opts.params ?? {},
        session: session.sessionId,
    };
    if (completed.size > 0)
        body.completed = [...completed.keys()];
    throw new UserInteractiveAuthRequired(body, failure);
}
/** A session serves one request: once the operation succeeded, it is gone. */
export async function finishUia(s, result) {
    await s.uia.delete(result.sessionId);
}
