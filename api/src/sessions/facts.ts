/**
 * The facts a session step works from, as plain values: transfers into its deposit addresses,
 * its payments by authorization, its networks, the money that left for settlement, its sweep rounds. Shared by the pure state
 * machine (decide.ts) and the pure money modules (movements.ts, money-plan.ts); the actor reads them from the
 * database (actor.ts, indexed.ts).
 */

export interface Transfer {
  chainId: number;
  txHash: string;
  logIndex: number;
  /** In the session's unit on the network (session_deposits.decimals): every accepted stablecoin at par. */
  value: bigint;
  blockTimestamp: Date;
  /** head − block + 1; 0 when not yet in a block the indexer has seen. */
  confirmations: number;
  /** The sender, lowercase (for a payment: the payer's address as the chain shows it); absent where not read. */
  from?: string;
  /** The stablecoin that moved, lowercase; absent where not read. `value` is in the session's unit on the network, whatever the token. */
  token?: string;
  /** Absent: a transfer into the deposit address. */
  method?: PaymentMethod;
}

/** How a payment was made: a transfer into the deposit address, or the payer's signed EIP-3009 authorization. */
export type PaymentMethod = "transfer" | "authorization";

/**
 * A payment by the payer's signed EIP-3009 authorization, carrying the session's nonce
 * (indexer.authorized_transfers), to the session's settlement address: the token moved it from
 * `from` straight there in one transaction — received and settled at once, nothing at the
 * deposit address to sweep. Whoever submitted the transaction (our relayer or a stranger).
 */
export interface AuthorizedPayment extends Transfer {
  from: string;
  method: "authorization";
}

export interface Network {
  chainId: number;
  /** The session amount in this network's token base units. */
  requiredBaseUnits: bigint;
  confirmationsRequired: number;
  /** Below this, extra funds (late, partial, a second payment) wait at the deposit; 0: no minimum. */
  minSweepBaseUnits?: bigint;
}

/**
 * Money that left a deposit for its settlement address, confirmed at the network's depth:
 * seen by the indexer (`Transfer(deposit → settlement)`, whoever sent the transaction).
 */
export interface Outflow {
  chainId: number;
  txHash: string;
  amount: bigint;
}

/** One sweep round of the session (a row of app.sweeps), as decide needs it. */
export interface SweepRound {
  chainId: number;
  state: "queued" | "sending" | "confirmed" | "failed";
  /** Base units the round was asked to move. */
  amount: bigint;
  /** Confirmed rounds: what the receipt shows moved to the settlement address (0: the deposit was empty). */
  swept?: bigint;
  /** Confirmed rounds: the transaction that moved it (none when the deposit was found empty). */
  txHash?: string;
  attempts: number;
  error?: string;
}
