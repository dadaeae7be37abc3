// The small template language of Synapse's OIDC user_mapping_provider (a Jinja2 subset): `{{ user.claim }}`
// with dotted paths into the claims and the filters lower, upper, trim and localpart_from_email.
// Text outside `{{ }}` is kept; a missing claim renders as "".
const FILTERS = {
    lower: (v) => v.toLowerCase(),
    upper: (v) => v.toUpperCase(),
    trim: (v) => v.trim(),
    localpart_from_email: (v) => (v.includes("@") ? v.slice(0, v.lastIndexOf("@")) : v),
};
const EXPR = /\{\{\s*([^}]*?)\s*\}\}/g;
function lookup(scope, path) {
    let v = scope;
    for (const part of path.split(".")) {
        if (typeof v !== "object" || v === null || Array.isArray(v))
            return "";
        v = v[part];
    }
    if (typeof v === "string")
        return v;
    if (typeof v === "number" || typeof v === "boolean")
        return String(v);
    return "";
}
/** Checks a template at config time: only known filters and dotted names. Returns a problem or undefined. */
export function templateProblem(template) {
    for (const m of template.matchAll(EXPR)) {
        const [name, ...filters] = m[1].split("|").map((x) => x.trim());
        if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_:-]+)*$/.test(name))
            return `"${m[1]}" is not a claim name`;
        const unknown = filters.find((f) => !FILTERS[f]);
        if (unknown !== undefined)
            return `unknown filter "${unknown}" (known: ${Object.keys(FILTERS).join(", ")})`;
    }
    return undefined;
}
/** Renders `template` with `user` bound to the provider's claims. */
export function renderTemplate(template, user) {
    return template.replace(EXPR, (_m, expr) => {
        const [name, ...filters] = expr.split("|").map((x) => x.trim());
        return filters.reduce((v, f) => (FILTERS[f] ? FILTERS[f](v) : v), lookup({ user }, name));
    });
}
