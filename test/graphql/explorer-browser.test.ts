// The GraphQL explorer in a real browser: headless Chromium (Debian's, driven by playwright-core) opens
// /graphql, GraphiQL renders from this server's own assets (no request leaves for another origin), and a
// query run with an access token in the Headers tab answers with the viewer's user id; without the token
// the same query answers the Matrix error.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser, type Session } from "../helpers/users.ts";

const CHROMIUM = "/usr/bin/chromium";

describe("GraphiQL in headless Chromium", () => {
  let t: TestServer;
  let browser: Browser;
  let alice: Session;

  beforeAll(async () => {
    t = await startTestServer({});
    alice = await registerUser(t, "alice");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Sets a GraphiQL editor's text (CodeMirror keeps its instance on the element). */
  async function setEditor(page: Page, selector: string, text: string): Promise<void> {
    await page.waitForSelector(`${selector} .CodeMirror`, { state: "attached" });
    await page.evaluate(([sel, value]) => {
      // Runs in the page (the test's tsconfig has no DOM types).
      type Editor = { CodeMirror?: { setValue(v: string): void } };
      const doc = (globalThis as unknown as { document: { querySelector(q: string): Editor | null } }).document;
      const el = doc.querySelector(`${sel} .CodeMirror`);
      if (!el?.CodeMirror) throw new Error(`no editor at ${sel}`);
      el.CodeMirror.setValue(value);
    }, [selector, text] as const);
  }

  async function run(page: Page): Promise<string> {
    await page.click(".graphiql-execute-button");
    const response = page.locator(".graphiql-response .CodeMirror-code");
    await expect.poll(async () => (await response.textContent()) ?? "", { timeout: 20_000 }).toMatch(/"(data|errors)"/);
    return (await response.textContent()) ?? "";
  }

  it("renders the explorer and runs a query with the token from the Headers tab", async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const origin = new URL(t.baseUrl).origin;
    page.on("request", (req) => {
      if (!req.url().startsWith(origin) && !req.url().startsWith("data:")) foreign.push(req.url());
    });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));

    const res = await page.goto(`${t.baseUrl}/graphql`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector(".graphiql-container", { timeout: 20_000 });
    await page.waitForSelector(".graphiql-execute-button");

    const query = "query Me { viewer { userId } }";
    await setEditor(page, ".graphiql-query-editor", query);
    // Without a token: the viewer needs one.
    await page.getByText("Headers", { exact: true }).click();
    await setEditor(page, ".graphiql-editor-tool .graphiql-editor:not(.hidden)", "{}");
    const anonymous = await run(page);
    expect(anonymous).toMatch(/M_MISSING_TOKEN|M_UNKNOWN_TOKEN/);
    expect(anonymous).not.toContain(alice.user_id);

    await setEditor(page, ".graphiql-editor-tool .graphiql-editor:not(.hidden)", JSON.stringify({ Authorization: `Bearer ${alice.access_token}` }));
    const answer = await run(page);
    expect(answer).toContain(`"userId": "${alice.user_id}"`);
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
