/**
 * Paying by EIP-3009 authorization, the chain's part: the token's EIP-712 domain, read from
 * the token itself, and the checks an authorization must pass on the chain before it is
 * recorded — its nonce unused, the payer's balance enough, and the exact transaction the
 * relayer would send succeeding in a simulation (an estimate: nothing is sent, no gas is spent)
 * within one submission's gas budget (submission.ts gasRefusal).
 *
 * The domain is cached in this process per RPC, network and token: it is derived from the
 * token's code and address (a restart reads it again). A token without EIP-3009 is
 * remembered for a while; an RPC that did not answer only briefly, so it is asked again soon.
 *
 * Also whether the relayer can submit one now (the fee within the network's ceiling, its
 * balance enough for one submission): read at most every CAPACITY_FOR_MS per network, since
 * every payer view asks.
 */
import {
  ContractFunctionRevertedError,
  ContractFunctionZeroDataError,
  domainSeparator,
  zeroAddress,
  zeroHash,
  type Address,
  type PublicClient,
} from "viem";
import { gaslessMaxFeeWei, type NetworkConfig } from "../../../shared/chains/config.ts";
import { publicClientFor } from "../../../shared/chains/check.ts";
import { eip3009Abi } from "../../../shared/contracts/eip3009.ts";
import { readMarketFees } from "../../../shared/chains/fees.ts";
import type { AuthorizationTerms, SubmittedAuthorization, TokenDomain } from "./authorization.ts";
import { capacity, gasRefusal, SUBMISSION_GAS_BUDGET, type Capacity } from "./submission.ts";
import { findInChain } from "../../../shared/error-chain.ts";

/** A token on a network: the session's (its deposit row names the token it asks for). */
export interface TokenOnNetwork {
  chainId: NetworkConfig["chainId"];
  rpcUrl: NetworkConfig["rpcUrl"];
  token: Address;
}

export type DomainRead =
  | { ok: true; domain: TokenDomain }
  /** unsupported: the token has no EIP-3009 (or its domain does not add up); unreachable: the RPC did not answer. */
  | { ok: false; reason: "unsupported" | "unreachable"; detail: string };

/** How long a failed read is remembered before the token is asked again. */
const UNSUPPORTED_FOR_MS = 10 * 60_000;
const UNREACHABLE_FOR_MS = 15_000;
/** Each RPC request gives up after this, unretried: the payer view waits on the domain read. */
const RPC_TIMEOUT_MS = 3_000;

const clients = new Map<string, PublicClient>();
function clientFor(net: TokenOnNetwork): PublicClient {
  let c = clients.get(net.rpcUrl);
  if (!c) {
    c = publicClientFor(net, { timeoutMs: RPC_TIMEOUT_MS, retryCount: 0 });
    clients.set(net.rpcUrl, c);
  }
  return c;
}

const domains = new Map<string, { read: DomainRead; until: number }>();
const inFlight = new Map<string, Promise<DomainRead>>();

/** The token's domain (name(), version(), the chain's id, its address), checked against its DOMAIN_SEPARATOR(). */
export function tokenDomain(net: TokenOnNetwork, now = Date.now()): Promise<DomainRead> {
  const key = `${net.rpcUrl}|${net.chainId}|${net.token.toLowerCase()}`;
  const cached = domains.get(key);
  if (cached && cached.until > now) return Promise.resolve(cached.read);
  let pending = inFlight.get(key);
  if (!pending) {
    pending = readDomain(clientFor(net), net).then((read) => {
      const ttl = read.ok ? Number.POSITIVE_INFINITY : read.reason === "unsupported" ? UNSUPPORTED_FOR_MS : UNREACHABLE_FOR_MS;
      domains.set(key, { read, until: Date.now() + ttl });
      inFlight.delete(key);
      return read;
    });
    inFlight.set(key, pending);
  }
  return pending;
}

async function readDomain(client: PublicClient, net: TokenOnNetwork): Promise<DomainRead> {
  const token = net.token;
  const call = <F extends "name" | "version" | "DOMAIN_SEPARATOR">(functionName: F) => client.readContract({ address: token, abi: eip3009Abi, functionName });
  try {
    const [chainId, name, version, separator] = await Promise.all([
      client.getChainId(),
      call("name"),
      call("version"),
      call("DOMAIN_SEPARATOR"),
      // EIP-3009 itself, not only EIP-712 (an EIP-2612 token has a domain too).
      client.readContract({ address: token, abi: eip3009Abi, functionName: "authorizationState", args: [zeroAddress, zeroHash] }),
    ]);
    if (chainId !== net.chainId) return { ok: false, reason: "unsupported", detail: `the RPC serves chain ${chainId}, not ${net.chainId}` };
    const domain: TokenDomain = { name, version, chainId, verifyingContract: token };
    if (domainSeparator({ domain }) !== separator) {
      return { ok: false, reason: "unsupported", detail: "the token's DOMAIN_SEPARATOR() is not the EIP-712 hash of its name, version, chain id and address" };
    }
    return { ok: true, domain };
  } catch (err) {
    if (isRevert(err)) return { ok: false, reason: "unsupported", detail: "the token has no EIP-3009 (a call reverted or returned nothing)" };
    return { ok: false, reason: "unreachable", detail: "the network's RPC did not answer" };
  }
}

