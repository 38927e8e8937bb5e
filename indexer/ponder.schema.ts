export * from "../ponder.schema.ts";
