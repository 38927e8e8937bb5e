// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// A deliberately awkward ERC-20, for tests only: `transfer` returns nothing (like USDT on
/// Ethereum), anyone may mint, and transfers can be frozen to make a sweep fail.
contract QuirkyToken {
    mapping(address => uint256) public balanceOf;
    bool public frozen;

    event Transfer(address indexed from, address indexed to, uint256 value);

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function setFrozen(bool frozen_) external {
        frozen = frozen_;
    }

    function transfer(address to, uint256 amount) external {
        require(!frozen, "frozen");
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        emit Transfer(msg.sender, to, amount);
    }
}
