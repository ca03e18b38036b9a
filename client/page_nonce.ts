/**
 * The page's CSP nonce, for a third-party widget that adds its own `<script>` or `<style>`: the
 * page's policy runs or applies only those that carry it.
 *
 * @example
 * import { pageNonce } from "../page_nonce.ts";
 * const style = document.createElement("style");
 * style.nonce = pageNonce();
 */
export function pageNonce(doc: Document = document): string {
  // The property, not the attribute: browsers empty the attribute once the page has loaded.
  return doc.querySelector<HTMLScriptElement>("script[nonce]")?.nonce ?? "";
}
