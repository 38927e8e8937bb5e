// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

/// The alternative not chosen (see shared/contracts/README.md), kept only to re-measure it:
/// a per-deposit OZ clone with the settlement in immutable args, deployed on its first sweep.
contract CloneWallet {
    function sweep(address[] calldata tokens) external {
        address settlement = address(bytes20(Clones.fetchCloneArgs(address(this))));
        for (uint256 i; i < tokens.length; ++i) _sweepToken(tokens[i], settlement);
        if (address(this).balance != 0) { (bool ok,) = settlement.call{value: address(this).balance}(""); require(ok); }
    }
    function _sweepToken(address token, address to) private {
        assembly ("memory-safe") {
            mstore(0x00, 0x70a08231)
            mstore(0x20, address())
            let ok := staticcall(gas(), token, 0x1c, 0x24, 0x00, 0x20)
            if iszero(and(ok, gt(returndatasize(), 0x1f))) { revert(0, 0) }
            let amount := mload(0x00)
            if amount {
                let m := mload(0x40)
                mstore(m, 0xa9059cbb)
                mstore(add(m, 0x20), to)
                mstore(add(m, 0x40), amount)
                ok := call(gas(), token, 0, add(m, 0x1c), 0x44, 0x00, 0x20)
                let returnedTrue := and(gt(returndatasize(), 0x1f), eq(mload(0x00), 1))
                if iszero(and(ok, or(returnedTrue, iszero(returndatasize())))) { revert(0, 0) }
            }
        }
    }
}

contract CloneFactory {
    struct Deposit { address settlement; bytes32 salt; }
    address public immutable impl = address(new CloneWallet());
    function sweepBatch(Deposit[] calldata ds, address[] calldata tokens) external {
        for (uint256 i; i < ds.length; ++i) _sweep(ds[i].settlement, ds[i].salt, tokens);
    }
    function sweep(address settlement, bytes32 salt, address[] calldata tokens) external { _sweep(settlement, salt, tokens); }
    function _sweep(address settlement, bytes32 salt, address[] calldata tokens) private {
        bytes memory args = abi.encodePacked(settlement);
        address w = Clones.predictDeterministicAddressWithImmutableArgs(impl, args, salt);
        if (w.code.length == 0) Clones.cloneDeterministicWithImmutableArgs(impl, args, salt);
        CloneWallet(w).sweep(tokens);
    }
    function depositAddress(address settlement, bytes32 salt) external view returns (address) {
        return Clones.predictDeterministicAddressWithImmutableArgs(impl, abi.encodePacked(settlement), salt);
    }
}
