/**
 * Refund links in the database (app.refund_links; docs/refunds.md, "Refund links"): what the
 * merchant's view shows of a refund's link, what the payer's page shows, and the claim. A link is
 * found by the hash of its id only (refunds/links.ts). The claim is one transaction holding the
 * refund's row — as a cancel, an approval and the relayer's round do (the relayer skips rows held)
 * — so of two claims at once the second sees the first's and changes nothing, and a claim never
 * meets a cancel halfway.
 */
import type { Sql, TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import type { Environment } from "../../../shared/environment.ts";
import type { NetworkConfig } from "../../../shared/chains/config.ts";
import { presetByChainId } from "../../../shared/chains/presets.ts";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { SWEEP_CHANNEL } from "../effects/sweep-queue.ts";
import { refundVaultOn } from "./balances.ts";
import { relayerAddressOn } from "../credentials/relayer.ts";
import { predictedRefundVaultsAddress } from "../../../shared/contracts/refund-vaults.ts";
import { predictedAuthorizationBatchAddress } from "../../../shared/contracts/addresses.ts";
import { REFUND_STATES, type RefundState } from "./logic.ts";
import { checkClaimAddress, claimUrlOf, isLinkId, linkHash, linkStatus, openLinkId, type ClaimAddress, type LinkStatus } from "./links.ts";
import type { RefundRow } from "./rows.ts";
import type { RefundLinkFacts } from "./view.ts";

/** What a link's URL is made of: the key its id is sealed under, and each environment's public base. */
export interface LinkBases {
  encryptionKey: Buffer;
  publicUrl: URL;
  sandboxPublicUrl: URL;
}

const baseOf = (bases: LinkBases, environment: Environment) => (environment === "sandbox" ? bases.sandboxPublicUrl : bases.publicUrl);

const LinkRow = rowShape("refund links", {
  refund_id: col.text,
  link_sealed: col.text,
  expires_at: col.time,
  claimed_at: col.nullable(col.time),
  approved_at: col.nullable(col.time),
  require_approval: col.bool,
});

/**
 * The link's URL, unsealed; null when it was sealed under another encryption key (SERVICE_ENCRYPTION_KEY
 * changed): the link still works for the payer who has it, and the merchant's reads must not fail.
 */
function urlOf(bases: LinkBases, environment: Environment, refundId: string, sealed: string): string | null {
  try {
    return claimUrlOf(baseOf(bases, environment), openLinkId(bases.encryptionKey, refundId, sealed));
  } catch {
    return null;
  }
}

/**
 * The links of `rows` (those that have one), by refund id, as the merchant's view shows them.
 * Without `bases`, each link's facts without its URL: what a stored refund event holds, since the
 * link id is a bearer secret kept only hashed and sealed, never in clear in a row.
 */
export async function linkFactsOf(sql: Sql | TransactionSql, bases: LinkBases | null, rows: readonly RefundRow[]): Promise<Map<string, RefundLinkFacts>> {
  if (rows.length === 0) return new Map();
  const found = decodeRows(
    LinkRow,
    await sql`select refund_id, link_sealed, expires_at, claimed_at, approved_at, require_approval from app.refund_links where refund_id in ${sql(rows.map((r) => r.id))}`,
  );
  const env = new Map(rows.map((r) => [r.id, r.environment]));
  return new Map(
    found.map((l) => [
      l.refund_id,
      {
        claimUrl: bases ? urlOf(bases, env.get(l.refund_id)!, l.refund_id, l.link_sealed) : null,
        expiresAt: l.expires_at,
        claimedAt: l.claimed_at,
        approvedAt: l.approved_at,
        requireApproval: l.require_approval,
      },
    ]),
  );
}

const PagePart = Type.Object({ token: Type.String(), symbol: Type.String(), amount: Type.String(), baseUnits: Type.String(), decimals: Type.Number(), destination: Type.Union([Type.String(), Type.Null()]) });

const PageRow = rowShape("refund link page", {
  refund_id: col.text,
  merchant_id: col.text,
  merchant_name: col.text,
  session_id: col.text,
  environment: col.oneOf(["sandbox", "production"] as const),
  chain_id: col.int,
  amount: col.numeric,
  unit_decimals: col.int,
  currency: col.text,
  parts: col.json(Type.Array(PagePart)),
  state: col.oneOf(REFUND_STATES),
  waiting_reason: col.nullable(col.text),
  expires_at: col.time,
  expired: col.bool,
  claimed_at: col.nullable(col.time),
  claimed_address: col.nullable(col.text),
  require_approval: col.bool,
});

/** What the payer's page shows of a link: who refunds, how much of what, on which network, until when, and what became of it. */
export interface LinkPage {
  refundId: string;
  merchantName: string;
  environment: Environment;
  chainId: number;
  network: string;
  /** In the refund's unit (formatUnitAmount with unitDecimals). */
  amount: bigint;
  unitDecimals: number;
  currency: string;
  tokens: string[];
  state: RefundState;
  waitingReason: string | null;
  status: LinkStatus;
  expiresAt: Date;
  claimedAddress: string | null;
  requireApproval: boolean;
}

const pageSelect = (sql: Sql | TransactionSql, hash: string, lock: boolean) => sql`
  select r.id as refund_id, r.merchant_id, m.name as merchant_name, r.session_id, r.environment, r.chain_id, r.amount::text as amount, r.unit_decimals,
         r.currency, r.parts, r.state, r.waiting_reason, l.expires_at, l.expires_at <= now() as expired, l.claimed_at, l.claimed_address, l.require_approval
    from app.refund_links l join app.refunds r on r.id = l.refund_id join app.merchants m on m.id = r.merchant_id
   where l.link_hash = ${hash}
   ${lock ? sql`for update of l, r` : sql``}`;

function pageOf(row: RowOf<typeof PageRow>): LinkPage {
  return {
    refundId: row.refund_id,
    merchantName: row.merchant_name,
    environment: row.environment,
    chainId: row.chain_id,
    network: presetByChainId(row.chain_id)?.name ?? `chain ${row.chain_id}`,
    amount: BigInt(row.amount),
    unitDecimals: row.unit_decimals,
    currency: row.currency,
    tokens: row.parts.map((p) => p.symbol),
    state: row.state,
    waitingReason: row.waiting_reason,
    status: linkStatus({ state: row.state, claimed: row.claimed_at !== null, expired: row.expired }),
    expiresAt: row.expires_at,
    claimedAddress: row.claimed_address,
    requireApproval: row.require_approval,
  };
}

/** The page of link `id`; undefined for an id of the wrong shape or one no refund has (a guess). */
export async function linkPageOf(sql: Sql, id: string): Promise<LinkPage | undefined> {
  if (!isLinkId(id)) return undefined;
  const row = decodeFirst(PageRow, await pageSelect(sql, linkHash(id), false));
  return row && pageOf(row);
}

/**
 * The network's addresses that are no wallet: every stablecoin it watches (accepted or not) and the
 * service's contracts — the deposit factory, RefundVaults (its address follows the relayer's),
 * AuthorizationBatch.
 */
function serviceContractsOn(net: NetworkConfig, relayerKey: `0x${string}` | undefined): string[] {
  const relayer = relayerAddressOn(net, relayerKey);
  return [
    ...net.stablecoins.map((c) => c.address),
    ...(net.strayStablecoins ?? []),
    ...(net.factory ? [net.factory] : []),
    ...(relayer ? [predictedRefundVaultsAddress(relayer)] : []),
    predictedAuthorizationBatchAddress(),
  ];
}

/** Where the vault is: the networks and the relayer key (its address is the operator's; balances.ts). */
export interface ClaimDeps {
  networks: readonly NetworkConfig[];
  relayerKey: `0x${string}` | undefined;
}

export type ClaimOutcome =
  | { ok: true; page: LinkPage }
  | { ok: false; problem: "not_found" }
  | { ok: false; problem: "not_open"; page: LinkPage }
  | { ok: false; problem: Exclude<ClaimAddress, { ok: true }>["problem"]; page: LinkPage };

const Deposit = rowShape("a refunded session's deposit addresses", { address: col.text });

/**
 * Claims link `id` for `addressText`: every part of its refund gets that destination, and the
 * refund is due (or waits awaiting_approval). Nothing is written unless the link is open and the
 * address one a refund may go to.
 */
export async function claimRefundLink(sql: Sql, id: string, addressText: string, deps: ClaimDeps): Promise<ClaimOutcome> {
  if (!isLinkId(id)) return { ok: false, problem: "not_found" };
  return sql.begin(async (tx) => {
    const row = decodeFirst(PageRow, await pageSelect(tx, linkHash(id), true));
    if (!row) return { ok: false, problem: "not_found" } as const;
    const page = pageOf(row);
    if (page.status !== "open") return { ok: false, problem: "not_open", page } as const;
    const net = deps.networks.find((n) => n.chainId === row.chain_id);
    const deposits = decodeRows(Deposit, await tx`select address from app.session_deposits where session_id = ${row.session_id}`);
    const checked = checkClaimAddress(addressText, {
      vault: net ? (refundVaultOn(net, deps.relayerKey, row.merchant_id, row.environment) ?? null) : null,
      tokens: row.parts.map((p) => p.token),
      deposits: deposits.map((d) => d.address),
      contracts: net ? serviceContractsOn(net, deps.relayerKey) : [],
    });
    if (!checked.ok) return { ok: false, problem: checked.problem, page } as const;
    // Any other session's deposit address (this service's or another merchant's): money sent there
    // would pay that session, never the payer.
    if ((await tx`select 1 from app.session_deposits where address = ${checked.address} and chain_id = ${row.chain_id} limit 1`).length > 0) {
      return { ok: false, problem: "contract", page } as const;
    }
    const parts = row.parts.map((p) => ({ ...p, destination: checked.address }));
    const waiting = row.require_approval ? "awaiting_approval" : null;
    await tx`update app.refund_links set claimed_at = now(), claimed_address = ${checked.address} where refund_id = ${row.refund_id}`;
    await tx`
      update app.refunds set parts = ${JSON.stringify(parts)}::jsonb, waiting_reason = ${waiting}, next_attempt_at = now(), updated_at = now()
       where id = ${row.refund_id}`;
    if (!waiting) await tx`select pg_notify(${SWEEP_CHANNEL}, '')`;
    return { ok: true, page: { ...page, status: "claimed", claimedAddress: checked.address, waitingReason: waiting } } as const;
  });
}
