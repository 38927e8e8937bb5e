/**
 * What each enabled network looks like from here, right now: one probe per network (RPC
 * reachable, chain id, head block, the stablecoin's code and decimals, the deposit factory's
 * code, the relayer's balance of native coin), and what follows from it:
 *
 *   - **fatal** problems refuse the start (`bun run start` prints one line each, before the
 *     database or anything else starts): RPC unreachable, wrong chain id, no stablecoin or wrong
 *     decimals — a wrong one would mis-price or lose payments;
 *   - **not ready**: the deposit factory has no code yet (`bun run admin factory:deploy`). The
 *     service runs, but sessions are not offered on that network: a deposit address there could
 *     not be swept. It becomes ready by itself once the factory appears (re-checked every
 *     SERVICE_NETWORK_CHECK_SECONDS and, at most once a second, when a session is created);
 *   - **warnings**: the relayer's balance is under its threshold (SERVICE_RELAYER_MIN_BALANCE_<KEY>);
 *     AuthorizationBatch is not deployed where payments by authorization are on (they then go one
 *     per relayer transaction, at more gas each).
 *
 * Code never leaves an address in our world (the factory has no selfdestruct), so once a
 * network has been seen with its factory and the right token it stays ready for the process's
 * life: an RPC outage later does not stop sessions (the payer can still pay; we catch up).
 * RPC URLs are never part of a status (they often carry a provider's API key).
 */
import { erc20Abi, formatEther, type Address, type PublicClient } from "viem";
import { publicClientFor } from "../../../shared/chains/check.ts";
import { relayerMinBalanceWei, type NetworkConfig, type Stablecoin } from "../../../shared/chains/config.ts";
import { envSuffix, type Environment } from "../../../shared/chains/presets.ts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress } from "../../../shared/contracts/addresses.ts";
import { describeError } from "../../../shared/describe-error.ts";

export interface NetworkStatus {
  key: string;
  chainId: number;
  name: string;
  environment: Environment;
  checkedAt: string;
  /** Sessions are offered on it: right chain, right token, the factory has code. */
  ready: boolean;
  rpc: { reachable: boolean; error?: string };
  /** The chain id the RPC answered (null: unreachable). */
  chainIdSeen: number | null;
  headBlock: string | null;
  factory: { address: Address; present: boolean | null };
  /** AuthorizationBatch (several payers' authorizations per relayer transaction); missing: one per transaction. */
  authorizationBatch: { address: Address; present: boolean | null };
  /** The main stablecoin (stablecoins[0]). */
  stablecoin: TokenStatus;
  /** Every accepted stablecoin, the main one first. */
  stablecoins: TokenStatus[];
  relayer: { address: Address | null; balanceWei: string | null; balance: string | null; minBalance: string; low: boolean | null };
  /** Refuse the start: unreachable, wrong chain, no or wrong stablecoin. */
  fatal: string[];
  /** Why it is not ready (besides `fatal`): the factory is missing. */
  notReady: string[];
  /** Worth an operator's attention; nothing stops: the relayer's balance is low. */
  warnings: string[];
}

export interface TokenStatus {
  symbol: string;
  address: Address;
  present: boolean | null;
  decimals: number | null;
  expectedDecimals: number;
}

export interface ProbeOptions {
  /** The relayer account on this network (undefined: not checked). */
  relayer?: Address;
  /** Defaults to a viem client on the network's RPC URL. */
  client?: PublicClient;
  /** Per RPC call; default 5 s. */
  timeoutMs?: number;
}

function factoryOf(net: NetworkConfig): Address {
  return net.factory ?? predictedFactoryAddress();
}

/** As answered by /readyz: the outermost first line only; the RPC URL is cut by `firstLine` below. */
const firstLineOf = (err: unknown) => describeError(err, { links: 1, firstLines: true, maxLength: 300, redact: false });
function safePath(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return undefined;
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e) => (clearTimeout(timer), reject(e)),
    );
  });
}

/** A token not looked at yet. */
function unknownToken(c: Stablecoin): TokenStatus {
  return { symbol: c.symbol, address: c.address, present: null, decimals: null, expectedDecimals: c.decimals };
}

