/**
 * The script-tag build: `<script src="https://pay.example.com/sdk/v1/paysession.js"></script>`
 * defines `window.Paysession` ({ init, PaysessionError, version }); the default base address
 * is the script's own origin and path prefix.
 */
import { baseFromScriptUrl, init, PaysessionError, SDK_VERSION, setDefaultBaseUrl } from "./index.ts";

const script = typeof document !== "undefined" ? (document.currentScript as HTMLScriptElement | null) : null;
setDefaultBaseUrl(baseFromScriptUrl(script?.src));

(globalThis as Record<string, unknown>).Paysession = { init, PaysessionError, version: SDK_VERSION };
