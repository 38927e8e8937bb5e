import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { startTestService, type TestService } from "../../../testing/service.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.close();
});

async function admin(...args: string[]) {
  const p = Bun.spawn(["bun", resolve(import.meta.dir, "admin.ts"), ...args, "--json"], {
    env: { ...process.env, DATABASE_URL: svc.databaseUrl },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out: stdout ? JSON.parse(stdout) : undefined, stderr };
}

test("an operator bootstraps a merchant, lists, adds and revokes keys", async () => {
  const created = await admin("merchant:create", "--name", "Operator Co");
  expect(created.code).toBe(0);
  const { merchant, keys } = created.out;
  expect(merchant.sandboxPublicId).toMatch(/^mch_test_/);
  expect(keys.sandbox).toMatch(/^sk_test_/);
  expect(keys.production).toMatch(/^sk_live_/);
  const session = await svc.call("POST", "/payment-sessions", { auth: keys.sandbox, body: { amount: "1.00", currency: "USD" } });
  expect(session.status).toBe(201);

  const extra = await admin("key:create", "--merchant", merchant.id, "--env", "sandbox", "--name", "ci");
  expect(extra.code).toBe(0);
  const listed = await admin("key:list", "--merchant", merchant.id);
  expect(listed.out.keys.length).toBe(3);
  expect(JSON.stringify(listed.out)).not.toContain(keys.sandbox);

  const sandboxKeyId = listed.out.keys.find((k: { name: string }) => k.name === "first sandbox key").id;
  expect((await admin("key:revoke", "--merchant", merchant.id, "--key", sandboxKeyId)).code).toBe(0);
  const refused = await svc.call("POST", "/payment-sessions", { auth: keys.sandbox, body: { amount: "1.00", currency: "USD" } });
  expect(refused.body.error.code).toBe("api_key_revoked");
  const stillFine = await svc.call("POST", "/payment-sessions", { auth: extra.out.secret, body: { amount: "1.00", currency: "USD" } });
  expect(stillFine.status).toBe(201);
}, 30_000);

test("an operator creates a restricted, expiring key: it does what its scopes allow, and bad flags exit 2", async () => {
  const { merchant } = (await admin("merchant:create", "--name", "Scoped Co")).out;
  const made = await admin("key:create", "--merchant", merchant.id, "--env", "sandbox", "--name", "reports", "--scopes", "sessions:read,events:read", "--expires-in-days", "30");
  expect(made.code).toBe(0);
  expect(made.out.key.scopes).toEqual(["sessions:read", "events:read"]);
  const days = (new Date(made.out.key.expiresAt).getTime() - Date.now()) / 86_400_000;
  expect(days).toBeGreaterThan(29.9);
  expect(days).toBeLessThanOrEqual(30);
  expect((await svc.call("GET", "/payment-sessions", { auth: made.out.secret })).status).toBe(200);
  const refused = await svc.call("POST", "/payment-sessions", { auth: made.out.secret, body: { amount: "1.00", currency: "USD" } });
  expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 403, code: "api_key_scope_missing" });
  const listed = (await admin("key:list", "--merchant", merchant.id)).out.keys;
  expect(listed.find((k: { name: string }) => k.name === "reports").scopes).toEqual(["sessions:read", "events:read"]);
  expect(listed.find((k: { name: string }) => k.name === "first sandbox key").scopes).toBeNull();

  const unknown = await admin("key:create", "--merchant", merchant.id, "--env", "sandbox", "--scopes", "sessions:read,sessions:delete");
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain("sessions:delete");
  expect((await admin("key:create", "--merchant", merchant.id, "--env", "sandbox", "--scopes", ",")).code).toBe(2);
  expect((await admin("key:create", "--merchant", merchant.id, "--env", "sandbox", "--expires-in-days", "0")).code).toBe(2);
  expect((await admin("key:list", "--merchant", merchant.id)).out.keys.length).toBe(3);
}, 30_000);

test("an operator sets a production settlement address", async () => {
  const created = await admin("merchant:create", "--name", "Settle Co");
  const id = created.out.merchant.id;
  const set = await admin("settlement:set", "--merchant", id, "--env", "production", "--chain", "8453", "--address", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
  expect(set.code).toBe(0);
  expect(set.out.settlement.address).toBe("0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
  const live = await svc.call("POST", "/payment-sessions", { auth: created.out.keys.production, body: { amount: "1.00", currency: "USD" } });
  expect(live.status).toBe(201);
  expect((await admin("settlement:set", "--merchant", id, "--env", "production", "--chain", "31337", "--address", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8")).code).toBe(2);
  expect((await admin("settlement:set", "--merchant", id, "--env", "production", "--chain", "8453", "--address", "0x00")).code).toBe(2);
}, 30_000);

test("bad commands and flags exit 2 with a message", async () => {
  expect((await admin("nope")).code).toBe(2);
  const r = await admin("key:create", "--merchant", "acct_missing", "--env", "sandbox");
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("no merchant");
});

test("an operator creates a dashboard user (password printed once, stored as argon2id) and resets it", async () => {
  const created = await admin("merchant:create", "--name", "Dashboard Co");
  const merchant = created.out.merchant;
  const user = await admin("user:create", "--merchant", merchant.id, "--email", "Owner@Dashboard.example");
  expect(user.code).toBe(0);
  expect(user.out.user.email).toBe("owner@dashboard.example");
  expect(user.out.password.length).toBeGreaterThanOrEqual(20);
  const [row] = await svc.services.database.sql`select password_hash from app.dashboard_users where email = 'owner@dashboard.example'`;
  expect(row!.password_hash).toStartWith("$argon2id$");
  expect(row!.password_hash).not.toContain(user.out.password);
  expect(await Bun.password.verify(user.out.password, row!.password_hash)).toBe(true);
  const again = await admin("user:create", "--merchant", merchant.id, "--email", "owner@dashboard.example");
  expect(again.code).toBe(2);
  expect(again.stderr).toContain("exists already");
  expect((await admin("user:create", "--merchant", merchant.id, "--email", "x@y.example", "--password", "short")).code).toBe(2);
  const reset = await admin("user:password", "--email", "owner@dashboard.example");
  expect(reset.code).toBe(0);
  const [after] = await svc.services.database.sql`select password_hash from app.dashboard_users where email = 'owner@dashboard.example'`;
  expect(await Bun.password.verify(reset.out.password, after!.password_hash)).toBe(true);
}, 30_000); // four admin processes, two argon2id hashes: 3 s alone, more beside other work
