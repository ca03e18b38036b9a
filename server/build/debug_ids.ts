/**
 * Sentry debug IDs, added at build time: each JS file and its source map share a UUID, so Sentry
 * matches a minified frame to its map without relying on URLs or releases.
 */

/** Give a JS file and its source map, if any, the same debug id. */
export async function writeDebugId(file: string): Promise<void> {
  const bytes = await Deno.readFile(file);
  const debugId = await debugIdFor(bytes);
  await Deno.writeTextFile(file, injectDebugId(new TextDecoder().decode(bytes), debugId));
  const map = await Deno.readTextFile(`${file}.map`).catch(() => null);
  if (map !== null) await Deno.writeTextFile(`${file}.map`, addDebugIdToSourceMap(map, debugId));
}

/** A deterministic UUID (v4 layout) derived from a file's bytes. */
export async function debugIdFor(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).slice(0, 16);
  hash[6] = (hash[6] & 0x0f) | 0x40;
  hash[8] = (hash[8] & 0x3f) | 0x80;
  return hash.toHex().replace(/^(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
}

/**
 * Append the registration snippet and the `//# debugId=` comment that `sentry-cli` reads
 * (appended, so every source-map position stays valid); a file that has one is left as it is.
 */
export function injectDebugId(code: string, debugId: string): string {
  if (code.includes("//# debugId=")) return code;
  const snippet = `;(()=>{try{const g=globalThis,s=new Error().stack;` +
    `if(s){(g._sentryDebugIds=g._sentryDebugIds||{})[s]="${debugId}"}}catch(e){}})();`;
  return `${code.replace(/\n?$/, "\n")}${snippet}\n//# debugId=${debugId}\n`;
}

/** Add the debug id to a source map's JSON (both spellings tools look for). */
export function addDebugIdToSourceMap(mapJson: string, debugId: string): string {
  return JSON.stringify({ ...JSON.parse(mapJson), debugId, debug_id: debugId });
}
