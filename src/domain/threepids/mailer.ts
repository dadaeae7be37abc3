// Sends the server's e-mail through SMTP with nodemailer, configured from Synapse's `email` options
// (smtp_host/port, credentials, force_tls, enable_tls and require_transport_security for STARTTLS).
import type { Transporter } from "nodemailer";
import type { EmailConfig } from "../../config/email.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export class Mailer {
  private transport: Transporter | undefined;

  constructor(private readonly config: EmailConfig) {}

  /** The SMTP transport, made on first use (nodemailer is loaded only then: most servers send no mail). */
  private async get(): Promise<Transporter> {
    const c = this.config;
    const { default: nodemailer } = await import("nodemailer");
    this.transport ??= nodemailer.createTransport({
      host: c.smtp_host,
      port: c.smtp_port,
      secure: c.force_tls,
      requireTLS: c.require_transport_security,
      ignoreTLS: !c.enable_tls && !c.force_tls,
      ...(c.smtp_user !== undefined ? { auth: { user: c.smtp_user, pass: c.smtp_pass! } } : {}),
      tls: c.tlsname ? { servername: c.tlsname } : undefined,
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
    return this.transport;
  }

  get from(): string {
    return this.config.notif_from.replace("%(app)s", this.config.app_name);
  }

  async send(mail: Mail): Promise<void> {
    await (await this.get()).sendMail({ from: this.from, ...mail });
  }

  close(): void {
    this.transport?.close();
  }
}
