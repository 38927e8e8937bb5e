import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import type { RateLimiter } from "./rate-limit.ts";
import type { Resolver } from "../webhooks/target.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Faucet } from "../sandbox/faucet.ts";
import type { NetworkReadiness } from "../onchain/network-status.ts";
import type { MetricsRegistry } from "./metrics.ts";
import type { Group } from "../db/group.ts";
import type { KeyLookup } from "../credentials/store.ts";
import type { KeyMemo } from "../credentials/key-memo.ts";
import type { CreatedSession, NewSession } from "../sessions/repository.ts";
import type { KeyedCreate, KeyedOutcome } from "./idempotent-creates.ts";

/** What the HTTP layer needs from the rest of the process (built by server.ts, which owns the parts). */
export interface Services {
  config: Config;
  database: Database;
  limiter: RateLimiter;
  /** keyId → when its last_used_at was last written (see auth.ts). */
  keyTouchedAt: Map<string, number>;
  /** Seals webhook secrets at rest (webhooks/secrets.ts). */
  encryptionKey: Buffer;
  /** DNS for webhook URLs (tests replace it). */
  resolver?: Resolver;
  /** Sandbox faucet: TestUSD and payments on the local test networks. */
  faucet: Faucet;
  /** Enabled networks of both environments (shared/chains), from the boot's chain config. */
  networks: NetworkConfig[];
  /** Which of them are ready (deposit factory deployed): sessions are offered only there. */
  readiness: NetworkReadiness;
  /** API-key lookups, grouped (credentials/store.ts apiKeyLookups): one per request but plain creates. */
  apiKeys: Group<string, KeyLookup | undefined>;
  /** Each key's last lookup, which plain creates may reuse (credentials/key-memo.ts). */
  keyMemo: KeyMemo;
  /** Plain creates, written with group commit (sessions/create-group.ts); null: its key check failed, not written. */
  creates: Group<NewSession, CreatedSession | null>;
  /** Creates with an Idempotency-Key whose key is free, grouped (http/idempotent-creates.ts). */
  keyedCreates: Group<KeyedCreate, KeyedOutcome>;
  /** GET /metrics (server.ts sets it once the HTTP front exists). */
  metrics?: MetricsRegistry;
}
