/**
 * Requests generated from the OpenAPI document itself (GET /docs/json), for every documented
 * route and method: path parameters that are not valid percent-encoding (`%`, `%ZZ`, `%FF%FE`,
 * overlong UTF-8, a lone surrogate's `%ED%A0%80`, `%00`, …), the same in each query parameter,
 * JSON bodies with lone surrogates and NULs in each documented field, bodies that are not UTF-8,
 * and bodies of exactly 64 KB and of one byte more (declared, and chunked). Each must get an
 * answer, never a 5xx, and the answer must match the schema the document gives its route and
 * status. A route added later is covered without touching this file.
 *
 * Then the body cap on a real socket, as an attacker sends it: one byte over the cap with and
 * without Content-Length, chunked, and far over it; always a 413 in the documented shape. And a
 * short Host header, and the dashboard's pages with malformed ids (a 4xx page).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../../testing/service.ts";
import { documentedAnswers, type DocumentedAnswers } from "../../../../testing/documented-answers.ts";
import { chunked, rawRequest } from "../../../../testing/raw-http.ts";
import { merchantWithUser, signIn } from "../../../../testing/dashboard.ts";
import { MAX_BODY_BYTES } from "../body.ts";
import { buildApp } from "../app.ts";
import { facesFor } from "../../server.ts";
import { messageOf } from "../../../../shared/describe-error.ts";

let svc: TestService;
let doc: { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };
let answers: DocumentedAnswers;
const own = { key: "", token: "", sessionId: "", endpointId: "", eventId: "" };

beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" }, { resolver: async () => { throw new Error("no DNS in this test"); } });
  own.key = (await svc.merchant()).sandboxKey;
  const s = await svc.call("POST", "/payment-sessions", { auth: own.key, body: { amount: "10.00", currency: "USD" } });
  own.sessionId = s.body.paymentSessionId;
  own.token = s.body.paymentSessionToken;
  own.endpointId = (await svc.call("POST", "/webhook-endpoints", { auth: own.key, body: { url: "http://localhost:9/h" } })).body.id;
  own.eventId = (await svc.call("GET", "/events", { auth: own.key })).body.data[0].id;
  doc = (await svc.call("GET", "/docs/json")).body;
  answers = documentedAnswers(doc);
});
afterAll(() => svc.close());

/** Path segments and query values that are not valid percent-encoding, or decode to what no id holds. */
const BAD_ENCODINGS = [
  "%", "%Z", "%ZZ", "%%", "%G0", "%FF%FE", "%FF", "%80", "%C0%AF", "%E0%80%AF", "%F0%80%80%AF", "%C1%BF",
  "%ED%A0%80", "%ED%B0%80", "%ED%A0%80%ED%B0%80", "%F4%90%80%80", "%F8%88%80%80%80", "%00", "ps_%00", "whe_%00",
  "%0A", "%0D%0A", "%2F", "..%2F..", "%252F", "%EF%BB%BF", "%EF%BF%BF", "%F0%9F%92%B8", "%u0041", "%uD800",
  `ps_${"%FF".repeat(24)}`, "a".repeat(2000), "%E2%80%AE", "%20",
  // Ids that make another path: empty, an unescaped / or ?, a dot segment.
  "", "a/b", "a?b", ".", "..", "%2E%2E",
];

/** Sent without a credential too: the route must refuse it with 401 first, as any other id. */
const NO_CREDENTIAL = new Set(["%", "%ZZ", "%FF%FE", "%C0%AF", "%ED%A0%80", "%00", "a".repeat(2000), ""]);

/** JSON values with lone surrogates and NULs (JSON.stringify writes them as \ud800 escapes: valid JSON). */
const BAD_STRINGS = ["\ud800", "a\udc00b", "\udfff\ud800", "\u0000", "x\u0000"];

type Op = { method: string; path: string; security: string | undefined; query: string[]; bodyFields: string[] | undefined };

function operations(): Op[] {
  const ops: Op[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schema = op.requestBody?.content?.["application/json"]?.schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        security: op.security?.[0] ? Object.keys(op.security[0])[0] : undefined,
        query: (op.parameters ?? []).filter((p: { in: string }) => p.in === "query").map((p: { name: string }) => p.name),
        bodyFields: schema ? Object.keys(schema.properties ?? {}) : undefined,
      });
    }
  }
  return ops;
}

/** The path with its parameters filled: the own resource's id, or `bad` raw as given. */
function fill(path: string, bad?: string): string {
  return path.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
    if (bad !== undefined) return bad;
    if (name === "chainId") return "31337";
    if (path.startsWith("/webhook-endpoints/")) return own.endpointId;
    if (path.startsWith("/events/")) return own.eventId;
    return own.sessionId;
  });
}

