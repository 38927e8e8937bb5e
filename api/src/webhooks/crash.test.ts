/**
 * Durability: the delivery worker runs as its own process (webhooks/main.ts) and is
 * killed with SIGKILL mid-delivery. After a restart the delivery is sent again: at least
 * once, never lost. Events written while no worker ran are delivered when one starts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { eventually } from "../../../testing/eventually.ts";
import { startReceiver } from "../../../testing/webhook-receiver.ts";

let svc: TestService;
const rcv = startReceiver();
beforeAll(async () => {
  // The API here runs no worker: the spawned process is the only one.
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(async () => {
  await svc.close();
  await rcv.stop();
});

function spawnWorker() {
  return Bun.spawn(["bun", resolve(import.meta.dir, "main.ts")], {
    env: {
      ...process.env,
      DATABASE_URL: svc.databaseUrl,
      SERVICE_ENCRYPTION_KEY: svc.config.encryptionKey!.toString("base64"),
      SERVICE_WEBHOOK_TIMEOUT_MS: "500",
      SERVICE_WEBHOOK_LEASE_MS: "1500",
      SERVICE_WEBHOOK_POLL_MS: "100",
      SERVICE_WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms",
      SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", // the receiver is on 127.0.0.1
    },
    stdout: "ignore",
    stderr: "inherit",
  });
}

test("SIGKILL of the delivering process mid-flight: the delivery is sent again after restart", async () => {
  const { sandboxKey: key } = await svc.merchant();
  const ep = await svc.call("POST", "/webhook-endpoints", { auth: key, body: { url: `${rcv.url}/crash` } });
  // Written while no worker runs: the outbox keeps it.
  const s = await svc.call("POST", "/payment-sessions", { auth: key, body: { amount: "5.00", currency: "USD" } });
  expect(s.status).toBe(201);
  await Bun.sleep(200);
  expect(rcv.received.length).toBe(0);

  // The first request hangs: the worker is mid-flight when it dies.
  let hang = true;
  rcv.behave(async () => {
    if (hang) await Bun.sleep(10_000);
    return new Response("ok");
  });
  const first = spawnWorker();
  await rcv.waitFor(1, 15_000);
  first.kill("SIGKILL");
  expect(await first.exited).not.toBe(0);
  const [row] = await svc.services.database.sql`select state, attempts from app.webhook_deliveries where endpoint_id = ${ep.body.id}`;
  expect([row!.state, row!.attempts]).toEqual(["sending", 1]);

  hang = false;
  const second = spawnWorker();
  try {
    await rcv.waitFor(2, 15_000);
    const [a, b] = rcv.received;
    expect(b!.id).toBe(a!.id);
    expect(b!.body).toBe(a!.body);
    expect(new Webhook(ep.body.secret).verify(b!.body, b!.headers)).toBeTruthy();
    const done = await eventually(async () => {
      const [r] = await svc.services.database.sql`select state, attempts from app.webhook_deliveries where endpoint_id = ${ep.body.id}`;
      return r!.state === "succeeded" ? r : undefined;
    }, "recorded", 5000);
    expect(done.attempts).toBe(2);
    const att = await svc.call("GET", `/webhook-endpoints/${ep.body.id}/attempts`, { auth: key });
    expect(att.body.data.map((x: any) => [x.attemptNumber, x.succeeded])).toEqual([[2, true]]);
  } finally {
    second.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  }
}, 40_000);