/** One look at one network. Never throws: what went wrong is in the status. */
export async function probeNetwork(net: NetworkConfig, opts: ProbeOptions = {}): Promise<NetworkStatus> {
  const client = opts.client ?? publicClientFor(net);
  const timeout = opts.timeoutMs ?? 5000;
  const rpcVar = `SERVICE_RPC_URL_${envSuffix(net.key)}`;
  // An RPC URL often carries a provider's key: never in a status, a log line or /readyz.
  const secretParts = [net.rpcUrl, safePath(net.rpcUrl)].filter((p): p is string => !!p && p.length > 1);
  const firstLine = (err: unknown) => secretParts.reduce((m, p) => m.split(p).join("[RPC URL]"), firstLineOf(err));
  const minWei = relayerMinBalanceWei(net);
  const coins = net.stablecoins.map(unknownToken);
  const status: NetworkStatus = {
    key: net.key,
    chainId: net.chainId,
    name: net.name,
    environment: net.environment,
    checkedAt: new Date().toISOString(),
    ready: false,
    rpc: { reachable: false },
    chainIdSeen: null,
    headBlock: null,
    factory: { address: factoryOf(net), present: null },
    authorizationBatch: { address: predictedAuthorizationBatchAddress(), present: null },
    stablecoin: coins[0]!,
    stablecoins: coins,
    relayer: { address: opts.relayer ?? null, balanceWei: null, balance: null, minBalance: formatEther(minWei), low: null },
    fatal: [],
    notReady: [],
    warnings: [],
  };
  try {
    const [chainId, head] = await withTimeout(Promise.all([client.getChainId(), client.getBlockNumber()]), timeout, "RPC");
    status.rpc.reachable = true;
    status.chainIdSeen = chainId;
    status.headBlock = head.toString();
  } catch (err) {
    status.rpc.error = firstLine(err);
    status.fatal.push(`${net.name}: RPC (${rpcVar}) did not answer: ${status.rpc.error}`);
    return status;
  }
  if (status.chainIdSeen !== net.chainId) {
    status.fatal.push(`${net.name}: ${rpcVar} serves chain id ${status.chainIdSeen}, expected ${net.chainId}`);
    return status;
  }
  const code = async (address: Address) => {
    const c = await withTimeout(client.getCode({ address }), timeout, "eth_getCode");
    return c !== undefined && c !== "0x";
  };
  await Promise.all([
    ...status.stablecoins.map(async (coin) => {
      try {
        coin.present = await code(coin.address);
        if (!coin.present) {
          status.fatal.push(
            `${net.name}: no contract at the stablecoin address ${coin.address} (${coin.symbol}); check ${rpcVar}, SERVICE_STABLECOINS_${envSuffix(net.key)} or SERVICE_STABLECOIN_ADDRESS_${envSuffix(net.key)}`,
          );
          return;
        }
        coin.decimals = Number(await withTimeout(client.readContract({ address: coin.address, abi: erc20Abi, functionName: "decimals" }), timeout, "decimals()"));
        if (coin.decimals !== coin.expectedDecimals) {
          status.fatal.push(
            `${net.name}: stablecoin ${coin.address} has ${coin.decimals} decimals, ${coin.symbol} here must have ${coin.expectedDecimals} (amounts would be mis-scaled)`,
          );
        }
      } catch (err) {
        status.fatal.push(`${net.name}: could not read decimals() of the stablecoin ${coin.address} (${coin.symbol}): ${firstLine(err)}`);
      }
    }),
    (async () => {
      try {
        status.factory.present = await code(status.factory.address);
        if (!status.factory.present) {
          status.notReady.push(
            `${net.name}: no deposit factory at ${status.factory.address}: sessions are not offered on it until it is deployed (bun run admin factory:deploy --chain ${net.chainId})`,
          );
        }
      } catch (err) {
        status.notReady.push(`${net.name}: could not read the deposit factory's code: ${firstLine(err)}`);
      }
    })(),
    (async () => {
      try {
        status.authorizationBatch.present = await code(status.authorizationBatch.address);
        if (!status.authorizationBatch.present && net.gasless) {
          status.warnings.push(
            `${net.name}: no AuthorizationBatch at ${status.authorizationBatch.address}: payments by authorization are submitted one per transaction, at more gas each (bun run admin factory:deploy --chain ${net.chainId} deploys it)`,
          );
        }
      } catch (err) {
        status.warnings.push(`${net.name}: could not read AuthorizationBatch's code: ${firstLine(err)}`);
      }
    })(),
    (async () => {
      if (!opts.relayer) return;
      try {
        const balance = await withTimeout(client.getBalance({ address: opts.relayer }), timeout, "eth_getBalance");
        status.relayer.balanceWei = balance.toString();
        status.relayer.balance = formatEther(balance);
        status.relayer.low = balance < minWei;
        if (status.relayer.low) {
          status.warnings.push(
            `${net.name}: relayer ${opts.relayer} holds ${formatEther(balance)} of native coin, under ${formatEther(minWei)} (SERVICE_RELAYER_MIN_BALANCE_${envSuffix(net.key)}): fund it, sweeps and authorization submissions pay their gas from it`,
          );
        }
      } catch (err) {
        status.warnings.push(`${net.name}: could not read the relayer's balance: ${firstLine(err)}`);
      }
    })(),
  ]);
  status.ready = status.fatal.length === 0 && status.factory.present === true;
  return status;
}

