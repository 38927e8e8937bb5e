/**
 * The permission matrix held against the live route table: every signed-in dashboard route has
 * its permission, and for every role in both environments a route the matrix forbids answers 403
 * "Not allowed for your role" and changes nothing, while a page it allows opens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { signIn, TEST_PASSWORD, type Browser } from "../../../testing/dashboard.ts";
import { buildApp } from "../http/app.ts";
import { facesFor } from "../server.ts";
import { createUser } from "./users.ts";
import { allows, invitableRoles, MATRIX, mayChangeRole, PERMISSIONS, permissionOfRoute, ROLES, ROUTE_PERMISSIONS, type Role } from "./permissions.ts";

/** Routes before sign-in (no person, so no role). */
const PUBLIC = new Set([
  "GET /dashboard",
  "GET /dashboard/assets/:file",
  "GET /dashboard/sign-in",
  "POST /dashboard/sign-in",
  "GET /dashboard/sign-up",
  "POST /dashboard/sign-up",
  "GET /dashboard/forgot-password",
  "POST /dashboard/forgot-password",
  "GET /dashboard/reset-password/:token",
  "POST /dashboard/reset-password/:token",
  "GET /dashboard/invitations/:token",
  "POST /dashboard/invitations/:token",
  // The second-factor page: a login waiting for it may open nothing else, so it checks the session itself.
  "GET /dashboard/two-factor",
  "POST /dashboard/two-factor",
  "POST /dashboard/two-factor/passkey/options",
  "POST /dashboard/two-factor/passkey",
]);

describe("the matrix, pure", () => {
  test("production settlement, production keys and roles are Owner and Administrator only", () => {
    for (const r of ROLES) {
      const admin = r === "owner" || r === "admin";
      expect([r, allows(r, "settlement_change", "production"), allows(r, "keys", "production"), allows(r, "members", "production")]).toEqual([r, admin, admin, admin]);
    }
    expect(allows("developer", "settlement_change", "sandbox")).toBe(true);
    expect(allows("finance", "refund", "production")).toBe(true);
    expect(allows("support", "refund", "production")).toBe(false);
    expect(allows("viewer", "cancel", "sandbox")).toBe(false);
  });
  test("no one gives a role above their own; only an owner touches an owner; nobody is invited as owner", () => {
    expect(mayChangeRole("admin", "developer", "owner")).toBe(false);
    expect(mayChangeRole("admin", "owner", "admin")).toBe(false);
    expect(mayChangeRole("admin", "viewer", "admin")).toBe(true);
    expect(mayChangeRole("admin", "admin", "viewer")).toBe(false); // else demote, then remove, another admin
    expect(mayChangeRole("owner", "admin", "viewer")).toBe(true);
    expect(mayChangeRole("owner", "admin", "owner")).toBe(true);
    expect(mayChangeRole("developer", "viewer", "finance")).toBe(false);
    expect(invitableRoles("admin")).toEqual(["admin", "developer", "finance", "support", "viewer"]);
    expect(invitableRoles("developer")).toEqual([]);
  });
});

let svc: TestService;
const as = new Map<Role, Browser>();
beforeAll(async () => {
  svc = await startTestService();
  const m = await svc.merchant("Roles");
  for (const role of ROLES) {
    const u = await createUser(svc.services.database.db, m.merchant.id, `${role}@roles.test`, TEST_PASSWORD);
    await svc.services.database.sql`update app.dashboard_users set role = ${role} where id = ${u.id}`;
    as.set(role, await signIn(svc, `${role}@roles.test`));
  }
}, 60_000);
afterAll(async () => {
  await svc?.close();
});

const liveRoutes = () =>
  buildApp(svc.services, facesFor(svc.services))
    .routes.filter((r) => r.path.startsWith("/dashboard"))
    .map((r) => `${r.method} ${r.path}`);

