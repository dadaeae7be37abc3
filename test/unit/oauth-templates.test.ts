// Synapse's `templates.custom_template_directory` option (resolved against the config's folder, a missing
// directory refused naming the option, as synapse/config/_base.py read_templates does) and the OAuth pages'
// template language (src/compat/oauth-pages/template.ts): escaping by default, if/else/for, and every
// construct beyond those refused at parse time (no expressions, calls or filters: no code from a template).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/config/config.ts";
import { parseTemplate, renderTemplate, SafeHtml, TemplateError } from "../../src/compat/oauth-pages/template.ts";

const base = mkdtempSync(path.join(tmpdir(), "weft-templates-config-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const parse = (extra: Record<string, unknown>) => parseConfig({ server_name: "example.org", ...extra }, base);

describe("templates.custom_template_directory", () => {
  it("is unset by default", () => {
    expect(parse({}).templates).toEqual({});
  });

  it("resolves an existing directory against the config's folder", () => {
    mkdirSync(path.join(base, "theme"));
    expect(parse({ templates: { custom_template_directory: "theme" } }).templates.custom_template_directory).toBe(path.join(base, "theme"));
  });

  it("refuses a missing directory, naming the option", () => {
    let err: unknown;
    try {
      parse({ templates: { custom_template_directory: "no-such-theme" } });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain("templates.custom_template_directory");
    expect((err as Error).message).toContain(path.join(base, "no-such-theme"));
  });

  it("refuses a non-string", () => {
    expect(() => parse({ templates: { custom_template_directory: 5 } })).toThrow(ConfigError);
  });
});

describe("the OAuth pages' template language", () => {
  const render = (src: string, ctx: Record<string, unknown>) => renderTemplate(parseTemplate(src), ctx as never);

  it("escapes values, inserts only the server's SafeHtml as markup, and leaves unknown names empty", () => {
    expect(render(`<p title="{{ a }}">{{ a }}</p>{{ safe }}[{{ missing }}][{{ a.b }}]`, { a: `<script>"'&`, safe: new SafeHtml("<input>") }))
      .toBe(`<p title="&#60;script&#62;&#34;&#39;&#38;">&#60;script&#62;&#34;&#39;&#38;</p><input>[][]`);
  });

  it("has if/not/else and for over lists, with dotted names", () => {
    const src = `{% if not xs %}none{% else %}{% for x in xs %}<li>{{ x.name }}{% if x.on %}!{% endif %}</li>{% endfor %}{% endif %}{# gone #}`;
    expect(render(src, { xs: [{ name: "a<", on: true }, { name: "b" }] })).toBe("<li>a&#60;!</li><li>b</li>");
    expect(render(src, { xs: [] })).toBe("none");
  });

  it("refuses expressions, calls, filters and unknown or unclosed tags", () => {
    for (const src of [
      `{{ a.constructor("return process")() }}`,
      `{{ a | safe }}`,
      `{{ a + 1 }}`,
      `{% include "x" %}`,
      `{% set a = 1 %}`,
      `{% if a %}open`,
      `{% endfor %}`,
      `{% for x of xs %}{% endfor %}`,
    ]) expect(() => parseTemplate(src), src).toThrow(TemplateError);
  });
});
