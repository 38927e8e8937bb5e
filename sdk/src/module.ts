/**
 * The ESM build served at /sdk/v1/paysession.mjs: `import { init } from "https://pay.example.com/sdk/v1/paysession.mjs"`.
 * The default base address is where this module was served from. (Kept apart from index.ts:
 * `import.meta` is a syntax error in the script-tag build.)
 */
import { baseFromScriptUrl, setDefaultBaseUrl } from "./index.ts";

export * from "./index.ts";

setDefaultBaseUrl(baseFromScriptUrl(import.meta.url));
