/**
 * The sandbox tools, whichever door uses them: the API's sandbox routes (http/sandbox.ts, sandbox
 * keys only) and the buttons on a sandbox payment's dashboard page call these same functions.
 * They drive a sandbox session through its lifecycle with real on-chain transfers on the test
 * network; each throws the catalogue's ApiError when it does not apply.
 */
import { getAddress, type Address, type Hash } from "viem";
import { ApiError } from "../errors.ts";
import { isId } from "../../../shared/ids.ts";
import { parseAmount, minorToBaseUnits } from "../../../shared/money.ts";
import { SESSION_STATUSES } from "../../../shared/status.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import type { Config } from "../config.ts";
import type { Database } from "../db/client.ts";
import { publicMerchantId, type Merchant } from "../credentials/store.ts";
import { decodeFirst, rowShape, col } from "../db/rows.ts";
import { hasFaucet, type Faucet } from "../sandbox/faucet.ts";
import { addressParam } from "./address-param.ts";
import { stepSession } from "./actor.ts";
import { depositsOfSession, findSession, loadMerchantView } from "./repository.ts";
import type { MerchantSessionView, SessionRow } from "./views.ts";

/** The parts of the process the tools use (the HTTP layer's Services has them). */
export interface SandboxServices {
  database: Pick<Database, "db" | "sql">;
  networks: NetworkConfig[];
  faucet: Pick<Faucet, "mint" | "pay">;
  config: Pick<Config, "requestTimeoutMs" | "sweeps">;
}

/** A mined transfer from the faucet. */
export interface SandboxTransfer {
  chainId: number;
  txHash: Hash;
  amountBaseUnits: string;
}

export interface FaucetInput {
  address: string;
  /** Default "100.00". */
  amount?: string;
  chainId?: number;
}

export interface PayInput {
  /** Default: the session's amount. */
  amount?: string;
  chainId?: number;
}

/** How long `expire` waits for the expiry to be decided before it answers with the session as it is. */
const EXPIRE_WAIT_MS = 10_000;

async function ownSession(services: SandboxServices, merchant: Merchant, id: string): Promise<SessionRow> {
  const row = isId("paymentSession", id) ? await findSession(services.database.db, merchant.id, "sandbox", id) : undefined;
  if (!row) throw new ApiError("resource_not_found", `No payment session ${JSON.stringify(id.slice(0, 64))} in this account's sandbox.`, "id");
  return row;
}

/** The sandbox network a tool works on: the one asked for among `allowed`, else the first with a faucet (refunds/sandbox-fund.ts uses it too). */
export function faucetNetwork(services: SandboxServices, chainId: number | undefined, allowed: (n: NetworkConfig) => boolean): NetworkConfig {
  // No sandbox network at all (e.g. `bun run start` with production networks only): the same
  // answer as a session create, not a complaint about chainId.
  if (!services.networks.some((n) => n.environment === "sandbox")) {
    throw new ApiError("network_unavailable", "No network is enabled for sandbox on this server.");
  }
  const candidates = services.networks.filter((n) => n.environment === "sandbox" && allowed(n));
  const net = chainId === undefined ? candidates.find(hasFaucet) ?? candidates[0] : candidates.find((n) => n.chainId === chainId);
  if (!net) throw new ApiError("parameter_invalid", `chainId must be one of: ${candidates.map((n) => n.chainId).join(", ") || "none"}.`, "chainId");
  if (!hasFaucet(net)) throw new ApiError("faucet_unavailable", `${net.name} has no faucet here: its test stablecoin is not ours to mint.`, "chainId");
  return net;
}

/** "x.yy" (or the fallback when absent) in base units of `decimals`; a bad amount is `amount_invalid`. */
export function baseUnits(amount: string | undefined, decimals: number, fallback: bigint): bigint {
  if (amount === undefined) return fallback;
  const p = parseAmount(amount);
  if (!p.ok) throw new ApiError("amount_invalid", undefined, "amount");
  return minorToBaseUnits(p.minor, decimals);
}

/** The session as it is now (loadMerchantView reads the row afresh). */
function view(services: SandboxServices, merchant: Merchant, row: SessionRow): Promise<MerchantSessionView> {
  return loadMerchantView(services.database.db, row, publicMerchantId(merchant, "sandbox"));
}

