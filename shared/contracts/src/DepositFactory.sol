// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {DepositSweeper} from "./DepositSweeper.sol";

/// @title DepositFactory — one-time deposit addresses that can only pay their settlement address.
///
/// A session's deposit address is the CREATE2 address
///     keccak256(0xff ++ factory ++ sessionSalt ++ keccak256(DepositSweeper.creationCode ++ abi.encode(settlement)))[12:]
/// so the address itself commits to the settlement address: nobody holds a key for it, and
/// the only code that can ever run there is a DepositSweeper paying that settlement.
///
/// Design choice — an ephemeral sweeper rather than a wallet clone per deposit:
/// a sweep CREATE2s the sweeper at the deposit address; its constructor transfers the full
/// balances to settlement and SELFDESTRUCTs (EIP-6780 still deletes an account created in the
/// same transaction). Nothing stays deployed, so there is no code-deposit cost (~200 gas/byte),
/// no initializer to front-run, no proxy/DELEGATECALL hop, and the same address can be swept
/// again after a later payment. The price is one CREATE (32,000 gas) per sweep, which a
/// one-time deposit address pays once anyway; a clone also pays it, plus its code deposit, on
/// the first sweep. Measured against a plain ERC-20 transfer (34.5k): this design 78.6k alone
/// (2.28x) and 46.9k per deposit in a batch of 20 (1.36x); an OZ clone with the settlement in
/// immutable args, deployed on first sweep, 88.9k (2.58x) and 58.7k (1.70x). Details in
/// shared/contracts/README.md.
/// Requires Cancun (EIP-1153 transient storage, EIP-6780 SELFDESTRUCT).
///
/// Anyone may call `sweep`/`sweepBatch`: the caller picks only which deposits and which tokens,
/// never where the funds go.
contract DepositFactory {
    struct Deposit {
        address settlement;
        bytes32 salt;
    }

    /// A deposit whose sweep reverted (e.g. a token refused the transfer, or the same deposit
    /// appeared twice in one batch). The rest of the batch still goes through; funds stay put.
    event SweepFailed(address indexed settlement, bytes32 indexed salt);

    error ZeroSettlement();
    error Reentered();

    // Transient storage layout (this contract uses transient storage for nothing else):
    // slot 0 = lock, slot 1 = number of tokens to sweep, slots 2..n+1 = the token addresses.

    /// No sweep may start inside another: a hostile token in the list (say, an airdropped
    /// scam token being "recovered") could otherwise swap the token list for the rest of a batch.
    modifier locked() {
        uint256 busy;
        assembly {
            busy := tload(0)
        }
        if (busy != 0) revert Reentered();
        assembly {
            tstore(0, 1)
        }
        _;
        assembly {
            tstore(0, 0)
        }
    }

    /// Sweeps one deposit. Returns the deposit address, or address(0) if its sweep reverted.
    function sweep(address settlement, bytes32 salt, address[] calldata tokens) external locked returns (address deposit) {
        _setTokens(tokens);
        deposit = _sweep(_initCodeTemplate(), settlement, salt);
    }

    /// Sweeps many deposits (any mix of settlement addresses) of the same token list.
    function sweepBatch(Deposit[] calldata deposits, address[] calldata tokens) external locked {
        _setTokens(tokens);
        bytes memory initCode = _initCodeTemplate();
        for (uint256 i; i < deposits.length; ++i) {
            _sweep(initCode, deposits[i].settlement, deposits[i].salt);
        }
    }

    /// Read by the DepositSweeper constructor: the token list of the sweep in progress.
    function sweepTokens() external view returns (address[] memory tokens) {
        uint256 n;
        assembly {
            n := tload(1)
        }
        tokens = new address[](n);
        for (uint256 i; i < n; ++i) {
            address token;
            assembly {
                token := tload(add(i, 2))
            }
            tokens[i] = token;
        }
    }

    /// The deposit address of (settlement, salt); the same formula as predictDepositAddress in deploy.ts.
    function depositAddress(address settlement, bytes32 salt) external view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(DepositSweeper).creationCode, abi.encode(settlement)));
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, initCodeHash)))));
    }

    function _setTokens(address[] calldata tokens) private {
        uint256 n = tokens.length;
        assembly {
            tstore(1, n)
        }
        for (uint256 i; i < n; ++i) {
            address token = tokens[i];
            assembly {
                tstore(add(i, 2), token)
            }
        }
    }

    /// The sweeper's init code with a blank last word, where `_sweep` writes the settlement.
    function _initCodeTemplate() private pure returns (bytes memory) {
        return abi.encodePacked(type(DepositSweeper).creationCode, bytes32(0));
    }

    function _sweep(bytes memory initCode, address settlement, bytes32 salt) private returns (address deposit) {
        // Paying address(0) would burn native coin; refuse rather than sweep into nowhere.
        if (settlement == address(0)) revert ZeroSettlement();
        assembly {
            let len := mload(initCode)
            mstore(add(initCode, len), settlement) // the last word = abi.encode(settlement)
            deposit := create2(0, add(initCode, 0x20), len, salt)
        }
        if (deposit == address(0)) emit SweepFailed(settlement, salt);
    }
}
