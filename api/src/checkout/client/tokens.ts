/**
 * Which stablecoin the payer pays in, where a network accepts several (the payer view's
 * `networks[].tokens`: the main one first, each with the amount in its own base units, all at
 * par). Pure: the page keeps the choice and the balances, these decide from them.
 */

/** One accepted stablecoin of a network, as the payer view gives it. */
export interface TokenOption {
  tokenAddress: string;
  tokenSymbol: string;
  decimals: number;
  amountBaseUnits: string;
}

/** Addresses come checksummed from the API and lowercase from elsewhere: compared without case. */
export const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * The token paid in on a network: the chosen one when the network accepts it, else the main one
 * (a choice made on another network does not carry over). A view without `tokens` has the main
 * one only — the network's own fields.
 */
export function chosenToken(n: TokenOption & { tokens?: readonly TokenOption[] }, chosen: string | undefined): TokenOption {
  const tokens = n.tokens ?? [];
  return (chosen !== undefined ? tokens.find((t) => sameAddress(t.tokenAddress, chosen)) : undefined) ?? tokens[0] ?? n;
}

/**
 * The gasless offer (pay by one signature) is an EIP-3009 authorization of one token — the
 * offer's verifying contract, the network's main one. Any other token is paid by a transfer.
 */
export function signsFor(n: { gasless: { domain: { verifyingContract: string } } | null }, t: TokenOption): boolean {
  return !!n.gasless && sameAddress(n.gasless.domain.verifyingContract, t.tokenAddress);
}

/**
 * Another accepted token the wallet holds enough of to pay the whole amount (its balance known),
 * in the network's order: the way on when the chosen one falls short, e.g. a payer who holds only USDT.
 */
export function coveringToken(tokens: readonly TokenOption[], chosen: TokenOption, balanceOf: (t: TokenOption) => bigint | undefined): TokenOption | undefined {
  return tokens.find((t) => {
    if (sameAddress(t.tokenAddress, chosen.tokenAddress)) return false;
    const held = balanceOf(t);
    return held !== undefined && held >= BigInt(t.amountBaseUnits);
  });
}
