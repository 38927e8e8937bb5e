/**
 * Ponder's command line, run in this process, which exits as soon as the process that started it
 * is gone (process.ts spawns this instead of Ponder's bin). Ponder keeps running when its parent
 * is killed outright (SIGKILL, the OOM killer): an orphan still writing the index while the lease
 * passes to another node (api/src/nodes/indexer-seat.ts) would make two writers of one schema.
 * Reparented means orphaned: we look four times a second.
 */
import { resolve } from "node:path";

const PONDER_BIN = resolve(import.meta.dir, "../node_modules/ponder/dist/esm/bin/ponder.js");
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(70);
}, 250).unref();

// Ponder's bin reads its arguments from process.argv as if it were the script.
process.argv = [process.argv[0]!, PONDER_BIN, ...process.argv.slice(2)];
await import(PONDER_BIN);
