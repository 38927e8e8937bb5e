// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev What the sweeper asks its creator (always the DepositFactory) for.
interface ISweepTokenList {
    function sweepTokens() external view returns (address[] memory);
}

/// @title DepositSweeper — lives for one constructor call at a deposit address.
/// @notice Created by DepositFactory with CREATE2 at `deposit = f(factory, sessionSalt,
/// keccak256(creationCode ++ settlement))`. Its constructor moves the whole balance of every
/// listed token to `settlement`, then SELFDESTRUCTs to `settlement`, which hands over any
/// native coin and — because the account was created in this same transaction (EIP-6780) —
/// deletes it, so the address is empty again and can be swept again after a later payment.
/// It has no runtime code, no owner and no initializer: the only place funds can ever go is
/// the `settlement` baked into its init code, and hence into its address.
contract DepositSweeper {
    constructor(address settlement) {
        // The token list comes from the factory's transient storage (set just before CREATE2).
        // It is not part of the init code, so it does not change the deposit address; and it
        // cannot redirect anything, since every transfer below goes to `settlement`.
        address[] memory tokens = ISweepTokenList(msg.sender).sweepTokens();
        for (uint256 i; i < tokens.length; ++i) {
            _sweepToken(tokens[i], settlement);
        }
        selfdestruct(payable(settlement));
    }

    /// @dev Transfers this address's full balance of `token` to `to`; reverts (making the
    /// factory's CREATE2 return 0) if the token does not answer balanceOf or refuses the
    /// transfer. Accepts tokens that return `true` and tokens that return nothing (USDT-style).
    function _sweepToken(address token, address to) private {
        assembly ("memory-safe") {
            mstore(0x00, 0x70a08231) // balanceOf(address)
            mstore(0x20, address())
            let ok := staticcall(gas(), token, 0x1c, 0x24, 0x00, 0x20)
            // Require a 32-byte answer: an address without code would otherwise read as 0.
            if iszero(and(ok, gt(returndatasize(), 0x1f))) { revert(0, 0) }
            let amount := mload(0x00)
            if amount {
                // Build the call past the free-memory pointer (memory nobody owns yet).
                let m := mload(0x40)
                mstore(m, 0xa9059cbb) // transfer(address,uint256)
                mstore(add(m, 0x20), to)
                mstore(add(m, 0x40), amount)
                ok := call(gas(), token, 0, add(m, 0x1c), 0x44, 0x00, 0x20)
                let returnedTrue := and(gt(returndatasize(), 0x1f), eq(mload(0x00), 1))
                if iszero(and(ok, or(returnedTrue, iszero(returndatasize())))) { revert(0, 0) }
            }
        }
    }
}
