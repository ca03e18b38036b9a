/**
 * Imported first by the entries for its side effect: stop with one line when env access for
 * the configuration is missing. It must run before React is evaluated, because React reads
 * NODE_ENV while loading and would otherwise fail with a stack trace instead.
 */
import { envPermissions, missingPermission } from "./permissions.ts";

const missing = missingPermission(envPermissions());
if (missing) {
  console.error(`error: ${missing}`);
  Deno.exit(1);
}

// Deno Deploy sets no NODE_ENV; without it React would run its development build, about 4x
// slower. Deploy grants every permission, so this only runs where it can.
const deployEnv = { name: "env", variable: "DENO_DEPLOYMENT_ID" } as const;
if (Deno.permissions.querySync(deployEnv).state === "granted") {
  if (Deno.env.get("DENO_DEPLOYMENT_ID") && !Deno.env.get("NODE_ENV")) {
    Deno.env.set("NODE_ENV", "production");
  }
}
