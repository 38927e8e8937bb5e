/**
 * Operator commands. `bun run admin <command> [--flags]`:
 *   merchant:create --name "Acme"                    a merchant with a sandbox and a production key
 *   key:create --merchant acct_… --env sandbox|production [--name ci] [--scopes a,b] [--expires-in-days N]
 *                                                    --scopes restricts the key (credentials/scopes.ts; left out: full access)
 *   key:list --merchant acct_…
 *   key:revoke --merchant acct_… --key key_…
 *   settlement:set --merchant acct_… --env production --chain 8453 --address 0x…
 *   user:create --merchant acct_… --email a@b.c [--password …]   a dashboard user (no --password: one is made and printed once)
 *   user:password --email a@b.c [--password …]       a new password; every signed-in session of the user ends
 *   networks                                         each enabled network: RPC, chain id, head, stablecoin, factory, relayer balance
 *   factory:deploy --chain 8453                      deploys the deposit factory there (once per network; idempotent)
 *   migrate                                          applies this build's migrations (the first step of a rolling upgrade)
 *   nodes                                            the service's processes: roles, host, version, started, last beat, the indexer's
 *   pg [--port P] [--data-dir D] [--max-connections N]   the embedded Postgres alone, in the foreground; prints its DATABASE_URL
 *   sandbox:chain [--port P] [--data-dir D] [--host H] the local test network alone (anvil, test tokens, the service's contracts); prints SERVICE_RPC_URL_LOCAL
 * `networks` and `factory:deploy` use the network variables (SERVICE_RPC_URL_<KEY>, SERVICE_RELAYER_PRIVATE_KEY), not the database;
 * `pg` and `sandbox:chain` run until Ctrl-C, for several processes on one host (docs/topology.md, "One host").
 * Secrets are printed once, here, and never again. Add --json for machine-readable output.
 * Uses DATABASE_URL, or the embedded Postgres of the data dir (the running one if `bun run dev` is up).
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import postgres from "postgres";
import { ConfigError, embeddedDatabaseUrl, loadConfig, type Config } from "../config.ts";
import { connect } from "../db/client.ts";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../db/embedded.ts";
import { DatabaseAhead, migrate } from "../db/migrate.ts";
import { createApiKey, createMerchant, findMerchant, listApiKeys, revokeApiKey } from "../credentials/store.ts";
import { ENVIRONMENTS, type Environment } from "../../../shared/environment.ts";
import { presetByChainId } from "../../../shared/chains/presets.ts";
import { parseSettlementAddress } from "../sessions/deposits.ts";
import { setSettlement } from "../sessions/settlements.ts";
import { networkCommand } from "./networks.ts";
import { pgCommand } from "./pg.ts";
import { sandboxChainCommand } from "./sandbox-chain.ts";
import { describeNodes } from "./nodes.ts";
import { listNodes } from "../nodes/registry.ts";
import { indexerLease } from "../nodes/lease.ts";
import { changePassword, createUser, findUserByEmail, UserInputError } from "../dashboard/users.ts";
import { newSecret } from "../../../shared/ids.ts";
import { findInChain } from "../../../shared/error-chain.ts";
import { expiryIn, parseScopes } from "../credentials/scopes.ts";

const USAGE = `usage: bun run admin <merchant:create|key:create|key:list|key:revoke|settlement:set|user:create|user:password|networks|factory:deploy|migrate|nodes|pg|sandbox:chain> [--name N] [--merchant acct_…] [--env sandbox|production] [--key key_…] [--scopes a,b] [--expires-in-days N] [--chain ID --address 0x…] [--email E --password P] [--port P --data-dir D --max-connections N --host H] [--json]`;

function die(message: string): never {
  console.error(message);
  process.exit(2);
}

const { positionals, values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    name: { type: "string" },
    merchant: { type: "string" },
    env: { type: "string" },
    key: { type: "string" },
    scopes: { type: "string" },
    "expires-in-days": { type: "string" },
    chain: { type: "string" },
    address: { type: "string" },
    email: { type: "string" },
    password: { type: "string" },
    json: { type: "boolean", default: false },
    port: { type: "string" },
    "data-dir": { type: "string" },
    "max-connections": { type: "string" },
    host: { type: "string" },
  },
});
const command = positionals[0] ?? die(USAGE);

function configOrDie(): Config {
  try {
    return loadConfig();
  } catch (e) {
    die(findInChain(e, (x) => x instanceof ConfigError)?.message ?? String(e));
  }
}
const config = configOrDie();

// On-chain commands: the chain registry's variables and the relayer key, no database.
if (command === "networks" || command === "factory:deploy") {
  process.exit(await networkCommand(command, { chain: values.chain, json: values.json }, config, die));
}

// Servers in the foreground, until Ctrl-C: they are what the database and the chain are.
if (command === "pg") {
  await pgCommand({ port: values.port, dataDir: values["data-dir"], maxConnections: values["max-connections"] }, config, die);
} else if (command === "sandbox:chain") {
  await sandboxChainCommand({ port: values.port, dataDir: values["data-dir"], host: values.host }, config, die);
} else {
  await databaseCommand();
}

/** Every other command works on the database: DATABASE_URL, or the embedded one of the data dir. */
async function databaseCommand() {
  async function databaseUrl(): Promise<{ url: string; embedded?: EmbeddedDatabase }> {
    if (config.databaseUrl) return { url: config.databaseUrl };
    const url = embeddedDatabaseUrl(config.embeddedPgPort);
    const probe = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await probe`select 1`;
      return { url };
    } catch {
      const embedded = await startEmbeddedPostgres({ dataDir: join(config.dataDir, "pg"), port: config.embeddedPgPort });
      return { url: embedded.url, embedded };
    } finally {
      await probe.end();
    }
  }

  const { url, embedded } = await databaseUrl();
  const database = connect(url, { max: 2 });
  const out = (human: string, data: unknown) => console.log(values.json ? JSON.stringify(data) : human);
  const env = (): Environment => {
    const e = values.env ?? die(`--env is required (${ENVIRONMENTS.join(" or ")})`);
    if (!(ENVIRONMENTS as readonly string[]).includes(e)) die(`--env must be ${ENVIRONMENTS.join(" or ")}`);
    return e as Environment;
  };
  const merchantId = async () => {
    const id = values.merchant ?? die("--merchant acct_… is required");
    if (!(await findMerchant(database.db, id))) die(`no merchant ${id}`);
    return id;
  };

  try {
    const applied = await migrate(database.sql).catch((e) => {
      const ahead = findInChain(e, (x) => x instanceof DatabaseAhead);
      return ahead ? die(`refusing to start: ${ahead.message}`) : Promise.reject(e);
    });
    const db = database.db;
    switch (command) {
      case "migrate": {
        out(applied.length ? `applied migrations: ${applied.join(", ")}` : "the database was up to date", { applied });
        break;
      }
      case "nodes": {
        const [nodes, lease] = await Promise.all([listNodes(database.sql), indexerLease(database.sql)]);
        out(describeNodes(nodes, lease), { nodes, indexer: lease });
        break;
      }
      case "merchant:create": {
        const m = await createMerchant(db, values.name ?? die("--name is required"));
        const sandbox = await createApiKey(db, m.id, "sandbox", "first sandbox key");
        const live = await createApiKey(db, m.id, "production", "first production key");
        out(
          [
            `merchant ${m.id} "${m.name}"`,
            `  sandbox:    NEXT_PUBLIC_SERVICE_MERCHANT_ID=${m.sandboxPublicId}  SERVICE_API_KEY=${sandbox.secret}`,
            `  production: NEXT_PUBLIC_SERVICE_MERCHANT_ID=${m.livePublicId}  SERVICE_API_KEY=${live.secret}`,
            "The keys are shown this once; only their hashes are stored.",
          ].join("\n"),
          { merchant: m, keys: { sandbox: sandbox.secret, production: live.secret } },
        );
        break;
      }
      case "key:create": {
        const scopes = values.scopes === undefined ? null : parseScopes(values.scopes.split(","));
        if (scopes && !scopes.ok) die(`--scopes: ${scopes.problem}`);
        const days = values["expires-in-days"];
        const expiry = days === undefined ? null : expiryIn(days, new Date());
        if (expiry && !expiry.ok) die(`--expires-in-days: ${expiry.problem}`);
        const limits = { scopes: scopes?.scopes ?? null, expiresAt: expiry?.expiresAt ?? null };
        const { secret, key } = await createApiKey(db, await merchantId(), env(), values.name ?? "unnamed", undefined, limits);
        const may = `${key.scopes ? `scopes ${key.scopes.join(",")}` : "full access"}, ${key.expiresAt ? `expires ${key.expiresAt.toISOString()}` : "never expires"}`;
        out(`${key.id} (${key.environment}; ${may}) ${secret}\nShown this once; only its hash is stored.`, { key, secret });
        break;
      }
      case "key:list": {
        const keys = await listApiKeys(db, await merchantId());
        out(
          keys.map((k) => `${k.id}  ${k.prefix}…  ${k.environment.padEnd(10)}  ${k.name}  created ${k.createdAt.toISOString()}  last used ${k.lastUsedAt?.toISOString() ?? "never"}  ${k.scopes ? `scopes ${k.scopes.join(",")}` : "full access"}${k.expiresAt ? `  expires ${k.expiresAt.toISOString()}` : ""}${k.revokedAt ? `  REVOKED ${k.revokedAt.toISOString()}` : ""}`).join("\n") || "no keys",
          { keys },
        );
        break;
      }
      case "key:revoke": {
        const revoked = await revokeApiKey(db, await merchantId(), values.key ?? die("--key key_… is required"));
        if (!revoked) die(`no active key ${values.key} for that merchant`);
        out(`revoked ${revoked.id} (${revoked.prefix}…); it is refused from the next request on`, { key: revoked });
        break;
      }
      case "settlement:set": {
        const environment = env();
        const chainId = Number(values.chain ?? die("--chain <chain id> is required"));
        const preset = presetByChainId(chainId);
        if (!preset || preset.environment !== environment) die(`--chain ${values.chain} is not a ${environment} network`);
        const address = parseSettlementAddress(values.address ?? die("--address 0x… is required")) ?? die("--address must be a non-zero 0x address");
        const saved = await setSettlement(db, await merchantId(), environment, chainId, address);
        out(`${environment} ${preset.name}: funds of new sessions settle to ${saved.address}`, { settlement: saved });
        break;
      }
      case "user:create": {
        const password = values.password ?? newSecret().slice(0, 20);
        try {
          const user = await createUser(db, await merchantId(), values.email ?? die("--email is required"), password);
          out(
            `dashboard user ${user.id} ${user.email} (merchant ${user.merchantId})${values.password ? "" : `\n  password: ${password}\nShown this once; only its argon2id hash is stored.`}`,
            { user: { id: user.id, email: user.email, merchantId: user.merchantId }, ...(values.password ? {} : { password }) },
          );
        } catch (e) {
          const refused = findInChain(e, (x) => x instanceof UserInputError);
          if (refused) die(refused.message);
          throw e;
        }
        break;
      }
      case "user:password": {
        const user = (await findUserByEmail(db, values.email ?? die("--email is required"))) ?? die(`no dashboard user ${values.email}`);
        const password = values.password ?? newSecret().slice(0, 20);
        try {
          await changePassword(db, user.id, password);
        } catch (e) {
          const refused = findInChain(e, (x) => x instanceof UserInputError);
          if (refused) die(refused.message);
          throw e;
        }
        out(`new password for ${user.email}${values.password ? "" : `: ${password}`}; every signed-in session of theirs has ended`, { user: { id: user.id, email: user.email }, ...(values.password ? {} : { password }) });
        break;
      }
      default:
        die(USAGE);
    }
  } finally {
    await database.close();
    await embedded?.stop();
  }
}
