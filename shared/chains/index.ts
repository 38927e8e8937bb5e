export * from "./presets.ts";
export * from "./config.ts";
export * from "./check.ts";