interface Case {
  name: string;
  op: Op;
  path: string;
  auth: boolean;
  body?: string | Blob | (() => ReadableStream<Uint8Array>);
  /** What the answer must be besides documented: 413, or anything but 413. */
  expect?: "too_large" | "read";
  /** Without a credential the route must refuse it first (401). */
  credentialFirst?: boolean;
}

/** A JSON object of exactly `size` bytes, whose one field the route does not take (so it is read, judged and refused, never acted on). */
function bodyOfSize(size: number): string {
  const shell = '{"notAField":""}';
  return `{"notAField":"${"x".repeat(size - shell.length)}"}`;
}

const stream = (bytes: Uint8Array) => () =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 8_000) c.enqueue(bytes.subarray(i, i + 8_000));
      c.close();
    },
  });

function cases(): Case[] {
  const out: Case[] = [];
  const utf8 = (s: string) => new TextEncoder().encode(s);
  for (const op of operations()) {
    const validBody = op.bodyFields === undefined ? undefined : op.path.startsWith("/settlement-addresses/") ? '{"address":"0x00000000000000000000000000000000000000b2"}' : "{}";
    // Path parameters: each malformed value, with and without a credential.
    if (op.path.includes("{")) {
      for (const bad of BAD_ENCODINGS) {
        const path = fill(op.path, bad);
        out.push({ name: `${op.method} ${path}`, op, path, auth: true, body: validBody });
        if (op.security && NO_CREDENTIAL.has(bad)) out.push({ name: `${op.method} ${path} / no credential`, op, path, auth: false, body: validBody, credentialFirst: true });
      }
    }
    // Query parameters: each malformed value in each.
    for (const q of op.query) {
      for (const bad of [...BAD_ENCODINGS, "%26", "a%3Db"]) {
        const path = `${fill(op.path)}?${q}=${bad}`;
        out.push({ name: `${op.method} ${path}`, op, path, auth: true });
      }
    }
    if (op.bodyFields === undefined) continue;
    // JSON bodies: lone surrogates and NULs in each documented field, as a key, and raw bytes that are not UTF-8.
    const path = fill(op.path);
    for (const field of [...op.bodyFields, "notAField"]) {
      for (const s of BAD_STRINGS) out.push({ name: `${op.method} ${op.path} ${field}=${JSON.stringify(s)}`, op, path, auth: true, body: JSON.stringify({ [field]: s }) });
    }
    for (const s of BAD_STRINGS) out.push({ name: `${op.method} ${op.path} key ${JSON.stringify(s)}`, op, path, auth: true, body: JSON.stringify({ [s]: 1 }) });
    for (const bytes of [[0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]]) {
      const body = new Blob([new Uint8Array([...utf8('{"a":"'), ...bytes, ...utf8('"}')])]);
      out.push({ name: `${op.method} ${op.path} bytes ${bytes.map((b) => b.toString(16)).join(" ")}`, op, path, auth: true, body });
    }
    // Exactly at the cap (read and judged) and one byte over (413), declared and chunked.
    const atCap = bodyOfSize(MAX_BODY_BYTES);
    const overCap = bodyOfSize(MAX_BODY_BYTES + 1);
    out.push({ name: `${op.method} ${op.path} at the cap`, op, path, auth: true, body: atCap, expect: "read" });
    out.push({ name: `${op.method} ${op.path} at the cap, chunked`, op, path, auth: true, body: stream(utf8(atCap)), expect: "read" });
    out.push({ name: `${op.method} ${op.path} one byte over`, op, path, auth: true, body: overCap, expect: "too_large" });
    out.push({ name: `${op.method} ${op.path} one byte over, chunked`, op, path, auth: true, body: stream(utf8(overCap)), expect: "too_large" });
  }
  return out;
}

async function snapshot() {
  const [r] = await svc.services.database.sql`
    select (select string_agg(id || status, ',' order by id) from app.payment_sessions) as sessions,
           (select count(*) from app.session_events)::int as events,
           (select count(*) from app.idempotency_keys)::int as idempotency,
           (select string_agg(id || url || enabled::text || coalesce(description, '') || secret_sealed || coalesce(deleted_at::text, ''), ',' order by id) from app.webhook_endpoints) as endpoints,
           (select count(*) from app.webhook_deliveries)::int as deliveries`;
  return r;
}

