/**
 * The sweeper: carries out the queued rows of app.sweeps, one relayer transaction per batch,
 * and records each outcome. It never changes a session's status: it wakes the session actor
 * (wakeSessions) in the transaction that records a sweep `confirmed` or `failed`, and the actor
 * decides (FUNDED → SUCCEEDED, → ERROR sweep_failed, …).
 *
 * Per enabled network and relayer account, one loop. Any number of processes may run it (in
 * the API process, server.ts, or alone, sweeps/main.ts); the tables are the only shared state.
 *
 * Each pass of a network's loop (one pump, api/src/pump.ts) first watches, then sends:
 *   watch.ts  — reconcile the records with the chain (reconcile.ts), then follow every
 *               unfinished transaction of the relayer to its outcome (receipts, rebroadcast,
 *               same-nonce replacement when stuck, release when another transaction took the nonce);
 *   send.ts   — claim what is due, check (factory code, relayer-spend guard, empty deposits,
 *               the relayer's balance), sign, record, then broadcast one batch;
 *   send-authorization.ts — the same for one payer's recorded EIP-3009 authorization (its
 *               transaction is watched like a batch's: one nonce sequence, one table);
 *   send-refunds.ts — the same for refunds from the merchants' refund balances (docs/refunds.md);
 *   send-wallet-refunds.ts — refunds from merchants' own wallets: their signed authorizations, and
 *               the receipts of the transfers their wallets sent themselves;
 *               before it, refunds/auto-returns.ts turns the network's due automatic returns into refunds;
 *   chain.ts  — the network's state both halves share; plan.ts — their pure parts.
 *
 * Why nothing is sent twice: every hash is committed before it is broadcast, and a sweep stays
 * bound to one nonce until that nonce is spent on-chain. So whichever of a nonce's transactions
 * lands is found, and sweeps go to a new nonce only when the old one can no longer land (its
 * transaction reverted, or another transaction used the nonce). (Were that ever wrong, a second
 * sweep would still only move whatever is left at the deposit to the same settlement address.)
 */
import type { Hex } from "viem";
import { Pump } from "../pump.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { SweepChain, type SweeperHooks, type SweeperOptions } from "./chain.ts";
import { msUntilNextSweepDue } from "./statements/loop.ts";
import { sendDue } from "./send.ts";
import { sendAuthorization } from "./send-authorization.ts";
import { sendRefunds } from "./send-refunds.ts";
import { sendWalletRefunds, watchWalletTransfers } from "./send-wallet-refunds.ts";
import { runDueReturns } from "../refunds/auto-returns.ts";
import { watch } from "./watch.ts";

export { FORCED_FAILURE_ERROR } from "./send.ts";
export type { SweeperHooks, SweeperOptions };

/** Unfinished transactions per relayer and chain before new batches wait. */
const MAX_IN_FLIGHT = 16;

/** float8 ms until the network's next queued sweep is due; null when none is queued. */

export interface Sweeper {
  /** Look at the tables and chains now. */
  wake(): void;
  /** Stops after the step in progress; whatever is unfinished is picked up by the next sweeper. */
  stop(): Promise<void>;
}

export async function startSweeper(opts: SweeperOptions): Promise<Sweeper> {
  const log = opts.log ?? (() => {});
  const chains = opts.networks.map((net) => {
    const key = opts.relayerKeys[net.chainId];
    if (!key) throw new Error(`no relayer key for ${net.name} (chain ${net.chainId})`);
    return new ChainSweeper(new SweepChain(opts, net, key as Hex, log));
  });
  const listener = await opts.sql.listen(
    SWEEP_CHANNEL,
    () => chains.forEach((c) => c.wake()),
    () => chains.forEach((c) => c.wake()),
  );
  for (const c of chains) {
    log(`sweeper: ${c.chain.net.name} (chain ${c.chain.net.chainId}) from relayer ${c.chain.account.address}`);
    c.wake();
  }
  let stopped = false;
  return {
    wake: () => chains.forEach((c) => c.wake()),
    async stop() {
      if (stopped) return;
      stopped = true;
      const stopping = Promise.all(chains.map((c) => c.stop())); // each stops claiming at once
      await listener.unlisten().catch(() => {});
      await stopping;
    },
  };
}

/** One network's loop. */
class ChainSweeper {
  private readonly pump: Pump;

  constructor(readonly chain: SweepChain) {
    this.pump = new Pump(() => this.pass(), { name: `sweeper ${chain.net.name}`, pollMs: chain.s.pollMs, log: chain.log });
  }

  wake(): void {
    this.pump.wake();
  }

  async stop(): Promise<void> {
    this.chain.stopping = true;
    await this.pump.stop();
  }

  /**
   * One pass: follow the unfinished transactions, then send what is due. Returns when to look
   * again: at once after a send (more may be due), the poll interval while transactions are
   * open, else when the next queued sweep falls due.
   */
  private async pass(): Promise<number | undefined> {
    const c = this.chain;
    if (c.stopping) return undefined;
    const open = await watch(c);
    if (c.stopping) return undefined;
    const refunds = c.opts.refunds;
    // Automatic returns due on this network become refunds first, so this pass's round sends them.
    if (refunds && !c.stopping) await runDueReturns(c.sql, c.net.chainId, { maxPerRefundMinor: refunds.maxPerRefundMinor });
    const sent =
      open < MAX_IN_FLIGHT
        ? (await sendDue(c)) +
          (c.stopping ? 0 : await sendAuthorization(c)) +
          (c.stopping || !refunds ? 0 : await sendRefunds(c, refunds.maxPerDayMinor)) +
          (c.stopping || !refunds ? 0 : await sendWalletRefunds(c))
        : 0;
    // Transfers merchants' wallets sent themselves for refunds: their receipts, like our own transactions'.
    const walletOpen = refunds && !c.stopping ? await watchWalletTransfers(c) : 0;
    if (sent > 0) return 0;
    if (open > 0 || walletOpen > 0) return c.s.pollMs;
    const next = await msUntilNextSweepDue(c.sql, c.net.chainId);
    const ms = next == null ? c.s.pollMs : next;
    // Due but not claimable (its deposit is in flight, or another process holds the nonce
    // lock): look again after a short pause rather than spin.
    return ms <= 0 ? Math.min(c.s.pollMs, 100) : Math.max(5, ms);
  }
}
