// The small HTML pages browser-facing routes answer (single sign-on, e-mail validation links): escaped
// text, a strict content security policy, never cached, no referrer.
import type { FastifyReply } from "fastify";

export const escapeHtml = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Sends a page; `body` is trusted markup (escape what goes into it). `script` allows inline scripts. */
export function htmlPage(reply: FastifyReply, status: number, title: string, body: string, opts: { script?: boolean } = {}): FastifyReply {
  return reply
    .code(status)
    .header("content-type", "text/html; charset=utf-8")
    .header("content-security-policy", `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${opts.script ? "; script-src 'unsafe-inline'" : ""}`)
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .send(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`);
}
