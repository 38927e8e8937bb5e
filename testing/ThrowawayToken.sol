// SPDX-License-Identifier: MIT
// Test-only ERC-20 for the indexer's tests and benchmark until shared/contracts lands.
// Not a product contract: anyone can mint, and batchTransfer exists to emit many
// Transfer events per transaction (backfill benchmark).
pragma solidity 0.8.37;

contract ThrowawayToken {
    event Transfer(address indexed from, address indexed to, uint256 value);

    uint8 public immutable decimals;
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;

    constructor(uint8 decimals_) {
        decimals = decimals_;
    }

    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function batchTransfer(address[] calldata tos, uint256 amount) external {
        for (uint256 i = 0; i < tos.length; i++) _move(msg.sender, tos[i], amount);
    }

    function _move(address from, address to, uint256 amount) internal {
        balanceOf[from] -= amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
