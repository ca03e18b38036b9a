/**
 * Escaping for HTML the server writes by hand (documents, error pages, the dev pages). No
 * React here: error pages and the dev error page must load even when the app cannot.
 */

/** Escape text for use in HTML content or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a `<script>` element: no `</script>`, no `<!--`, no U+2028. */
export function serializeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