test("every documented route and method, sent malformed encodings, lone surrogates and bodies at and over the cap: an answer, never a 5xx, always as documented", async () => {
  const all = cases();
  const documented = operations();
  // Every documented operation is exercised, and the generator is as large as it should be.
  const exercised = new Set(all.map((c) => `${c.op.method} ${c.op.path}`));
  expect(documented.filter((op) => !exercised.has(`${op.method} ${op.path}`) && (op.path.includes("{") || op.query.length > 0 || op.bodyFields)).map((op) => op.path)).toEqual([]);
  expect(all.length).toBeGreaterThan(1500);
  const before = await snapshot();
  const failures: string[] = [];
  const run = async (c: Case) => {
    const headers: Record<string, string> = {};
    if (c.auth && c.op.security) headers.authorization = `Bearer ${c.op.security === "sessionToken" ? own.token : own.key}`;
    if (c.body !== undefined) headers["content-type"] = "application/json";
    const body = typeof c.body === "function" ? c.body() : c.body;
    let res: Response;
    try {
      res = await fetch(`${svc.url}${c.path}`, { method: c.op.method, headers, body });
    } catch (e) {
      failures.push(`${c.name}: no answer (${messageOf(e)})`);
      return;
    }
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      failures.push(`${c.name}: ${res.status}, not JSON: ${text.slice(0, 80)}`);
      return;
    }
    // The operation the URL names as sent (an empty id, or one with an unescaped / or ?, names another path).
    const sent = new URL(`${svc.url}${c.path}`);
    const op = answers.operationOf(c.op.method, sent.pathname);
    const problem = op ? answers.problem(op, res.status, json) : answers.undocumentedProblem(c.op.method, sent.pathname, res.status, json);
    if (res.status >= 500) failures.push(`${c.name}: ${res.status} ${text.slice(0, 160)}`);
    else if (problem) failures.push(`${c.name}: ${problem}`);
    else if (c.expect === "too_large" && json?.error?.code !== "body_too_large") failures.push(`${c.name}: ${res.status} ${json?.error?.code}, expected body_too_large`);
    else if (c.expect === "read" && res.status === 413) failures.push(`${c.name}: 413 for a body within the cap`);
    else if (c.credentialFirst && op === `${c.op.method} ${c.op.path}` && res.status !== 401) failures.push(`${c.name}: ${res.status} ${json?.error?.code} before the credential check`);
  };
  const queue = [...all];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) await run(c);
    }),
  );
  if (failures.length) console.error(failures.slice(0, 60).join("\n"));
  expect(failures).toEqual([]);
  expect(await snapshot()).toEqual(before);
}, 60_000);

