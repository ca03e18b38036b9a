/**
 * The app's own settings, by environment variable: granted to the server by name, read at start-up
 * with the shell's readers; a bad value stops it with one line (`error: RETRIES: expected ...`).
 * @example export const settings = defineSettings({ API_URL: url, RETRIES: integer(0, 10) });
 */
import { defineSettings } from "./lifecycle/config.ts";

/** Every app setting (`undefined` when unset). The shell declares none. */
export const settings = defineSettings({});
