/**
 * The sandbox faucet: TestUSD (and TestUSDT) minted by the public dev faucet account (both
 * tokens' minter) on the local test networks, and payments sent from it like a payer's wallet
 * would. Only networks whose stablecoin is TestUSD can have a faucet (Circle's test USDC on the
 * public test networks has its own faucet). Every API process sends from the same faucet account,
 * so its sends are serialized per chain twice: in this process (a queue: one database connection
 * waits, not one per request) and across processes (a transaction-scoped advisory lock held while
 * the transaction goes out and is mined). Without the second, two API nodes behind a balancer pick
 * the same nonce and one send fails ("nonce too low").
 */
import { createPublicClient, createWalletClient, erc20Abi, http, type Address, type Hash, type PublicClient } from "viem";
import type { Sql } from "postgres";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { devFaucetAccount, mintTestUsd, predictedTestUsdtAddress, predictedTokenAddress } from "../../../shared/contracts/deploy.ts";

export function hasFaucet(net: NetworkConfig): boolean {
  return net.stablecoin.address.toLowerCase() === predictedTokenAddress().toLowerCase();
}

/** Whether the faucet can mint `token` on `net`: a network with a faucet, and one of our two test tokens (anything else is not ours to mint). */
export function faucetMints(net: NetworkConfig, token: string): boolean {
  const t = token.toLowerCase();
  return hasFaucet(net) && (t === predictedTokenAddress().toLowerCase() || t === predictedTestUsdtAddress().toLowerCase());
}

export class Faucet {
  /** `sql`: the database every API process shares (the cross-process lock); without it, this process's queue only. */
  constructor(private readonly sql?: Sql) {}

  private readonly queues = new Map<number, Promise<unknown>>();
  private readonly clients = new Map<number, { publicClient: PublicClient; walletClient: ReturnType<typeof createWalletClient> }>();

  private client(net: NetworkConfig) {
    let c = this.clients.get(net.chainId);
    if (!c) {
      const chain = { id: net.chainId, name: net.name, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [net.rpcUrl] } } };
      const transport = http(net.rpcUrl);
      c = {
        publicClient: createPublicClient({ chain, transport, pollingInterval: 100 }) as PublicClient,
        walletClient: createWalletClient({ chain, transport, account: devFaucetAccount() }),
      };
      this.clients.set(net.chainId, c);
    }
    return c;
  }

  /** One send at a time per chain (the faucet account's nonce), in this process and across processes. */
  private serial<T>(chainId: number, work: () => Promise<T>): Promise<T> {
    const prior = this.queues.get(chainId) ?? Promise.resolve();
    const sql = this.sql;
    const locked = sql
      ? () =>
          sql.begin(async (tx) => {
            await tx`select pg_advisory_xact_lock(hashtextextended(${`paysession sandbox faucet ${chainId}`}, 0))`;
            return work();
          }) as Promise<T>
      : work;
    const next = prior.catch(() => {}).then(locked);
    this.queues.set(chainId, next);
    return next;
  }

  /** Mints `amount` base units of `token` (default: the network's TestUSD; see faucetMints) to `to`. */
  mint(net: NetworkConfig, to: Address, amount: bigint, token: Address = net.stablecoin.address): Promise<Hash> {
    return this.serial(net.chainId, async () => {
      const { publicClient, walletClient } = this.client(net);
      const receipt = await mintTestUsd({ publicClient, walletClient, to, amount, token });
      return receipt.transactionHash;
    });
  }

  /**
   * A little native coin for gas, on the local networks only (anvil's own balance setter: no
   * coin is moved from anyone). Only when the address holds less than `atLeast`; returns what
   * was added, in wei.
   */
  async topUpGas(net: NetworkConfig, to: Address, atLeast: bigint): Promise<bigint> {
    if (net.key !== "local" && net.key !== "local2") return 0n;
    const { publicClient } = this.client(net);
    const balance = await publicClient.getBalance({ address: to });
    if (balance >= atLeast) return 0n;
    await publicClient.request({ method: "anvil_setBalance" as never, params: [to, `0x${atLeast.toString(16)}`] as never });
    return atLeast - balance;
  }

  /** A payment as a wallet makes it: TestUSD minted to the faucet, then transferred from it to `to`. */
  pay(net: NetworkConfig, to: Address, amount: bigint): Promise<Hash> {
    return this.serial(net.chainId, async () => {
      const { publicClient, walletClient } = this.client(net);
      await mintTestUsd({ publicClient, walletClient, to: devFaucetAccount().address, amount, token: net.stablecoin.address });
      const hash = await walletClient.writeContract({
        account: devFaucetAccount(),
        chain: walletClient.chain,
        address: net.stablecoin.address,
        abi: erc20Abi,
        functionName: "transfer",
        args: [to, amount],
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
      if (receipt.status !== "success") throw new Error(`faucet transfer ${hash} reverted`);
      return hash;
    });
  }
}