/** One line for the start-up log. */
export function describeStatus(s: NetworkStatus): string {
  const parts = [
    `${s.name} (chain ${s.chainId}, ${s.environment})`,
    s.rpc.reachable ? `head ${s.headBlock}` : "RPC unreachable",
    ...s.stablecoins.map((c) => `${c.symbol} ${c.present ? `${c.decimals} decimals` : c.present === false ? "MISSING" : "?"}`),
    `factory ${s.factory.present ? "present" : s.factory.present === false ? "MISSING" : "?"}`,
    `batch ${s.authorizationBatch.present ? "present" : s.authorizationBatch.present === false ? "missing" : "?"}`,
    ...(s.relayer.address ? [`relayer ${s.relayer.address} ${s.relayer.balance ?? "?"}${s.relayer.low ? " (LOW)" : ""}`] : []),
    s.ready ? "ready" : "NOT READY",
  ];
  return parts.join(", ");
}

export interface ReadinessOptions {
  /** The relayer's address per chain id (the sweeper's signer). */
  relayerFor?: (chainId: number) => Address | undefined;
  /** Background re-check period; default 30 s. 0: only on demand. */
  refreshMs?: number;
  /** On-demand probes of one network are at least this far apart; default 1 s. */
  minProbeIntervalMs?: number;
  log?: (line: string) => void;
  timeoutMs?: number;
}

/**
 * The readiness of every enabled network, kept current: a background re-check, plus an
 * on-demand one (coalesced, throttled) when a caller needs a not-yet-ready network. State is
 * the chain itself, so a restart loses nothing: it is simply probed again.
 */
export class NetworkReadiness {
  private readonly latest = new Map<number, NetworkStatus>();
  /** Networks seen with their factory and the right token: ready for good. */
  private readonly confirmed = new Set<number>();
  private readonly inFlight = new Map<number, Promise<NetworkStatus>>();
  private readonly probedAt = new Map<number, number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly trusted: boolean;

  constructor(
    readonly networks: readonly NetworkConfig[],
    private readonly opts: ReadinessOptions = {},
    trusted = false,
  ) {
    this.trusted = trusted;
  }

  /**
   * Every network taken as ready without ever contacting it: only for tests whose networks
   * have no chain behind them.
   */
  static trusted(networks: readonly NetworkConfig[]): NetworkReadiness {
    return new NetworkReadiness(networks, { refreshMs: 0 }, true);
  }

  /** Probes of the boot (main.ts) become the first known state. */
  seed(statuses: readonly NetworkStatus[]): void {
    for (const s of statuses) this.record(s);
  }

  private record(s: NetworkStatus): NetworkStatus {
    const before = this.latest.get(s.chainId);
    if (s.ready && !this.confirmed.has(s.chainId)) {
      this.confirmed.add(s.chainId);
      if (before && !before.ready) this.opts.log?.(`${s.name}: deposit factory found at ${s.factory.address}: the network is ready, sessions are offered on it`);
    }
    if (this.confirmed.has(s.chainId) && !s.ready) s = { ...s, ready: true, notReady: [] };
    // Balances change with every sweep: warn when the relayer becomes low, not on every probe.
    if (s.relayer.low === true && before?.relayer.low !== true) for (const w of s.warnings) this.opts.log?.(`warning: ${w}`);
    if (s.relayer.low === false && before?.relayer.low === true) this.opts.log?.(`${s.name}: relayer balance ${s.relayer.balance} is above ${s.relayer.minBalance} again`);
    this.latest.set(s.chainId, s);
    return s;
  }

