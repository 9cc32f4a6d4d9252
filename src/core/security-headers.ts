/**
 * What every HTML page the API serves (the developers page, the API docs) sends beside its own
 * Content-Security-Policy: no other origin may frame it, no type sniffing, no address (a sign-in link's token)
 * leaking to another site through Referer, its own browsing context group, no powerful features. Not
 * `no-referrer`: with it a browser sends `Origin: null` on our own form posts, and the cross-site check needs
 * the real origin.
 */
export const PAGE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};
