/**
 * Every over-cap body gets its 413, however it is sent: 500 requests to several routes (the
 * API's, a browser route, a dashboard form), each with Content-Length or chunked, one byte over
 * the cap or far over it, on a connection the client asks to close or keeps, from a client that
 * writes the whole request before it reads its answer (as most do). Each must get the 413 in the
 * documented shape — never a cut connection. (Answering early and closing with the body unread
 * made the kernel reset the connection, and the reset threw the answer away.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { chunked, rawRequest } from "../../../testing/raw-http.ts";
import { DRAIN_BYTES, MAX_BODY_BYTES } from "./body.ts";

let svc: TestService;
const own = { key: "", token: "", endpointId: "" };
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
  own.key = (await svc.merchant()).sandboxKey;
  const s = await svc.call("POST", "/payment-sessions", { auth: own.key, body: { amount: "10.00", currency: "USD" } });
  own.token = s.body.paymentSessionToken;
  own.endpointId = (await svc.call("POST", "/webhook-endpoints", { auth: own.key, body: { url: "http://localhost:9/h" } })).body.id;
});
afterAll(() => svc.close());

test("500 over-cap bodies — several routes, Content-Length and chunked, one byte and far over, closed and kept connections, sent whole before reading — each get a 413 in the documented shape", async () => {
  const { host } = new URL(svc.url);
  const routes = [
    { method: "POST", path: "/webhook-endpoints", auth: own.key, type: "application/json" },
    { method: "POST", path: "/payment-sessions", auth: own.key, type: "application/json" },
    { method: "POST", path: `/webhook-endpoints/${own.endpointId}`, auth: own.key, type: "application/json" },
    { method: "PUT", path: "/settlement-addresses/31337", auth: own.key, type: "application/json" },
    { method: "POST", path: "/api/payment-sessions/cancel", auth: own.token, type: "application/json" },
    { method: "POST", path: "/dashboard/sign-in", auth: undefined, type: "application/x-www-form-urlencoded" },
  ];
  // One byte over, and far over (as far as the server reads before answering).
  const sizes = [MAX_BODY_BYTES + 1, DRAIN_BYTES];
  const bodies = new Map(sizes.map((n) => [n, Buffer.alloc(n, 0x78)]));
  const cases = Array.from({ length: 500 }, (_, i) => ({
    route: routes[i % routes.length]!,
    size: sizes[Math.floor(i / routes.length) % sizes.length]!,
    framing: Math.floor(i / (routes.length * sizes.length)) % 2 === 0 ? "content-length" : "chunked",
    close: Math.floor(i / (routes.length * sizes.length * 2)) % 2 === 0,
  }));
  const failures: string[] = [];
  const send = async (c: (typeof cases)[number]) => {
    const body = bodies.get(c.size)!;
    const head = [
      `${c.route.method} ${c.route.path} HTTP/1.1`,
      `Host: ${host}`,
      ...(c.route.auth ? [`Authorization: Bearer ${c.route.auth}`] : []),
      `Content-Type: ${c.route.type}`,
      c.framing === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${body.length}`,
      ...(c.close ? ["Connection: close"] : []),
    ].join("\r\n");
    const a = await rawRequest(svc.url, head, c.framing === "chunked" ? chunked(body) : body, 10_000, { sendFirst: true });
    const err = (a.json as { error?: Record<string, unknown> } | undefined)?.error;
    const name = `${c.route.method} ${c.route.path} ${c.size} bytes ${c.framing}${c.close ? ", Connection: close" : ""}`;
    if (a.noAnswer) failures.push(`${name}: no answer (${a.noAnswer})`);
    else if (a.status !== 413 || err?.code !== "body_too_large" || err?.type !== "invalid_request_error" || typeof err?.message !== "string" || typeof err?.requestId !== "string" || err.requestId !== a.headers["request-id"])
      failures.push(`${name}: ${a.status} ${a.text.slice(0, 120)}`);
  };
  const queue = [...cases];
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let c = queue.shift(); c; c = queue.shift()) await send(c);
    }),
  );
  if (failures.length) console.error(`${failures.length} of ${cases.length}:\n${failures.slice(0, 20).join("\n")}`);
  expect(failures).toEqual([]);
}, 60_000);