export type ChainVerdict =
  | { ok: true }
  | { ok: false; reason: "nonce_used" | "insufficient_balance" | "signature_invalid" | "rejected"; detail: string };

/**
 * The chain's checks of an authorization whose terms already match the session's, in the
 * order a refusal is most useful to the payer. `relayer`: the account the simulation sends
 * from (the one that will submit it; anyone may). Throws when the RPC does not answer.
 *
 * `simulation`: "estimate" (what a record is held to: the relayer's gas estimate, within one
 * submission's budget) or "call" (a plain eth_call of the same transaction, sent beside the two
 * reads rather than after them — an x402 verify, on a resource server's request path, where the
 * estimate's repeated executions cost milliseconds; its settle asks for the estimate).
 */
export async function chainChecks(
  net: TokenOnNetwork,
  terms: AuthorizationTerms,
  sub: SubmittedAuthorization,
  relayer: Address | undefined,
  simulation: "estimate" | "call" = "estimate",
): Promise<ChainVerdict> {
  const client = clientFor(net);
  const token = net.token;
  const call = {
    account: relayer ?? zeroAddress,
    address: token,
    abi: eip3009Abi,
    functionName: "transferWithAuthorization",
    args: [sub.from, terms.to, terms.value, terms.validAfter, terms.validBefore, terms.nonce, sub.signature],
  } as const;
  // A plain call's outcome, caught, so that the reads' refusals still come first.
  const early = simulation === "call" ? client.simulateContract(call).then(() => undefined, (err: unknown) => err ?? new Error("simulation failed")) : undefined;
  const [used, balance] = await Promise.all([
    client.readContract({ address: token, abi: eip3009Abi, functionName: "authorizationState", args: [sub.from, terms.nonce] }),
    client.readContract({ address: token, abi: eip3009Abi, functionName: "balanceOf", args: [sub.from] }),
  ]);
  if (used) return { ok: false, reason: "nonce_used", detail: "The payer has already used or canceled this session's nonce on this token." };
  if (balance < terms.value) {
    return { ok: false, reason: "insufficient_balance", detail: `The payer holds ${balance} base units of the token; the session needs ${terms.value}.` };
  }
  try {
    if (early) {
      const err = await early;
      if (err) throw err;
      return { ok: true };
    }
    // An estimate rather than a bare eth_call: the same simulation, and what it would cost the relayer.
    const gas = await client.estimateContractGas(call);
    const tooDear = gasRefusal(gas);
    return tooDear ? { ok: false, reason: "rejected", detail: tooDear.detail } : { ok: true };
  } catch (err) {
    if (!isRevert(err)) throw err;
    const reason = revertReason(err) ?? "";
    if (/invalid signature/i.test(reason)) return { ok: false, reason: "signature_invalid", detail: "The token does not accept the signature as the payer's." };
    if (/used or canceled/i.test(reason)) return { ok: false, reason: "nonce_used", detail: "The payer has already used or canceled this session's nonce on this token." };
    return { ok: false, reason: "rejected", detail: `The token refused the transfer in a simulation${reason ? `: ${reason}` : ""}.` };
  }
}

/** Whether the payer is a contract (a smart wallet signs by EIP-1271, which only the token can check). */
export async function hasCode(net: TokenOnNetwork, address: Address): Promise<boolean> {
  const code = await clientFor(net).getCode({ address });
  return code !== undefined && code !== "0x";
}

function isRevert(err: unknown): boolean {
  return findInChain(err, (e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError) !== undefined;
}

function revertReason(err: unknown): string | undefined {
  const reverted = findInChain(err, (e): e is ContractFunctionRevertedError => e instanceof ContractFunctionRevertedError);
  return reverted ? (reverted.reason ?? reverted.data?.errorName) : undefined;
}

/** How long the relayer's capacity is reused: fees and balances move with every block. */
const CAPACITY_FOR_MS = 2_000;
const capacities = new Map<string, { read: Promise<Capacity>; until: number }>();

/**
 * Whether the relayer could submit an authorization on this network now (submission.ts
 * capacity, for one submission's gas budget). An RPC that does not answer: not now.
 */
export function relayerCapacity(
  net: Pick<NetworkConfig, "chainId" | "rpcUrl" | "key" | "gaslessMaxFeeWei">,
  relayer: Address,
  now = Date.now(),
): Promise<Capacity> {
  const key = `${net.rpcUrl}|${net.chainId}|${relayer.toLowerCase()}`;
  const cached = capacities.get(key);
  if (cached && cached.until > now) return cached.read;
  const client = clientFor({ chainId: net.chainId, rpcUrl: net.rpcUrl, token: zeroAddress });
  const read = Promise.all([readMarketFees(client), client.getBalance({ address: relayer })]).then(
    ([fees, balance]) => capacity(fees.maxFeePerGas, gaslessMaxFeeWei(net), balance, SUBMISSION_GAS_BUDGET),
    (): Capacity => ({ ok: false, reason: "unreachable", detail: "the network's RPC did not answer" }),
  );
  capacities.set(key, { read, until: now + CAPACITY_FOR_MS });
  return read;
}
