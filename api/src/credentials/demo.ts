/**
 * The sandbox demo merchant of `bun run dev`: created once, its key kept in
 * .data/credentials.json for local scripts (a dev convenience; production keys are only
 * ever printed once, by `bun run admin`). A revoked or lost demo key is replaced.
 */
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { merchants } from "../db/schema.ts";
import { type Merchant, createApiKey, createMerchant, lookupApiKey } from "./store.ts";

export interface DevCredentials {
  apiBaseUrl: string;
  apiKey: string;
  merchantId: string;
  swaggerUrl: string;
  [more: string]: unknown;
}

export async function ensureDemoMerchant(
  db: Db,
  file: string,
  urls: { apiBaseUrl: string; swaggerUrl: string; indexerUrl?: string; rpcUrl?: string },
): Promise<{ credentials: DevCredentials; created: boolean }> {
  const prior = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Partial<DevCredentials>) : {};
  if (prior.apiKey) {
    const found = await lookupApiKey(db, prior.apiKey);
    if (found && !found.key.revokedAt && found.key.environment === "sandbox") {
      const credentials = { ...prior, ...urls, apiKey: prior.apiKey, merchantId: found.merchant.sandboxPublicId } as DevCredentials;
      write(file, credentials);
      return { credentials, created: false };
    }
  }
  const [found] = prior.merchantId ? await db.select().from(merchants).where(eq(merchants.sandboxPublicId, prior.merchantId)) : [];
  const merchant: Merchant = found ?? (await createMerchant(db, "Demo merchant"));
  const { secret } = await createApiKey(db, merchant.id, "sandbox", "dev (bun run dev)");
  const credentials = { ...prior, ...urls, apiKey: secret, merchantId: merchant.sandboxPublicId } as DevCredentials;
  write(file, credentials);
  return { credentials, created: true };
}

function write(file: string, credentials: DevCredentials) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
}

/** Adds fields to the credentials file (e.g. the example shop's `demoUrl` once it runs). */
export function updateDevCredentials(file: string, patch: Record<string, unknown>): void {
  const current = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as DevCredentials) : ({} as DevCredentials);
  write(file, { ...current, ...patch });
}
