export class Mailer {
    config;
    transport;
    constructor(config) {
        this.config = config;
    }
    /** The SMTP transport, made on first use (nodemailer is loaded only then: most servers send no mail). */
    async get() {
        const c = this.config;
        const { default: nodemailer } = await import("nodemailer");
        this.transport ??= nodemailer.createTransport({
            host: c.smtp_host,
            port: c.smtp_port,
            secure: c.force_tls,
            requireTLS: c.require_transport_security,
            ignoreTLS: !c.enable_tls && !c.force_tls,
            ...(c.smtp_user !== undefined ? { auth: { user: c.smtp_user, pass: c.smtp_pass } } : {}),
            tls: c.tlsname ? { servername: c.tlsname } : undefined,
            connectionTimeout: 30_000,
            greetingTimeout: 30_000,
            socketTimeout: 60_000,
        });
        return this.transport;
    }
    get from() {
        return this.config.notif_from.replace("%(app)s", this.config.app_name);
    }
    async send(mail) {
        await (await this.get()).sendMail({ from: this.from, ...mail });
    }
    close() {
        this.transport?.close();
    }
}
