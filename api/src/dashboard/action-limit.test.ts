/**
 * The dashboard's actions count against a rate limit per person (context.ts actionRoute), as
 * an API key's requests do per key: the API's own limit (SERVICE_RATE_LIMIT_*), here made tiny.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { merchantWithUser, signIn } from "../../../testing/dashboard.ts";
import { col, decodeFirst, rowShape } from "../db/rows.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false", SERVICE_RATE_LIMIT_PER_SECOND: "1", SERVICE_RATE_LIMIT_BURST: "2" });
}, 60_000);
afterAll(() => svc.close());

const Count = rowShape("test count", { n: col.int });

test("a person's actions past the limit are refused with 429 and Retry-After, and change nothing; another person is not held up", async () => {
  const m = await merchantWithUser(svc, "busy@limit.example");
  await merchantWithUser(svc, "calm@limit.example");
  const busy = await signIn(svc, "busy@limit.example");
  const calm = await signIn(svc, "calm@limit.example");
  const keys = async () => decodeFirst(Count, await svc.services.database.sql`select count(*)::int as n from app.api_keys where merchant_id = ${m.merchant.id}`)!.n;
  const before = await keys();
  expect((await busy.post("/dashboard/sandbox/settings/api-keys", { name: "one" })).status).toBe(303);
  expect((await busy.post("/dashboard/sandbox/settings/api-keys", { name: "two" })).status).toBe(303);
  const refused = await busy.post("/dashboard/sandbox/settings/api-keys", { name: "three" });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await refused.text()).toContain("Too many actions in a short time");
  expect(await keys()).toBe(before + 2);
  expect((await calm.post("/dashboard/sandbox/settings/api-keys", { name: "calm" })).status).toBe(303);
});
