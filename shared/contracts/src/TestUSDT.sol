// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title TestUSDT — the sandbox's second stablecoin, with Tether USD's quirks.
/// @notice A hand-written ERC-20 (6 decimals, standard `Transfer` and `Approval` events) that
/// behaves like Tether's USDT on Ethereum where that differs from a textbook token, so the
/// sandbox catches code that only works with USDC:
///
/// - `transfer`, `transferFrom` and `approve` return NOTHING (no return data at all), as USDT's
///   do: a caller that decodes a `bool` from the answer fails here as it would on Ethereum.
///   (OpenZeppelin's ERC20 returns `bool`, hence no OpenZeppelin here.)
/// - `approve` from one non-zero allowance to another non-zero one reverts, as USDT's does (its
///   guard against the approve/transferFrom race): set it to 0 first.
/// - No EIP-3009 (USDT has no transfer by signed authorization): paying is a plain transfer.
/// - An allowance of type(uint256).max is never spent, as in USDT.
///
/// Only `minter` (the sandbox faucet) can mint. As for TestUSD, deploy.ts always passes the same
/// dev-faucet address, so the init code, hence the deterministic-deployer address, is the same on
/// every chain. Nothing that identifies the token lives in storage (name and symbol are
/// constants, the minter an immutable): the Ethereum stand-in (testing/mainnet-standin.ts) copies
/// this runtime code to USDT's address with anvil_setCode, which copies no storage.
///
/// The reverts carry our own errors (USDT's carry no reason) so a test can tell which rule refused.
contract TestUSDT {
    string public constant name = "Test Tether USD";
    string public constant symbol = "tUSDT";
    uint8 public constant decimals = 6;

    address public immutable minter;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    error NotMinter(address caller);
    /// USDT's approve rule: a non-zero allowance changes only through 0.
    error AllowanceNotZero(address owner, address spender, uint256 current);

    constructor(address minter_) {
        minter = minter_;
    }

    function mint(address to, uint256 amount) external {
        if (msg.sender != minter) revert NotMinter(msg.sender);
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    /// Returns nothing, as USDT's. A short balance reverts (checked arithmetic).
    function transfer(address to, uint256 value) external {
        _transfer(msg.sender, to, value);
    }

    /// Returns nothing, as USDT's. A short allowance or balance reverts (checked arithmetic).
    function transferFrom(address from, address to, uint256 value) external {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _transfer(from, to, value);
    }

    /// Returns nothing, as USDT's; non-zero to non-zero reverts (set 0 first).
    function approve(address spender, uint256 value) external {
        uint256 current = allowance[msg.sender][spender];
        if (value != 0 && current != 0) revert AllowanceNotZero(msg.sender, spender, current);
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function _transfer(address from, address to, uint256 value) private {
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