/** Ids of the right shape: the role is checked before any handler reads them. */
function fill(path: string, env: string): string {
  const ids: Record<string, string> = {
    env,
    id: `ps_${"0".repeat(24)}`,
    eventId: `evt_${"0".repeat(24)}`,
    refundId: `rf_${"0".repeat(24)}`,
    keyId: `key_${"0".repeat(24)}`,
    userId: `usr_${"0".repeat(24)}`,
    invitationId: `inv_${"0".repeat(24)}`,
    passkeyId: "AAAA",
    tool: "pay",
    chainId: env === "production" ? "8453" : "31337",
    op: "disable",
  };
  return path.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    if (!(name in ids)) throw new Error(`${path}: no value for :${name}`);
    return ids[name]!;
  });
}

/** Every row of the app schema's tables but the ones a request writes for itself (the history, logins' last-seen, rate buckets, the home page's day cache, the pending authenticator secret the two-factor page draws). */
async function fingerprint(): Promise<string[]> {
  const tables = await svc.services.database.sql`select table_name from information_schema.tables where table_schema = 'app' and table_type = 'BASE TABLE' and table_name not in ('security_events', 'dashboard_logins', 'rate_buckets', 'nodes', 'node_leases', 'dashboard_days', 'dashboard_day_checks', 'user_totp') order by table_name`;
  const parts: string[] = [];
  for (const { table_name } of tables) {
    const [r] = await svc.services.database.sql.unsafe(`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from app."${table_name}" t`);
    parts.push(`${table_name}:${r!.h}`);
  }
  return parts;
}

test("every signed-in dashboard route names its permission; the table names no route that is gone", () => {
  const live = liveRoutes().filter((k) => !PUBLIC.has(k));
  expect(live.filter((k) => !(k in ROUTE_PERMISSIONS))).toEqual([]);
  expect(Object.keys(ROUTE_PERMISSIONS).filter((k) => !live.includes(k))).toEqual([]);
});

describe("every role, every route, both environments", () => {
  for (const role of ROLES) {
    test(`${role}: what the matrix forbids is 403 and changes nothing; the pages it allows open`, async () => {
      const b = as.get(role)!;
      const before = await fingerprint();
      const wrong: string[] = [];
      for (const key of liveRoutes().filter((k) => !PUBLIC.has(k))) {
        const [method, route] = key.split(" ") as [string, string];
        for (const env of route.includes(":env") ? ["sandbox", "production"] : ["sandbox"]) {
          const permission = permissionOfRoute(method, route)!;
          const allowed = allows(role, permission, env as "sandbox" | "production");
          if (allowed && method === "POST") continue; // an allowed action would act: its own tests cover it
          const path = fill(route, env);
          const res = method === "GET" ? await b.get(path) : await b.post(path, { email: "x@y.test", role: "viewer", password: "p", address: "0x00000000000000000000000000000000000000b2" });
          const text = await res.text();
          const refused = res.status === 403 && text.includes("Not allowed for your role");
          if (refused !== !allowed) wrong.push(`${env} ${key}: ${res.status}${refused ? " refused" : ""}, the matrix says ${allowed ? "allowed" : "forbidden"}`);
        }
      }
      expect(wrong).toEqual([]);
      expect(await fingerprint()).toEqual(before);
      // The navigation shows only what the role may open.
      const home = await (await b.get("/dashboard/production")).text();
      expect(home.includes('href="/dashboard/production/settings/members"')).toBe(allows(role, "members", "production"));
      expect(home.includes('href="/dashboard/production/settings/api-keys"')).toBe(allows(role, "keys", "production"));
    }, 60_000);
  }
});


test("the guide's table is the matrix: every permission, every role, the same marks", async () => {
  const text = await Bun.file(new URL("../../../docs/team-and-security.md", import.meta.url)).text();
  const rows = text.split("\n").filter((l) => /^\| (see|download|create, pay|change the refund|mint|cancel|create and deactivate|use the sandbox|send a webhook|see, create|manage webhook|change a settlement|read the security|read the Outbox|invite|change one's)/.test(l));
  expect(rows).toHaveLength(PERMISSIONS.length);
  const marks = rows.map((l) => l.split("|").slice(2, 8).map((c) => c.trim()));
  const expected = PERMISSIONS.map((p) =>
    ROLES.map((r) => {
      const s = MATRIX[p].sandbox.includes(r);
      const pr = MATRIX[p].production.includes(r);
      return s && pr ? "✓" : s ? "sandbox" : pr ? "production" : "—";
    }),
  );
  expect(marks).toEqual(expected);
});
