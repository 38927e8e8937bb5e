/**
 * `bun run dev`'s dashboard login for the demo merchant: made once, its email and password
 * kept in .data/credentials.json beside the demo key (a dev convenience, like the key). Lost
 * or changed, it is made again.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { merchants } from "../db/schema.ts";
import { newSecret } from "../../../shared/ids.ts";
import { changePassword, checkPassword, createUser, findUserByEmail } from "./users.ts";

export const DEMO_EMAIL = "demo@paysession.localhost";

export async function ensureDemoUser(db: Db, file: string, dashboardUrl: string): Promise<{ email: string; password: string; created: boolean }> {
  const creds = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const [merchant] = await db.select().from(merchants).where(eq(merchants.sandboxPublicId, String(creds.merchantId)));
  if (!merchant) throw new Error(`no demo merchant ${String(creds.merchantId)}`);
  const email = typeof creds.dashboardEmail === "string" ? creds.dashboardEmail : DEMO_EMAIL;
  let password = typeof creds.dashboardPassword === "string" ? creds.dashboardPassword : "";
  const existing = await findUserByEmail(db, email);
  let created = false;
  if (!existing) {
    password = newSecret().slice(0, 20);
    await createUser(db, merchant.id, email, password);
    created = true;
  } else if (existing.merchantId !== merchant.id || !(await checkPassword(existing, password))) {
    if (existing.merchantId !== merchant.id) throw new Error(`${email} belongs to another merchant`);
    password = newSecret().slice(0, 20);
    await changePassword(db, existing.id, password);
    created = true;
  }
  if (existsSync(file)) writeFileSync(file, `${JSON.stringify({ ...creds, dashboardUrl, dashboardEmail: email, dashboardPassword: password }, null, 2)}\n`, { mode: 0o600 });
  return { email, password, created };
}
