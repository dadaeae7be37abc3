// Weft's own OAuth 2.0 authorisation server (spec v1.15+ "OAuth 2.0 API": MSC2965 discovery, MSC2966
// dynamic client registration, MSC2964 authorisation code grant, MSC2967 scopes). Off by default: then
// GET /auth_metadata answers 404 M_UNRECOGNIZED and nothing else changes. Synapse has no such option (it
// delegates to an external provider); the section is Weft's, named for what it turns on.
import { statSync } from "node:fs";
import path from "node:path";
import type { Reader } from "./config.ts";
import { ConfigError } from "./errors.ts";
import type { RateLimit } from "./config.ts";

export interface OAuthServerConfig {
  oauth_server: {
    enabled: boolean;
    /** How long an authorisation code may wait for its exchange (RFC 6749 §4.1.2: at most 10 minutes advised). */
    authorization_code_lifetime: number;
    /** How long a device authorisation request (RFC 8628) waits for the user. */
    device_code_lifetime: number;
    /** How long an approval of a cross-signing reset on the account page lasts (m.oauth UIA, MSC4312). */
    cross_signing_reset_window: number;
    /** How long the login of the authorisation pages lasts in the browser before the password is asked again. */
    browser_session_lifetime: number;
    /** Dynamic client registrations, per client address. */
    rc_client_registration: RateLimit;
    /** Token endpoint requests (code exchanges, refreshes) and revocations, per client address. */
    rc_token: RateLimit;
    /** Authorisation page submissions (login, consent), per client address. */
    rc_authorization: RateLimit;
  };
  /**
   * Synapse's `templates` section: files in `custom_template_directory` replace the built-in templates of
   * the same name (here the OAuth pages', src/compat/oauth-pages/theme.ts). Resolved against the config's folder.
   */
  templates: { custom_template_directory?: string };
}

function readTemplates(r: Reader, baseDir: string): { custom_template_directory?: string } {
  const raw = r.section("templates").optString("custom_template_directory");
  if (raw === undefined) return {};
  const dir = path.resolve(baseDir, raw);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // missing: the error below
  }
  if (!isDir) throw new ConfigError("templates.custom_template_directory", `Configured template directory does not exist: ${dir}`);
  return { custom_template_directory: dir };
}

export function readOAuthServerConfig(r: Reader, baseDir: string): OAuthServerConfig {
  const o = r.section("oauth_server");
  return {
    oauth_server: {
      enabled: o.bool("enabled", false),
      authorization_code_lifetime: o.duration("authorization_code_lifetime", 10 * 60_000)!,
      device_code_lifetime: o.duration("device_code_lifetime", 10 * 60_000)!,
      cross_signing_reset_window: o.duration("cross_signing_reset_window", 10 * 60_000)!,
      browser_session_lifetime: o.duration("browser_session_lifetime", 60 * 60_000)!,
      rc_client_registration: o.rateLimit("rc_client_registration", { per_second: 0.17, burst_count: 10 }),
      rc_token: o.rateLimit("rc_token", { per_second: 1, burst_count: 20 }),
      rc_authorization: o.rateLimit("rc_authorization", { per_second: 1, burst_count: 20 }),
    },
    templates: readTemplates(r, baseDir),
  };
}
