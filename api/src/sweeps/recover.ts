/**
 * Recovering a stray ERC-20 or native coin sent to a deposit address by mistake: an operator
 * queues a sweep of that token for the session's deposit; the sweeper carries it out like any
 * other (it can only ever pay the deposit's own settlement address).
 *
 *   bun api/src/sweeps/recover.ts --session ps_… --chain 31337 --token 0x…|native
 *
 * Uses DATABASE_URL, or the embedded Postgres of the data dir while `bun run dev` is up.
 * The sweep row carries the token; the session actor should not read a recovery sweep
 * (token_address ≠ session_deposits.token_address) as the session's own settlement.
 */
import { parseArgs } from "node:util";
import { getAddress, isAddress, zeroAddress } from "viem";
import type { Sql } from "postgres";
import { queueSweep } from "../effects/sweep-queue.ts";
import { depositOnChain } from "./statements/loop.ts";
import { describeError } from "../../../shared/describe-error.ts";

export async function queueRecovery(sql: Sql, args: { sessionId: string; chainId: number; token: string }): Promise<string> {
  const token = args.token === "native" ? zeroAddress : args.token;
  if (!isAddress(token, { strict: false })) throw new Error(`--token: expected an address or "native", got "${args.token}"`);
  const d = await depositOnChain(sql, args.sessionId, args.chainId);
  if (!d) throw new Error(`session ${args.sessionId} has no deposit address on chain ${args.chainId}`);
  return sql.begin((tx) =>
    queueSweep(tx, {
      sessionId: args.sessionId,
      chainId: args.chainId,
      depositAddress: d.address,
      settlementAddress: d.settlement_address,
      tokenAddress: getAddress(token),
      amount: 0n,
    }),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { session: { type: "string" }, chain: { type: "string" }, token: { type: "string" } },
  });
  if (!values.session || !values.chain || !/^\d+$/.test(values.chain) || !values.token) {
    console.error("usage: bun api/src/sweeps/recover.ts --session ps_… --chain <chain id> --token <0x… | native>");
    process.exit(2);
  }
  const { loadConfig, databaseUrlOf } = await import("../config.ts");
  const { connect } = await import("../db/client.ts");
  const config = loadConfig();
  const database = connect(databaseUrlOf(config), { max: 1 });
  try {
    const id = await queueRecovery(database.sql, { sessionId: values.session, chainId: Number(values.chain), token: values.token });
    console.log(`queued recovery sweep ${id}; a running sweeper carries it out (see app.sweeps)`);
  } catch (e) {
    console.error(describeError(e));
    process.exitCode = 1;
  } finally {
    await database.close();
  }
}
