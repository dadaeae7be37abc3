// The OAuth pages' theme: the built-in templates (builtin-templates.ts), each replaced by the file of the same
// name in `templates.custom_template_directory` when there is one (Synapse's option and fallback rule,
// synapse/config/_base.py read_templates). Custom templates are read once per server, when the routes
// are set up (the theme is kept in Services.processState). A theme cannot weaken the pages: a custom
// template with a syntax error, or a form template that does not output `{{ form_fields }}` (the CSRF
// token and the request's hidden fields), is not used (a warning is logged, the built-in one serves); and a
// rendered form page whose forms do not all carry the CSRF token is replaced by the built-in page. The headers (the script-free content security policy) are not the
// templates' to change.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "../../config/config.ts";
import type { ProcessState } from "../../domain/process-state.ts";
import { escapeHtml } from "../html-page.ts";
import { BUILTIN_TEMPLATES, REQUIRED_PLACEHOLDERS } from "./builtin-templates.ts";
import { parseTemplate, renderTemplate, SafeHtml, type Template, type TemplateContext } from "./template.ts";

export interface Theme {
  /** Renders a page's body from the named template, in the layout; `csrf` marks a page with forms. */
  render(name: string, title: string, context: TemplateContext, csrf?: string): string;
}

const BUILTIN: Record<string, Template> = Object.fromEntries(
  Object.entries(BUILTIN_TEMPLATES).filter(([n]) => n.endsWith(".html")).map(([n, src]) => [n, parseTemplate(src)]),
);

/** `</` would end the <style> element early: a stylesheet never needs it. */
const styleHtml = (css: string) => new SafeHtml(css.replace(/<\//g, "<\\/"));

/** The hidden input carrying the CSRF token, as the forms' fields write it. */
export const csrfInput = (escapedToken: string) => `<input type="hidden" name="csrf" value="${escapedToken}">`;

const count = (text: string, re: RegExp) => (text.match(re) ?? []).length;

class LoadedTheme implements Theme {
  private readonly templates: Record<string, Template>;
  private readonly style: SafeHtml;
  /** The templates the custom directory replaced. */
  private readonly custom: Set<string>;
  private readonly log: Logger;
  constructor(templates: Record<string, Template>, style: SafeHtml, custom: Set<string>, log: Logger) {
    this.templates = templates;
    this.style = style;
    this.custom = custom;
    this.log = log;
  }

  private page(templates: Record<string, Template>, style: SafeHtml, name: string, title: string, context: TemplateContext): string {
    const content = new SafeHtml(renderTemplate(templates[name]!, context));
    return renderTemplate(templates["oauth_layout.html"]!, { title, style, content });
  }

  render(name: string, title: string, context: TemplateContext, csrf?: string): string {
    const html = this.page(this.templates, this.style, name, title, context);
    if (csrf === undefined || (!this.custom.has(name) && !this.custom.has("oauth_layout.html"))) return html;
    // Every form of the page must carry the token (a form the theme added outside {{ form_fields }} would not).
    const forms = count(html, /<form[\s>]/gi);
    const tokens = html.split(csrfInput(escapeHtml(csrf))).length - 1;
    if (forms > 0 && tokens >= forms) return html;
    this.log.warn({ template: name, forms, tokens }, "custom OAuth page template renders a form without the CSRF field: serving the built-in page");
    return this.page(BUILTIN, styleHtml(BUILTIN_TEMPLATES["oauth_style.css"]!), name, title, context);
  }
}

function loadTheme(dir: string | undefined, log: Logger): Theme {
  const templates: Record<string, Template> = { ...BUILTIN };
  let css = BUILTIN_TEMPLATES["oauth_style.css"]!;
  const custom = new Set<string>();
  if (dir !== undefined) {
    for (const name of Object.keys(BUILTIN_TEMPLATES)) {
      let source: string;
      try {
        source = readFileSync(path.join(dir, name), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // not overridden: the built-in one
        log.warn({ template: name, err: (err as Error).message }, "cannot read custom OAuth page template: using the built-in one");
        continue;
      }
      if (name.endsWith(".css")) {
        css = source;
        continue;
      }
      try {
        const t = parseTemplate(source);
        const missing = (REQUIRED_PLACEHOLDERS[name] ?? []).filter((p) => !t.names.has(p));
        if (missing.length) {
          log.warn({ template: name, missing }, `custom OAuth page template lacks ${missing.map((p) => `{{ ${p} }}`).join(", ")}: using the built-in one`);
          continue;
        }
        templates[name] = t;
        custom.add(name);
      } catch (err) {
        log.warn({ template: name, err: (err as Error).message }, "custom OAuth page template has a syntax error: using the built-in one");
      }
    }
  }
  return new LoadedTheme(templates, styleHtml(css), custom, log);
}

/** The theme of this server's configuration (loaded at the first call, then kept in its process state). */
export function oauthTheme(s: { config: Config; log: Logger; processState: ProcessState }): Theme {
  const held = s.processState.oauthPageTheme as Theme | undefined;
  if (held) return held;
  const t = loadTheme(s.config.templates.custom_template_directory, s.log);
  s.processState.oauthPageTheme = t;
  return t;
}
