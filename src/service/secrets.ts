/**
 * Where a request's credentials are read and where they are kept out of everything the server writes: the
 * token a request carries, the request log's path without it, the `/headers/` echo with every
 * credential-bearing header masked, and error messages that echo what the caller sent.
 */

/** The token of `Authorization: Bearer <token>`. */
export function bearer(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(value);
  return match?.[1];
}

/** The token-shaped parts of a text no log or body may keep: `token=…` values. */
const TOKEN_PARAMETER = /(token=)[^&/?#;\s'"]*/gi;

/** A text fit for a log or a body: `token=` values and the request's token (8+ characters) replaced. */
export function withoutTokens(text: string, token: string | undefined): string {
  let out = text.replace(TOKEN_PARAMETER, '$1[redacted]');
  if (token !== undefined && token.length >= 8) {
    out = out.split(token).join('[redacted]');
    const escaped = encodeURIComponent(token);
    if (escaped !== token) out = out.split(escaped).join('[redacted]');
  }
  return out;
}

/** Header names that carry credentials: authorization-like names, cookies, API keys, tokens, secrets. */
const CREDENTIAL_HEADER =
  /authorization|cookie|api-?key|token|secret|password|session|credential|^x-.*-key$/i;

/** Secrets shorter than this show nothing of themselves; longer ones their last four characters. */
const SHOWN_FROM = 16;

/** A secret masked: its last four characters after as many `*` when long enough, else `****`. */
export function mask(secret: string): string {
  return secret.length >= SHOWN_FROM ? `${'*'.repeat(secret.length - 4)}${secret.slice(-4)}` : '****';
}

/**
 * The `/headers/` echo: lower-case names; a credential-bearing header's value masked, keeping the scheme
 * as sent (`Basic ****`, `Bearer ****abcd`) on authorization-like headers.
 */
export function echoHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) {
      out[name] = value;
      continue;
    }
    const scheme = /authorization/i.test(name) ? /^([A-Za-z][\w.+-]*)\s+(\S.*)$/.exec(value.trim()) : null;
    out[name] = scheme === null ? mask(value.trim()) : `${scheme[1]} ${mask(scheme[2]!.trim())}`;
  }
  return out;
}
