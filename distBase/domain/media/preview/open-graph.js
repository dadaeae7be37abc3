// OpenGraph data from an HTML page, for URL previews (Client-Server API GET /media/preview_url; the
// fallbacks Synapse uses): og:* meta tags, twitter:* ones where og:* is missing, then the <title> (or
// first heading), the meta description (or the start of the body text) and the first sizeable <img>.
// Parsed with htmlparser2, a real HTML tokenizer, from bytes decoded with the page's charset.
import { Parser } from "htmlparser2";
/** Synapse's OG_TAG_NAME_MAXLEN and OG_TAG_VALUE_MAXLEN: longer tags are dropped. */
const MAX_NAME = 50;
const MAX_VALUE = 1000;
const DESCRIPTION_CHARS = 500;
const SKIPPED_TEXT = new Set(["script", "style", "noscript", "svg", "header", "nav", "aside", "footer", "iframe", "template", "head", "title"]);
/** The charset of `content-type`, else a <meta> charset in the first bytes, else UTF-8. */
export function decodeHtml(bytes, contentType) {
    const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1];
    const head = bytes.subarray(0, 4096).toString("latin1");
    const fromMeta = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
    for (const label of [fromHeader, fromMeta, "utf-8"]) {
        if (!label)
            continue;
        try {
            return new TextDecoder(label).decode(bytes);
        }
        catch {
            // Unknown label: try the next.
        }
    }
    return bytes.toString("utf8");
}
export function parseOpenGraph(html) {
    const og = {};
    const twitter = {};
    let title;
    let heading;
    let description;
    let image;
    let fallbackImage;
    const stack = [];
    let skipDepth = 0;
    let titleText = null;
    let headingText = null;
    let bodyText = "";
    const parser = new Parser({
        onopentag(name, attrs) {
            stack.push(name);
            if (SKIPPED_TEXT.has(name))
                skipDepth++;
            if (name === "meta") {
                const key = (attrs.property ?? attrs.name ?? "").trim();
                const content = attrs.content;
                if (content === undefined)
                    return;
                const lower = key.toLowerCase();
                if (lower.startsWith("og:") && !(key in og))
                    og[key] = content;
                else if (lower.startsWith("twitter:") && !(lower in twitter))
                    twitter[lower] = content;
                else if (lower === "description" && description === undefined)
                    description = content;
            }
            else if (name === "title" && title === undefined)
                titleText = "";
            else if (/^h[1-3]$/.test(name) && heading === undefined)
                headingText = "";
            else if (name === "img" && attrs.src) {
                const w = Number(attrs.width), h = Number(attrs.height);
                if (image === undefined && w > 10 && h > 10)
                    image = attrs.src;
                fallbackImage ??= attrs.src;
            }
        },
        ontext(text) {
            if (titleText !== null)
                titleText += text;
            if (headingText !== null)
                headingText += text;
            if (skipDepth === 0 && bodyText.length < DESCRIPTION_CHARS * 2 && stack.includes("body"))
                bodyText += ` ${text}`;
        },
        onclosetag(name) {
            if (name === "title" && titleText !== null) {
                title = titleText.trim() || undefined;
                titleText = null;
            }
            if (/^h[1-3]$/.test(name) && headingText !== null) {
                heading = headingText.trim() || undefined;
                headingText = null;
            }
            if (SKIPPED_TEXT.has(name) && skipDepth > 0)
                skipDepth--;
            const at = stack.lastIndexOf(name);
            if (at >= 0)
                stack.length = at;
        },
    }, { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true });
    parser.write(html);
    parser.end();
    for (const [k, target] of [["twitter:title", "og:title"], ["twitter:description", "og:description"], ["twitter:image", "og:image"]])
        if (og[target] === undefined && twitter[k] !== undefined)
            og[target] = twitter[k];
    if (og["og:title"] === undefined && (title ?? heading))
        og["og:title"] = (title ?? heading);
    if (og["og:description"] === undefined) {
        const text = description ?? bodyText.replace(/\s+/g, " ").trim();
        if (text)
            og["og:description"] = text.length > DESCRIPTION_CHARS ? text.slice(0, DESCRIPTION_CHARS).replace(/\s+\S*$/, "") + "…" : text;
    }
    if (og["og:image"] === undefined && (image ?? fallbackImage))
        og["og:image"] = (image ?? fallbackImage);
    for (const [k, v] of Object.entries(og))
        if (k.length > MAX_NAME || String(v).length > MAX_VALUE)
            delete og[k];
    return og;
}
