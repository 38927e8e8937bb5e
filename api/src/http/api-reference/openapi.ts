/**
 * The OpenAPI document (`GET /docs/json`), built once from the app's own routes: each route's
 * `detail` (doc() in schemas.ts) and its TypeBox schemas, the same ones validate.ts checks
 * requests against, so the document and the checks cannot drift apart.
 *
 * It declares OpenAPI 3.1, whose schemas are JSON Schema 2020-12: TypeBox's `const` and
 * `type: "null"` are valid there (3.0 has neither). Two tidy-ups make it precise and small for
 * generated clients: a union of string literals becomes one `enum`, and the error shape is one
 * component (`#/components/schemas/Error`) that each error response narrows to its own codes.
 */
import type { AnyElysia } from "elysia";
import { filterPaths, registerSchemaPath } from "@elysiajs/swagger/utils";

type Json = unknown;
export type Doc = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

export interface DocumentInfo {
  info: { title: string; version: string; description: string };
  components: Record<string, unknown>;
  /** What the service POSTs to merchants' endpoints, by event type (OpenAPI 3.1 `webhooks`). */
  webhooks?: Record<string, unknown>;
  /** Routes that are not part of the API (the reference page itself, /metrics). */
  exclude: string[];
}

/** The document for `app`'s routes (call once all routes are mounted). */
export function buildOpenApi(app: AnyElysia, meta: DocumentInfo): Doc {
  const paths: Parameters<typeof registerSchemaPath>[0]["schema"] = {};
  for (const route of app.routes) {
    const hooks = route.hooks as { detail?: { hide?: boolean } } | undefined;
    if (hooks?.detail?.hide === true || route.method === "OPTIONS" || route.method === "ALL") continue;
    if (meta.exclude.includes(route.path)) continue;
    registerSchemaPath({ schema: paths, hook: route.hooks as never, method: route.method, path: route.path, models: {} });
  }
  return tidy({
    openapi: "3.1.0",
    info: meta.info,
    paths: filterPaths(paths, { excludeStaticFile: true, exclude: meta.exclude }) as Doc["paths"],
    ...(meta.webhooks ? { webhooks: meta.webhooks } : {}),
    components: meta.components,
  });
}

/**
 * Pure: `anyOf` of string `const`s → `{ type: "string", enum }` (keeping description and other
 * keywords), everywhere in the document.
 */
export function tidy<T>(doc: T): T {
  return walk(doc) as T;
}

function walk(v: Json): Json {
  if (Array.isArray(v)) return v.map(walk);
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, Json>;
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(o)) out[k] = walk(x);
  const anyOf = out.anyOf;
  if (Array.isArray(anyOf) && anyOf.length > 0 && anyOf.every(isStringConst)) {
    const { anyOf: _, ...rest } = out;
    return { ...rest, type: "string", enum: anyOf.map((c) => (c as { const: string }).const) };
  }
  return out;
}

function isStringConst(s: Json): boolean {
  if (!s || typeof s !== "object" || Array.isArray(s)) return false;
  const keys = Object.keys(s);
  const c = (s as { const?: unknown }).const;
  return typeof c === "string" && keys.every((k) => k === "const" || k === "type") && ((s as { type?: unknown }).type ?? "string") === "string";
}
