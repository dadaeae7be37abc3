// The built-in templates of the OAuth pages (template.ts's language), by file name: a file of the same name in
// templates.custom_template_directory replaces one (as Synapse's read_templates falls back to its own). Kept
// here as strings, not files, so the compiled server (dist/) carries them. Every template with a form outputs
// `{{ form_fields }}` (the request's hidden fields and the CSRF token) inside it; theme.ts refuses a custom
// one that does not. The layout wraps every page: `{{ title }}`, `{{ style }}` (oauth_style.css), `{{ content }}`.

export const BUILTIN_TEMPLATES: Record<string, string> = {
  "oauth_style.css":
    `body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;line-height:1.5}` +
    `label{display:block;margin-top:1rem;font-weight:600}input[type=text],input[type=password]{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}` +
    `button{margin-top:1.25rem;margin-right:.5rem;padding:.5rem 1.25rem;font-size:1rem}.error{color:#a00;border:1px solid #a00;padding:.5rem}`,

  "oauth_layout.html":
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>{{ title }}</title><style>{{ style }}</style></head><body><main>{{ content }}</main></body></html>`,

  "oauth_login.html":
    `<h1>Sign in to {{ server_name }}</h1>` +
    `{% if client_name %}<p><b>{{ client_name }}</b> wants to access your account.</p>{% else %}<p>{{ intro }}</p>{% endif %}` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" required value="{{ username }}"{% if error %} aria-describedby="error"{% endif %}>` +
    `<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>` +
    `<button type="submit" name="action" value="login">Sign in</button>` +
    `{% if offer_registration %}<button type="submit" name="action" value="show_register" formnovalidate>Create an account</button>{% endif %}` +
    `{% if client_name %}<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>{% endif %}</form>`,

  "oauth_consent.html":
    `<h1>Allow <span id="client-name">{{ client_name }}</span> to access your account?</h1>` +
    `<p><a href="{{ client_uri }}">{{ client_host }}</a>{% if tos_uri %} · <a href="{{ tos_uri }}">terms of service</a>{% endif %}` +
    `{% if policy_uri %} · <a href="{{ policy_uri }}">privacy policy</a>{% endif %}</p>` +
    `<p>You are signed in as <b id="user-id">{{ user_id }}</b>.</p>` +
    `<h2 id="scopes-heading">It will be able to:</h2><ul aria-labelledby="scopes-heading">{% for scope in scopes %}<li>{{ scope.description }} <code>{{ scope.token }}</code></li>{% endfor %}</ul>` +
    `{% if redirect_uri %}<p>It will be redirected to <code>{{ redirect_uri }}</code>.</p>{% else %}<p>Only allow this if you started signing in on that device yourself.</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<button type="submit" name="action" value="consent">Allow</button>` +
    `<button type="submit" name="action" value="deny">Cancel</button>` +
    `<button type="submit" name="action" value="switch">Not {{ user_id }}? Sign in as someone else</button></form>`,

  "oauth_error.html":
    `<h1>This application cannot sign you in</h1><p role="alert">{{ description }}</p><p>Error code: <code>{{ error }}</code></p>`,

  "oauth_device.html":
    `<h1>Connect a device to {{ server_name }}</h1><p>Enter the code your device shows.</p>` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<label for="user_code">Code</label><input type="text" id="user_code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" required value="{{ user_code }}"{% if error %} aria-describedby="error"{% endif %}>` +
    `<button type="submit" name="action" value="code">Continue</button></form>`,

  "oauth_message.html":
    `<h1>{{ title }}</h1><p role="status">{{ text }}</p>`,

  "oauth_account.html":
    `<h1>Your account</h1>{% if message %}<p role="status" id="message">{{ message }}</p>{% endif %}` +
    `<h2>Profile</h2><p>User ID: <b id="user-id">{{ user_id }}</b></p>` +
    `{% if display_name %}<p>Display name: <b>{{ display_name }}</b></p>{% endif %}` +
    `<h2 id="devices-heading">Devices</h2><ul aria-labelledby="devices-heading">` +
    `{% if devices %}{% for device in devices %}<li id="device-{{ device.device_id }}"><b>{{ device.name }}</b> <code>{{ device.device_id }}</code>` +
    `{% if device.last_seen %} — last seen {{ device.last_seen }}{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ device.form_fields }}` +
    `<button type="submit" name="action" value="confirm_delete" aria-label="Sign out {{ device.name }}">Sign out</button></form></li>{% endfor %}` +
    `{% else %}<li>No such device</li>{% endif %}</ul>` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}<button type="submit" name="action" value="show_password">Change your password</button>` +
    `<button type="submit" name="action" value="sign_out">Sign out of this page</button></form>`,

  "oauth_device_delete.html":
    `<h1>Sign out <span id="device-name">{{ device_name }}</span>?</h1><p>The device <code>{{ device_id }}</code> will lose access to your account and its encryption keys on the server.</p>` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<button type="submit" name="action" value="delete_device">Sign out the device</button><button type="submit" name="action" value="cancel">Cancel</button></form>`,

  "oauth_cross_signing_reset.html":
    `<h1>Reset your cross-signing identity?</h1><p>Signed in as <b>{{ user_id }}</b>. Your app asks to replace your cross-signing keys. ` +
    `Your other devices and contacts will have to verify you again. Only continue if you started this yourself.</p>` +
    `<p>If you allow it, your app may reset them in the next {{ window_minutes }} minutes.</p>` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<button type="submit" name="action" value="approve_reset">Allow the reset</button><button type="submit" name="action" value="cancel">Cancel</button></form>`,

  "oauth_register.html":
    `<h1>Create an account on {{ server_name }}</h1>` +
    `{% if client_name %}<p>Then <b>{{ client_name }}</b> will ask to access it.</p>{% endif %}` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<label for="username">Username</label><input type="text" id="username" name="username" autocomplete="username" autocapitalize="none" required value="{{ username }}"{% if error %} aria-describedby="error"{% endif %}>` +
    `<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="new-password" required>` +
    `<label for="confirm">Confirm the password</label><input type="password" id="confirm" name="confirm" autocomplete="new-password" required>` +
    `{% if token_field %}<label for="token">Registration token</label><input type="text" id="token" name="token" autocomplete="off" required>{% endif %}` +
    `<button type="submit" name="action" value="register">Create the account</button>` +
    `<button type="submit" name="action" value="show_login" formnovalidate>I already have an account</button>` +
    `{% if client_name %}<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>{% endif %}</form>`,

  "oauth_deactivate.html":
    `<h1>Deactivate your account?</h1><p><b>{{ user_id }}</b> will be signed out everywhere and can never be used again. This cannot be undone.</p>` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<label for="password">Your password</label><input type="password" id="password" name="password" autocomplete="current-password" required{% if error %} aria-describedby="error"{% endif %}>` +
    `<button type="submit" name="action" value="deactivate">Deactivate the account</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></form>`,

  "oauth_password.html":
    `<h1>Change your password</h1><p>Signed in as <b>{{ user_id }}</b>. Your devices stay signed in; your other sign-ins to these pages end.</p>` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `<label for="current">Your current password</label><input type="password" id="current" name="current" autocomplete="current-password" required{% if error %} aria-describedby="error"{% endif %}>` +
    `<label for="new_password">New password</label><input type="password" id="new_password" name="new_password" autocomplete="new-password" required>` +
    `<label for="confirm">Confirm the new password</label><input type="password" id="confirm" name="confirm" autocomplete="new-password" required>` +
    `<button type="submit" name="action" value="change_password">Change the password</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></form>`,

  "oauth_uia_approval.html":
    `<h1>Approve this request?</h1><p>Signed in as <b>{{ user_id }}</b>. Your app asks to <b>{{ description }}</b>. ` +
    `Only approve it if you started this yourself; then return to your app.</p>` +
    `{% if error %}<p class="error" role="alert" id="error">{{ error }}</p>{% endif %}` +
    `<form method="post" action="{{ form_action }}">{{ form_fields }}` +
    `{% if needs_password %}<label for="password">Your password</label><input type="password" id="password" name="password" autocomplete="current-password" required{% if error %} aria-describedby="error"{% endif %}>{% endif %}` +
    `<button type="submit" name="action" value="approve_uia">Approve</button><button type="submit" name="action" value="cancel" formnovalidate>Cancel</button></form>`,

  "oauth_continue.html":
    `<h1>Continue to your application</h1><p>You are signing in as <b>{{ user_id }}</b> at <b>{{ target }}</b>.</p>` +
    `<p>Only continue if you started signing in there.</p><p><a id="continue" href="{{ redirect }}">Continue</a></p>`,
};

/** The templates with forms, and the placeholders each must output (the CSRF token and the request's fields). */
export const REQUIRED_PLACEHOLDERS: Record<string, string[]> = {
  "oauth_login.html": ["form_fields"],
  "oauth_consent.html": ["form_fields"],
  "oauth_device.html": ["form_fields"],
  "oauth_account.html": ["form_fields", "device.form_fields"],
  "oauth_device_delete.html": ["form_fields"],
  "oauth_cross_signing_reset.html": ["form_fields"],
  "oauth_register.html": ["form_fields"],
  "oauth_deactivate.html": ["form_fields"],
  "oauth_uia_approval.html": ["form_fields"],
  "oauth_password.html": ["form_fields"],
  "oauth_layout.html": ["content"],
};
