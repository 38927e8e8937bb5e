import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { ARTIFACTS_PATH, compileContracts, renderArtifacts } from "./compile.ts";
import { predictedAuthorizationBatchAddress, predictedFactoryAddress, predictedTestUsdtAddress, predictedTokenAddress } from "./addresses.ts";

describe("committed artifacts", () => {
  test(
    "artifacts.ts is exactly what compile.ts produces from src/ (run `bun shared/contracts/compile.ts` if not)",
    () => {
      const { contracts } = compileContracts();
      const fresh = renderArtifacts(contracts);
      const committed = readFileSync(ARTIFACTS_PATH, "utf8");
      // Compare contract by contract first, for a readable failure.
      for (const c of contracts) {
        expect(committed).toContain(`export const ${c.id}Bytecode = "${c.bytecode}" as const;`);
      }
      expect(committed).toBe(fresh);
    },
    60_000,
  );

  test("the deterministic addresses have not moved", () => {
    // Any change to the token's or the factory's bytecode moves these addresses, and a change to
    // the sweeper's bytecode moves EVERY deposit address (funds sent to old ones would then need
    // the old factory). If that is intended, update these and the docs that
    // show them (README.md, docs/going-live.md, shared/contracts/README.md).
    expect(predictedTokenAddress()).toBe("0xe2b4152e3b6Cc732B52DF67F42b2cBDbaEe385a5");
    expect(predictedFactoryAddress()).toBe("0xCFaA1c54e32bBF6Fb9E34312524c74607F1799f6");
    expect(predictedAuthorizationBatchAddress()).toBe("0x85e22Ff4406070b7c7919c260402dbDB3D882B86");
    expect(predictedTestUsdtAddress()).toBe("0xb18f89E5E0ECA73D3da7a8E327F5EAd35955a8f9");
  });
});
