// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice The EIP-3009 call every USDC version (and our TestUSD) has: the v, r, s form.
interface IERC3009 {
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// @title AuthorizationBatch — many EIP-3009 authorizations of one token in one transaction.
/// @notice The 21,000 gas every transaction starts with is paid once for the batch instead of once
/// per payment. Callable by anyone: it holds nothing and moves nothing of its own — each transfer
/// is its signer's authorization, carried out by the token. One that reverts (used already, by a
/// stranger who submitted it first; expired; the token refusing) emits AuthorizationFailed and
/// the others go on.
contract AuthorizationBatch {
    struct Authorization {
        address from;
        address to;
        uint256 value;
        uint256 validAfter;
        uint256 validBefore;
        bytes32 nonce;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    event AuthorizationFailed(address indexed from, bytes32 indexed nonce);

    function submit(IERC3009 token, Authorization[] calldata authorizations) external {
        for (uint256 i; i < authorizations.length; ++i) {
            Authorization calldata a = authorizations[i];
            try token.transferWithAuthorization(a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, a.v, a.r, a.s) {}
            catch {
                emit AuthorizationFailed(a.from, a.nonce);
            }
        }
    }
}
