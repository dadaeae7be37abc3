// E-mail and third-party identifier options with Synapse's names: the `email` section (SMTP server,
// transport security, sender, app name, validation token lifetime, subjects), `enable_3pid_changes`,
// `registrations_require_3pid`, `rc_3pid_validation`, and the identity-server test switch
// `use_insecure_ssl_client_just_for_testing_do_not_use`.
import { ConfigError } from "./errors.ts";
import type { RateLimit, Reader } from "./config.ts";

export interface EmailConfig {
  smtp_host: string;
  smtp_port: number;
  smtp_user?: string;
  smtp_pass?: string;
  /** Connect with TLS from the start (SMTPS, usually port 465). */
  force_tls: boolean;
  /** Refuse to send unless STARTTLS succeeds. */
  require_transport_security: boolean;
  /** Use STARTTLS when the server offers it. */
  enable_tls: boolean;
  tlsname?: string;
  /** The From header; `%(app)s` is replaced by app_name. */
  notif_from: string;
  app_name: string;
  validation_token_lifetime: number;
  subjects: { email_validation: string; password_reset: string };
}

export interface ThreePidConfig {
  /** Set when `email.notif_from` is: Weft then sends validation mail itself (Synapse's "local" 3PID handling). */
  email?: EmailConfig;
  enable_3pid_changes: boolean;
  registrations_require_3pid: string[];
  rc_3pid_validation: RateLimit;
  use_insecure_ssl_client_just_for_testing_do_not_use: boolean;
}

function readEmail(e: Reader): EmailConfig | undefined {
  if (!e.has("notif_from")) return undefined;
  const notif_from = e.string("notif_from");
  if (!/<[^<>@\s]+@[^<>@\s]+>\s*$|^[^<>@\s]+@[^<>@\s]+$/.test(notif_from.replace("%(app)s", "Matrix")))
    throw new ConfigError("email.notif_from", `"${notif_from}" is not an e-mail address or "Name <address>"`);
  const subjects = e.section("subjects");
  const config: EmailConfig = {
    smtp_host: e.string("smtp_host", "localhost"),
    smtp_port: e.number("smtp_port", 25, { min: 1, max: 65535, integer: true }),
    smtp_user: e.optString("smtp_user"),
    smtp_pass: e.optString("smtp_pass"),
    force_tls: e.bool("force_tls", false),
    require_transport_security: e.bool("require_transport_security", false),
    enable_tls: e.bool("enable_tls", true),
    tlsname: e.optString("tlsname"),
    notif_from,
    app_name: e.string("app_name", "Matrix"),
    validation_token_lifetime: e.duration("validation_token_lifetime", 3_600_000)!,
    subjects: {
      email_validation: subjects.string("email_validation", "[%(server_name)s] Validate your email"),
      password_reset: subjects.string("password_reset", "[%(server_name)s] Password reset"),
    },
  };
  if (config.require_transport_security && !config.enable_tls)
    throw new ConfigError("email.require_transport_security", "needs enable_tls: true");
  if ((config.smtp_user === undefined) !== (config.smtp_pass === undefined))
    throw new ConfigError("email.smtp_user", "smtp_user and smtp_pass go together");
  return config;
}

/** `authDelegated`: delegated authentication (MSC3861) is on, so 3PID changes default to off (as Synapse). */
export function readThreePidConfig(r: Reader, authDelegated = false): ThreePidConfig {
  const required = r.list("registrations_require_3pid").map((m, i) => {
    if (m !== "email" && m !== "msisdn") throw new ConfigError(`registrations_require_3pid[${i}]`, `must be email or msisdn, not ${JSON.stringify(m)}`);
    return m;
  });
  const email = readEmail(r.section("email"));
  if (required.includes("email") && !email) throw new ConfigError("registrations_require_3pid", "email needs the email section (notif_from) to send validation mail");
  if (required.includes("msisdn")) throw new ConfigError("registrations_require_3pid", "msisdn is not supported by Weft (it sends no SMS)");
  return {
    email,
    enable_3pid_changes: r.bool("enable_3pid_changes", !authDelegated),
    registrations_require_3pid: required,
    rc_3pid_validation: r.rateLimit("rc_3pid_validation", { per_second: 0.003, burst_count: 5 }),
    use_insecure_ssl_client_just_for_testing_do_not_use: r.bool("use_insecure_ssl_client_just_for_testing_do_not_use", false),
  };
}
