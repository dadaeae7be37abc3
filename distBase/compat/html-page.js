export const escapeHtml = (v) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Sends a page; `body` is trusted markup (escape what goes into it). `script` allows inline scripts. */
export function htmlPage(reply, status, title, body, opts = {}) {
    return reply
        .code(status)
        .header("content-type", "text/html; charset=utf-8")
        .header("content-security-policy", `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${opts.script ? "; script-src 'unsafe-inline'" : ""}`)
        .header("cache-control", "no-store")
        .header("referrer-policy", "no-referrer")
        .send(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`);
}