/** TestUSD minted to any address on a sandbox network with a faucet (default: the local test network). */
export async function mintFromFaucet(services: SandboxServices, input: FaucetInput): Promise<SandboxTransfer> {
  const to = addressParam(input.address, "address");
  const net = faucetNetwork(services, input.chainId, () => true);
  const amount = baseUnits(input.amount ?? "100.00", net.stablecoin.decimals, 0n);
  const txHash = await services.faucet.mint(net, to, amount);
  return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString() };
}

/** A real on-chain transfer from the faucet to the session's deposit address; the session then moves on by itself. */
export async function paySandboxSession(services: SandboxServices, merchant: Merchant, id: string, input: PayInput = {}): Promise<SandboxTransfer> {
  const row = await ownSession(services, merchant, id);
  const deposits = await depositsOfSession(services.database.db, row.id);
  const net = faucetNetwork(services, input.chainId, (n) => deposits.some((d) => d.chainId === n.chainId));
  const deposit = deposits.find((d) => d.chainId === net.chainId)!;
  const amount = baseUnits(input.amount, deposit.decimals, BigInt(deposit.requiredBaseUnits));
  const txHash = await services.faucet.pay(net, getAddress(deposit.address) as Address, amount);
  return { chainId: net.chainId, txHash, amountBaseUnits: amount.toString() };
}

const Armed = rowShape("sandbox fail-next-sweep arm", { id: col.text });
const Status = rowShape("sandbox session status", { status: col.oneOf(SESSION_STATUSES) });

/** The session's next sweep fails past its retries; only a PENDING or FUNDED session has one (else 409 `session_finished`). */
export async function failNextSweep(services: SandboxServices, merchant: Merchant, id: string): Promise<{ paymentSessionId: string; failNextSweep: true }> {
  const row = await ownSession(services, merchant, id);
  const sql = services.database.sql;
  // Only a session that can still be swept for its payment: arming a finished one would
  // fail the sweep of a late payment instead (paid_after_cancel), which is not what was asked.
  const armed = decodeFirst(Armed, await sql`update app.payment_sessions set force_sweep_failure = true where id = ${row.id} and status in ('PENDING', 'FUNDED') returning id`);
  if (!armed) {
    const now = decodeFirst(Status, await sql`select status from app.payment_sessions where id = ${row.id}`);
    throw new ApiError("session_finished", `The payment session is ${now?.status ?? row.status}; only a PENDING or FUNDED session has a sweep to fail.`);
  }
  return { paymentSessionId: row.id, failNextSweep: true };
}

/**
 * A PENDING session expires now. The expiry is decided once the indexer has stored a block
 * stamped after it (an on-time payment may still be in the newest block): this answers when it
 * is, or after EXPIRE_WAIT_MS, within the request's own deadline (SERVICE_REQUEST_TIMEOUT_MS)
 * with a second to answer — a wait past it would turn the answer into a 503.
 */
export async function expireSandboxSession(services: SandboxServices, merchant: Merchant, id: string): Promise<MerchantSessionView> {
  const row = await ownSession(services, merchant, id);
  await services.database.sql`update app.payment_sessions set expires_at = least(expires_at, now()) where id = ${row.id} and status = 'PENDING'`;
  const until = Date.now() + Math.max(0, Math.min(EXPIRE_WAIT_MS, services.config.requestTimeoutMs - 1000));
  for (;;) {
    const r = await stepSession(services.database.sql, row.id, {}, { networks: services.networks });
    if (!r.found || r.status !== "PENDING" || Date.now() >= until) break;
    await Bun.sleep(100);
  }
  return view(services, merchant, row);
}

/** A PENDING session goes to ERROR (`simulated`), with its webhook; else 409 `session_not_pending`. */
export async function simulateSandboxError(services: SandboxServices, merchant: Merchant, id: string): Promise<MerchantSessionView> {
  const row = await ownSession(services, merchant, id);
  const r = await stepSession(services.database.sql, row.id, { simulateError: true }, { networks: services.networks });
  if (r.decision?.transition?.reason !== "simulated") {
    throw new ApiError("session_not_pending", `The payment session is ${r.status}; only a PENDING session can be sent to ERROR.`);
  }
  return view(services, merchant, row);
}
