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

interface IDepositFactorySweep {
    function sweep(address settlement, bytes32 salt, address[] calldata tokens) external returns (address);
}

/// A hostile token, for tests only: its `transfer` tries to start another sweep from inside
/// a sweep (which, were it allowed, would swap the factory's token list for the rest of a batch).
contract HostileToken {
    mapping(address => uint256) public balanceOf;
    address public immutable factory;
    bool public reentered;

    constructor(address factory_) {
        factory = factory_;
    }

    function mint(address to, uint256 amount) external {
        balanceOf[to] += amount;
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        try IDepositFactorySweep(factory).sweep(address(this), bytes32(0), new address[](0)) {
            reentered = true;
        } catch {}
        return true;
    }
}
