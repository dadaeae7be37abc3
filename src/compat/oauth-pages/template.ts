// The small template language of the OAuth pages' themes (templates.custom_template_directory): a safe subset
// of Jinja2's syntax, so Synapse-style templates read familiarly. `{{ name }}` and `{{ a.b }}` output a value
// HTML-escaped (always: there is no `safe` filter; only markup the server built itself, a SafeHtml, is
// inserted as it is), `{% if name %}`/`{% if not name %}` … `{% else %}` … `{% endif %}`, `{% for x in
// list %}` … `{% endfor %}` and `{# comments #}`. No expressions, calls, filters or includes: a template
// cannot run code or reach anything but the values the page gives it. Syntax errors are found at parse time.
import { escapeHtml } from "../html-page.ts";

/** Markup the server built and escaped itself (the forms' hidden fields, the stylesheet). */
export class SafeHtml {
  readonly html: string;
  constructor(html: string) {
    this.html = html;
  }
}

export type TemplateValue = string | number | boolean | undefined | null | SafeHtml | TemplateValue[] | { [k: string]: TemplateValue };
export type TemplateContext = Record<string, TemplateValue>;

type Node =
  | { kind: "text"; text: string }
  | { kind: "out"; path: string[] }
  | { kind: "if"; path: string[]; negate: boolean; then: Node[]; else: Node[] }
  | { kind: "for"; name: string; path: string[]; body: Node[] };

export interface Template {
  nodes: Node[];
  /** Every dotted name the template outputs or tests (for the required-placeholder check). */
  names: Set<string>;
}

const TOKEN = /\{\{([\s\S]*?)\}\}|\{%([\s\S]*?)%\}|\{#[\s\S]*?#\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export class TemplateError extends Error {}

function pathOf(expr: string, names: Set<string>): string[] {
  const e = expr.trim();
  if (!NAME.test(e)) throw new TemplateError(`${JSON.stringify(e)} is not a name (only names such as user_id or device.name are allowed)`);
  names.add(e);
  return e.split(".");
}

/** Parses a template; throws TemplateError on bad syntax. */
export function parseTemplate(source: string): Template {
  const names = new Set<string>();
  const root: Node[] = [];
  // Open blocks: where the nodes go now, and the block being filled.
  const stack: { nodes: Node[]; block?: Extract<Node, { kind: "if" | "for" }>; inElse?: boolean }[] = [{ nodes: root }];
  const top = () => stack[stack.length - 1]!;
  let last = 0;
  for (const m of source.matchAll(TOKEN)) {
    if (m.index > last) top().nodes.push({ kind: "text", text: source.slice(last, m.index) });
    last = m.index + m[0].length;
    if (m[1] !== undefined) {
      top().nodes.push({ kind: "out", path: pathOf(m[1], names) });
      continue;
    }
    if (m[2] === undefined) continue; // a comment
    const words = m[2].trim().split(/\s+/);
    const [tag, ...rest] = words;
    if (tag === "if") {
      const negate = rest[0] === "not";
      const expr = negate ? rest.slice(1) : rest;
      if (expr.length !== 1) throw new TemplateError(`{% if %} takes one name (or "not" and a name): {%${m[2]}%}`);
      const node: Node = { kind: "if", path: pathOf(expr[0]!, names), negate, then: [], else: [] };
      top().nodes.push(node);
      stack.push({ nodes: node.then, block: node });
    } else if (tag === "else" && rest.length === 0) {
      const t = top();
      if (t.block?.kind !== "if" || t.inElse) throw new TemplateError("{% else %} outside an {% if %}");
      t.nodes = t.block.else;
      t.inElse = true;
    } else if (tag === "endif" && rest.length === 0) {
      if (top().block?.kind !== "if") throw new TemplateError("{% endif %} without an {% if %}");
      stack.pop();
    } else if (tag === "for") {
      if (rest.length !== 3 || rest[1] !== "in" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(rest[0]!)) throw new TemplateError(`{% for %} must read {% for item in list %}: {%${m[2]}%}`);
      const node: Node = { kind: "for", name: rest[0]!, path: pathOf(rest[2]!, names), body: [] };
      top().nodes.push(node);
      stack.push({ nodes: node.body, block: node });
    } else if (tag === "endfor" && rest.length === 0) {
      if (top().block?.kind !== "for") throw new TemplateError("{% endfor %} without a {% for %}");
      stack.pop();
    } else {
      throw new TemplateError(`unknown tag {%${m[2]}%} (only if, else, endif, for, endfor)`);
    }
  }
  if (stack.length > 1) throw new TemplateError(`{% ${top().block!.kind} %} is not closed`);
  if (last < source.length) root.push({ kind: "text", text: source.slice(last) });
  return { nodes: root, names };
}

function lookup(scopes: TemplateContext[], path: string[]): TemplateValue {
  const [first, ...more] = path;
  let v: TemplateValue = undefined;
  for (let i = scopes.length - 1; i >= 0; i--) {
    if (Object.hasOwn(scopes[i]!, first!)) {
      v = scopes[i]![first!];
      break;
    }
  }
  for (const k of more) {
    if (v === null || typeof v !== "object" || v instanceof SafeHtml || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

function truthy(v: TemplateValue): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof SafeHtml) return v.html.length > 0;
  return Boolean(v);
}

function renderNodes(nodes: Node[], scopes: TemplateContext[], out: string[]): void {
  for (const n of nodes) {
    if (n.kind === "text") out.push(n.text);
    else if (n.kind === "out") {
      const v = lookup(scopes, n.path);
      if (v instanceof SafeHtml) out.push(v.html);
      else if (v !== undefined && v !== null && typeof v !== "object") out.push(escapeHtml(String(v)));
    } else if (n.kind === "if") renderNodes(truthy(lookup(scopes, n.path)) !== n.negate ? n.then : n.else, scopes, out);
    else {
      const list = lookup(scopes, n.path);
      if (Array.isArray(list)) for (const item of list) renderNodes(n.body, [...scopes, { [n.name]: item }], out);
    }
  }
}

export function renderTemplate(t: Template, context: TemplateContext): string {
  const out: string[] = [];
  renderNodes(t.nodes, [context], out);
  return out.join("");
}