test("the body cap on a real socket: one byte over it, declared, chunked or far over, is a 413 in the documented shape on every route that takes a body, never a cut connection", async () => {
  const { host } = new URL(svc.url);
  const headOf = (method: string, path: string, framing: string, auth = true) =>
    [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...(auth ? [`Authorization: Bearer ${path.startsWith("/api/") ? own.token : own.key}`] : []), "Content-Type: application/json", framing].join("\r\n");
  const failures: string[] = [];
  const check = async (name: string, op: string | undefined, answer: ReturnType<typeof rawRequest>, want: "too_large" | "read") => {
    const a = await answer;
    const code = (a.json as { error?: { code?: string } } | undefined)?.error?.code;
    if (a.noAnswer) failures.push(`${name}: no answer (${a.noAnswer})`);
    else if (want === "too_large" && (a.status !== 413 || code !== "body_too_large")) failures.push(`${name}: ${a.status} ${code ?? a.text.slice(0, 60)}`);
    else if (want === "read" && (a.status === 413 || a.status! >= 500)) failures.push(`${name}: ${a.status} ${code}`);
    else if (op && answers.problem(op, a.status!, a.json)) failures.push(`${name}: ${answers.problem(op, a.status!, a.json)}`);
  };
  const over = bodyOfSize(MAX_BODY_BYTES + 1);
  const at = bodyOfSize(MAX_BODY_BYTES);
  const bodyOps = operations().filter((o) => o.bodyFields !== undefined);
  expect(bodyOps.length).toBeGreaterThan(10);
  // Every documented route that takes a body, and the dashboard's forms (not in the document).
  const targets = [...bodyOps.map((o) => ({ method: o.method, path: fill(o.path), op: `${o.method} ${o.path}` })), { method: "POST", path: "/dashboard/sign-in", op: undefined }, { method: "POST", path: "/dashboard/sandbox/settings/webhooks", op: undefined }];
  await Promise.all(
    targets.map(async ({ method, path, op }) => {
      await check(`${method} ${path} declared, one byte over`, op, rawRequest(svc.url, headOf(method, path, `Content-Length: ${over.length}`), over), "too_large");
      await check(`${method} ${path} chunked, one byte over`, op, rawRequest(svc.url, headOf(method, path, "Transfer-Encoding: chunked"), chunked(over)), "too_large");
      await check(`${method} ${path} chunked in one chunk, one byte over`, op, rawRequest(svc.url, headOf(method, path, "Transfer-Encoding: chunked"), chunked(over, over.length)), "too_large");
      await check(`${method} ${path} no credential, one byte over`, op, rawRequest(svc.url, headOf(method, path, `Content-Length: ${over.length}`, false), over), "too_large");
      if (op) await check(`${method} ${path} declared, at the cap`, op, rawRequest(svc.url, headOf(method, path, `Content-Length: ${at.length}`), at), "read");
      if (op) await check(`${method} ${path} chunked, at the cap`, op, rawRequest(svc.url, headOf(method, path, "Transfer-Encoding: chunked"), chunked(at)), "read");
    }),
  );
  // Far over: past the 8 MB where Bun itself used to cut the connection, sent whole; and 1 GB
  // declared of which only the first megabyte comes (the answer must not wait for the rest).
  const big = new Uint8Array(9 * 1024 * 1024).fill(0x20);
  await check("9 MB declared and sent", "POST /webhook-endpoints", rawRequest(svc.url, headOf("POST", "/webhook-endpoints", `Content-Length: ${big.length}`), big, 20_000), "too_large");
  await check("9 MB chunked", "POST /webhook-endpoints", rawRequest(svc.url, headOf("POST", "/webhook-endpoints", "Transfer-Encoding: chunked"), chunked(big, 1 << 20), 20_000), "too_large");
  await check("1 GB declared, 1 MB sent", "POST /webhook-endpoints", rawRequest(svc.url, headOf("POST", "/webhook-endpoints", `Content-Length: ${2 ** 30}`), big.subarray(0, 1 << 20)), "too_large");
  await check("1 GB declared, Expect: 100-continue", "POST /webhook-endpoints", rawRequest(svc.url, headOf("POST", "/webhook-endpoints", `Expect: 100-continue\r\nContent-Length: ${2 ** 30}`)), "too_large");
  if (failures.length) console.error(failures.join("\n"));
  expect(failures).toEqual([]);
}, 60_000);

test("a short Host header (a proxy's name for the service, such as api) reaches the same routes", async () => {
  const seen: string[] = [];
  for (const host of ["a", "api", "a:1", "ab.c"]) {
    for (const path of ["/healthz", `/payment-sessions/${own.sessionId}`, `/payment-sessions/%ZZ`]) {
      const a = await rawRequest(svc.url, `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${own.key}`);
      seen.push(`${host} ${path.slice(0, 18)} ${a.status} ${(a.json as { error?: { code: string } })?.error?.code ?? "ok"}`);
    }
  }
  expect(seen.filter((s) => !/ (200 ok|404 resource_not_found)$/.test(s))).toEqual([]);
});

test("the dashboard's pages with path parameters, signed in, given ids that are not valid percent-encoding: a 4xx page, never a 5xx", async () => {
  await merchantWithUser(svc, "paths@example.com");
  const browser = await signIn(svc, "paths@example.com");
  const routes = buildApp(svc.services, facesFor(svc.services)).routes.filter((r) => r.path.startsWith("/dashboard/") && r.path.includes(":") && (r.method === "GET" || r.method === "POST"));
  expect(routes.length).toBeGreaterThan(5);
  const failures: string[] = [];
  for (const r of routes) {
    for (const bad of ["%ZZ", "%FF%FE", "%ED%A0%80", "%00"]) {
      // Every parameter bad, and every one but the environment bad (so the id itself is judged).
      for (const env of r.path.replace(":env", "").includes(":") ? [bad, "sandbox"] : [bad]) {
        const path = r.path.replace(/:([A-Za-z]+)/g, (_, name: string) => (name === "env" ? env : bad));
        const res = r.method === "GET" ? await browser.get(path) : await browser.post(path);
        const type = res.headers.get("content-type") ?? "";
        await res.arrayBuffer();
        if (res.status < 400 || res.status >= 500 || !type.startsWith("text/html")) failures.push(`${r.method} ${path}: ${res.status} ${type}`);
      }
    }
  }
  if (failures.length) console.error(failures.join("\n"));
  expect(failures).toEqual([]);
}, 60_000);
