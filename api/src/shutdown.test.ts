/**
 * SIGTERM to a real `bun api/src/main.ts` while a request is in flight: the request gets its
 * real answer, a new request meanwhile gets 503 service_unavailable (+ Retry-After,
 * Connection: close), and the process exits 0 promptly.
 */
import { afterAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { randomBytes } from "node:crypto";
import { freePort } from "../../testing/ports.ts";
import { createTestDatabase } from "../../testing/database.ts";
import { connect } from "./db/client.ts";
import { createApiKey, createMerchant } from "./credentials/store.ts";

const tdb = await createTestDatabase();
afterAll(() => tdb.drop());

test("SIGTERM mid-request: the request completes, new ones get 503, the process exits 0 quickly", async () => {
  const port = await freePort();
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "main.ts")], {
    env: {
      ...process.env,
      DATABASE_URL: tdb.url,
      SERVICE_PORT: String(port),
      SERVICE_PUBLIC_URL: `http://127.0.0.1:${port}`,
      SERVICE_INDEXER: "false",
      // The in-flight request saves a webhook endpoint on this machine: a private target.
      SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
      SERVICE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      SERVICE_RPC_URL_LOCAL: "",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const reader = child.stdout.getReader();
  const until = Date.now() + 20_000;
  while (!out.includes("API       http://") && Date.now() < until) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  expect(out).toContain("API       http://");
  const base = `http://127.0.0.1:${port}`;
  const database = connect(tdb.url, { max: 1 });
  const merchant = await createMerchant(database.db, "Shutdown merchant");
  const key = (await createApiKey(database.db, merchant.id, "sandbox", "test")).secret;
  await database.close();

  // A request whose body is still arriving when SIGTERM comes.
  const enc = new TextEncoder();
  let feed!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (feed = c) });
  feed.enqueue(enc.encode('{"url":"http://localhost:9/hook",'));
  const inFlight = fetch(`${base}/webhook-endpoints`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
    // @ts-expect-error Bun streams request bodies with duplex: half
    duplex: "half",
  });
  await Bun.sleep(300);
  const t0 = performance.now();
  child.kill("SIGTERM");
  await Bun.sleep(300);
  const refused = await fetch(`${base}/healthz`);
  expect(refused.status).toBe(503);
  expect(refused.headers.get("retry-after")).toBe("1");
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
  feed.enqueue(enc.encode('"description":"late"}'));
  feed.close();
  const res = await inFlight;
  expect(res.status).toBe(201);
  expect(((await res.json()) as { description?: string }).description).toBe("late");
  expect(await child.exited).toBe(0);
  expect(performance.now() - t0).toBeLessThan(5000);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  expect(out).toContain("SIGTERM: stopping");
}, 40_000);
