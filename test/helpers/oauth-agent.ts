// A browser without a screen for Weft's own OAuth 2.0 pages: the cookie jar of test/helpers/oidc.ts's
// Browser, plus reading a page's form (its action, hidden fields, labelled inputs, submit buttons) and
// submitting it as a browser would, with the fields filled in and the chosen button's name=value.
import { Browser } from "./oidc.ts";

export interface PageForm {
  action: string;
  hidden: Record<string, string>;
  /** name → the text of the <label for> naming the input. */
  labelled: Record<string, string>;
  /** The values of the submit buttons named "action". */
  buttons: string[];
}

const unescape = (v: string) => v.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n))).replace(/&amp;/g, "&");

/** The first form of a page (undefined if it has none). */
export function readForm(html: string, pageUrl: string): PageForm | undefined {
  return readForms(html, pageUrl)[0];
}

/** Every form of a page, in order. */
export function readForms(html: string, pageUrl: string): PageForm[] {
  return [...html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].map((form) => parseForm(form[1]!, form[2]!, pageUrl));
}

function parseForm(action: string, body: string, pageUrl: string): PageForm {
  const hidden: Record<string, string> = {};
  for (const m of body.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[m[1]!] = unescape(m[2]!);
  const labels = new Map([...body.matchAll(/<label for="([^"]+)">([^<]*)<\/label>/g)].map((m) => [m[1]!, m[2]!]));
  const labelled: Record<string, string> = {};
  for (const m of body.matchAll(/<input type="(?:text|password)" id="([^"]+)" name="([^"]+)"/g)) if (labels.has(m[1]!)) labelled[m[2]!] = labels.get(m[1]!)!;
  const buttons = [...body.matchAll(/<button type="submit" name="action" value="([^"]+)"/g)].map((m) => m[1]!);
  return { action: new URL(unescape(action), pageUrl).href, hidden, labelled, buttons };
}

export class OAuthAgent extends Browser {
  /** Opens a page (no redirect followed). */
  open(url: string) {
    return this.request(url);
  }

  /** Submits the page's form (the first with the button `action`) with `fields` and the button `action`; `drop` leaves hidden fields out. */
  async submit(page: { text: string; url: string }, action: string, fields: Record<string, string> = {}, opts: { drop?: string[]; override?: Record<string, string> } = {}) {
    const forms = readForms(page.text, page.url);
    if (forms.length === 0) throw new Error(`no form on the page: ${page.text.slice(0, 300)}`);
    // The first form with that button (a page may have several, e.g. one per device).
    const form = forms.find((f) => f.buttons.includes(action));
    if (!form) throw new Error(`no "${action}" button (buttons: ${forms.flatMap((f) => f.buttons).join(", ")})`);
    const data: Record<string, string> = { ...form.hidden, ...fields, action, ...opts.override };
    for (const k of opts.drop ?? []) delete data[k];
    const res = await this.request(form.action, { form: data });
    return { ...res, url: form.action };
  }
}
