// REST routes of single sign-on: /login/sso/redirect[/{idpId}], the OIDC callback at
// /_synapse/client/oidc/callback (Synapse's path, so providers configured for Synapse keep working) and the
// m.login.sso UIA fallback page. Browser-facing: answers are redirects and small HTML pages; errors are HTML
// pages with the errcode and the spec's status. Spec: Client-Server API "Single Sign-On".
import type { FastifyInstance } from "fastify";
import { escapeHtml, htmlPage as page } from "../html-page.ts";
import { MatrixError } from "../../domain/errors.ts";
import type { Services } from "../../domain/services.ts";
import { clientRoute, queryString, route, type Call } from "../http.ts";
import { finishSso, providerForUser, startSso } from "../../domain/sso/flow.ts";
import { pageSsoEnabled, pageSsoStart } from "../../domain/oauth/legacy-sso.ts";

const COOKIE = "oidc_session";
const COOKIE_PATH = "/_synapse/client/oidc";

async function htmlErrors(c: Call, run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof MatrixError)) throw err;
    return page(c.reply, err.httpStatus, "Single sign-on failed",
      `<h1>Single sign-on failed</h1><p>${escapeHtml(err.message)}</p><p>Error code: <code>${err.errcode}</code></p>`);
  }
}

function stateCookie(s: Services, state: string): string {
  const secure = new URL(s.config.public_baseurl).protocol === "https:" ? "; Secure" : "";
  return `${COOKIE}=${state}; Path=${COOKIE_PATH}; Max-Age=3600; HttpOnly; SameSite=Lax${secure}`;
}

function readCookie(c: Call, name: string): string | undefined {
  const header = c.req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

async function redirectToProvider(c: Call, s: Services, idpId: string | undefined) {
  // No OIDC provider, Weft's own OAuth server on: its pages sign the user in (src/domain/oauth/legacy-sso.ts).
  if (idpId === undefined && pageSsoEnabled(s))
    return c.reply.code(302).header("location", pageSsoStart(s, queryString(c, "redirectUrl"), queryString(c, "action"))).header("cache-control", "no-store").send();
  const start = await startSso(s, { idpId, redirectUrl: queryString(c, "redirectUrl") });
  return c.reply.code(302).header("set-cookie", stateCookie(s, start.state)).header("location", start.location).header("cache-control", "no-store").send();
}

export function ssoRoutes(app: FastifyInstance, s: Services): void {
  clientRoute(app, s, { method: "GET", path: "/login/sso/redirect", auth: "none", handler: (c) => redirectToProvider(c, s, undefined) });
  clientRoute(app, s, { method: "GET", path: "/login/sso/redirect/:idpId", auth: "none", versions: ["v3"], handler: (c) => redirectToProvider(c, s, c.params.idpId) });

  route(app, s, ["/_synapse/client/oidc/callback"], {
    method: "GET", path: "", auth: "none",
    handler: (c) => htmlErrors(c, async () => {
      const query = Object.fromEntries(Object.entries(c.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
      const outcome = await finishSso(s, query, readCookie(c, COOKIE));
      c.reply.header("set-cookie", `${COOKIE}=; Path=${COOKIE_PATH}; Max-Age=0; HttpOnly; SameSite=Lax`);
      if (outcome.kind === "uia") {
        return page(c.reply, 200, "Authentication successful",
          `<p>Thank you: you may now close this window and return to the application.</p>` +
          `<script>if (window.onAuthDone) window.onAuthDone(); else if (window.opener && window.opener.postMessage) window.opener.postMessage("authDone", "*");</script>`,
          { script: true });
      }
      if (outcome.trusted) return c.reply.code(302).header("location", outcome.redirect).header("cache-control", "no-store").send();
      // A client this server does not know: the user confirms before their login token is handed to it.
      const target = new URL(outcome.redirect);
      return page(c.reply, 200, "Continue to your account",
        `<h1>Continue to your account</h1><p>You are signing in as <b>${escapeHtml(outcome.userId)}</b> at <b>${escapeHtml(target.host)}</b>.</p>` +
        `<p><a id="continue" href="${escapeHtml(outcome.redirect)}">Continue</a></p>`);
    }),
  });

  // The m.login.sso stage: the client opens this page; it sends the user to their provider.
  clientRoute(app, s, {
    method: "GET", path: "/auth/:stage/fallback/web", auth: "none",
    handler: (c) => htmlErrors(c, async () => {
      if (c.params.stage !== "m.login.sso") throw new MatrixError("M_UNRECOGNIZED", "This stage has no fallback page", 404);
      const sessionId = queryString(c, "session", true);
      const session = await s.uia.get(sessionId);
      const userId = session?.serverData.request_user_id;
      if (!session || typeof userId !== "string") throw new MatrixError("M_NOT_FOUND", "Unknown or expired authentication session", 404);
      const idpId = await providerForUser(s, userId);
      if (idpId === undefined) throw new MatrixError("M_FORBIDDEN", "Your account is not linked to a single sign-on provider", 403);
      const start = await startSso(s, { idpId, uiaSessionId: sessionId });
      c.reply.header("set-cookie", stateCookie(s, start.state));
      return page(c.reply, 200, "Confirm it is you",
        `<p>To continue (${escapeHtml(session.description)}), confirm your identity with your single sign-on provider.</p>` +
        `<p><a id="continue" href="${escapeHtml(start.location)}">Continue with ${escapeHtml(s.sso.providers.get(idpId)!.config.idp_name)}</a></p>`);
    }),
  });
}
