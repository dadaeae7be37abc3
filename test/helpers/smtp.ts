// A real SMTP receiver for e-mail tests (`smtp-server` on loopback, no TLS, no auth): it keeps every
// message it accepts, and tests wait for the one they expect.
import { SMTPServer } from "smtp-server";
import { freePort } from "./server.ts";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The first http(s) link of the text part. */
  link: string | undefined;
}

export interface TestSmtp {
  port: number;
  mails: ReceivedMail[];
  /** Resolves with the first mail to `to` after the first `skip` ones (waits for its arrival). */
  waitFor(to: string, skip?: number, timeoutMs?: number): Promise<ReceivedMail>;
  countTo(to: string): number;
  close(): Promise<void>;
}

/** Undoes quoted-printable soft line breaks and escapes (nodemailer's encoding of long lines). */
function decodeQp(text: string): string {
  return text.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export async function startSmtp(): Promise<TestSmtp> {
  const port = await freePort();
  const mails: ReceivedMail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const text = decodeQp(raw);
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: text,
          subject: /^Subject: (.*)$/m.exec(text)?.[1]?.trim() ?? "",
          link: /https?:\/\/[^\s"<>]+/.exec(text)?.[0],
        });
        for (const w of waiters.splice(0)) w();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const matching = (to: string) => mails.filter((m) => m.to.includes(to));
  return {
    port,
    mails,
    countTo: (to) => matching(to).length,
    async waitFor(to, skip = 0, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = matching(to)[skip];
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no mail to ${to} arrived`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
          waiters.push(() => { clearTimeout(timer); resolve(); });
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
