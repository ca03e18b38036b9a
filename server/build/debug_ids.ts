/**
 * Sentry debug IDs: each bundled JS file and its source map get the same UUID, so Sentry can
 * match a minified stack frame to its map without relying on URLs or releases. Done here, at
 * build time with no network, instead of through a bundler plugin.
 *
 * The snippet registers `globalThis._sentryDebugIds[stack] = id`; the browser SDK reads the
 * file name from that stack and attaches the id to events whose frames come from the file.
 */

/** A deterministic UUID (v4 layout) derived from a file's bytes. */
export async function debugIdFor(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).slice(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x40;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  const hex = hash.toHex();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${
    hex.slice(20)
  }`;
}

/**
 * Append the registration snippet and the `//# debugId=` comment that `sentry-cli` reads.
 * Appending (rather than prepending) leaves every existing source-map position valid.
 */
export function injectDebugId(code: string, debugId: string): string {
  if (code.includes("//# debugId=")) return code;
  const snippet = `;(()=>{try{const g=globalThis,s=new Error().stack;` +
    `if(s){(g._sentryDebugIds=g._sentryDebugIds||{})[s]="${debugId}"}}catch(e){}})();`;
  return `${code.replace(/\n?$/, "\n")}${snippet}\n//# debugId=${debugId}\n`;
}

/** Add the debug id to a source map's JSON (both spellings tools look for). */
export function addDebugIdToSourceMap(mapJson: string, debugId: string): string {
  const map = JSON.parse(mapJson);
  map.debugId = debugId;
  map.debug_id = debugId;
  return JSON.stringify(map);
}
