/**
 * The states a sweep and a sweep transaction go through, as stored (db/schema.ts): the lists
 * rows are decoded against (db/rows.ts col.oneOf), so a state the code does not know fails at
 * the statement that reads it.
 */

/** app.sweeps: queued → sending → confirmed | failed (queued again between failed attempts). */
export const SWEEP_STATES = ["queued", "sending", "confirmed", "failed"] as const;
export type SweepState = (typeof SWEEP_STATES)[number];

/** app.sweep_transactions: signed → sent → mined | failed; dropped when the chain lost it (reconcile.ts). */
export const SWEEP_TRANSACTION_STATES = ["signed", "sent", "mined", "failed", "dropped"] as const;
export type SweepTransactionState = (typeof SWEEP_TRANSACTION_STATES)[number];