  /** Probes one network now (coalesced with a probe already running). */
  probe(chainId: number): Promise<NetworkStatus | undefined> {
    const net = this.networks.find((n) => n.chainId === chainId);
    if (!net) return Promise.resolve(undefined);
    const running = this.inFlight.get(chainId);
    if (running) return running;
    const p = probeNetwork(net, { relayer: this.opts.relayerFor?.(chainId), timeoutMs: this.opts.timeoutMs })
      .then((s) => this.record(s))
      .finally(() => {
        this.inFlight.delete(chainId);
        this.probedAt.set(chainId, Date.now());
      });
    this.inFlight.set(chainId, p);
    return p;
  }

  /** Every network's status, probing those whose last look is older than `maxAgeMs`. */
  async check(maxAgeMs = 0): Promise<NetworkStatus[]> {
    if (this.trusted) return this.current();
    await Promise.all(
      this.networks.map((n) => {
        const last = this.latest.get(n.chainId);
        const age = last ? Date.now() - Date.parse(last.checkedAt) : Infinity;
        return age > maxAgeMs ? this.probe(n.chainId) : undefined;
      }),
    );
    return this.current();
  }

  /** The last known status of every network (no I/O). */
  current(): NetworkStatus[] {
    return this.networks.map((n) => this.latest.get(n.chainId) ?? this.unknown(n));
  }

  private unknown(n: NetworkConfig): NetworkStatus {
    return {
      key: n.key,
      chainId: n.chainId,
      name: n.name,
      environment: n.environment,
      checkedAt: new Date(0).toISOString(),
      ready: this.trusted,
      rpc: { reachable: false, ...(this.trusted ? { error: "not checked (trusted)" } : {}) },
      chainIdSeen: null,
      headBlock: null,
      factory: { address: factoryOf(n), present: null },
      authorizationBatch: { address: predictedAuthorizationBatchAddress(), present: null },
      stablecoin: unknownToken(n.stablecoin),
      stablecoins: n.stablecoins.map(unknownToken),
      relayer: { address: this.opts.relayerFor?.(n.chainId) ?? null, balanceWei: null, balance: null, minBalance: formatEther(relayerMinBalanceWei(n)), low: null },
      fatal: [],
      notReady: this.trusted ? [] : [`${n.name}: not checked yet`],
      warnings: [],
    };
  }

  /**
   * Whether sessions may be offered on this network. A network not known to be ready is
   * probed first (at most every minProbeIntervalMs), so one whose factory was just deployed is
   * offered at once.
   */
  async isReady(chainId: number): Promise<boolean> {
    if (this.trusted) return this.networks.some((n) => n.chainId === chainId);
    if (this.confirmed.has(chainId)) return true;
    const last = this.probedAt.get(chainId);
    if (last === undefined || Date.now() - last >= (this.opts.minProbeIntervalMs ?? 1000) || this.inFlight.has(chainId)) {
      await this.probe(chainId);
    }
    return this.confirmed.has(chainId);
  }

  /** The enabled networks of an environment, and which of them are ready. */
  async partition(environment: Environment): Promise<{ ready: NetworkConfig[]; notReady: NetworkConfig[] }> {
    const nets = this.networks.filter((n) => n.environment === environment);
    const flags = await Promise.all(nets.map((n) => this.isReady(n.chainId)));
    return { ready: nets.filter((_, i) => flags[i]), notReady: nets.filter((_, i) => !flags[i]) };
  }

  /** Re-checks every network every refreshMs (default 30 s) until stop(). */
  start(): void {
    const every = this.opts.refreshMs ?? 30_000;
    if (this.trusted || every <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.check(every / 2).catch(() => {});
    }, every);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** For the boot: every network probed once, in parallel. */
export function probeNetworks(networks: readonly NetworkConfig[], opts: Omit<ProbeOptions, "client" | "relayer"> & { relayerFor?: (chainId: number) => Address | undefined } = {}) {
  return Promise.all(networks.map((n) => probeNetwork(n, { relayer: opts.relayerFor?.(n.chainId), timeoutMs: opts.timeoutMs })));
}
