// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title TestUSD — the sandbox stablecoin.
/// @notice A plain ERC-20 with 6 decimals and USDC's `Transfer(from, to, value)` event, so the
/// indexer and the sweeper treat it exactly like USDC. Only `minter` (the sandbox faucet) can
/// mint. The minter is a constructor argument, but deploy.ts always passes the same documented
/// dev-faucet address: the init code is then identical everywhere and the deterministic
/// deployer puts the token at the same address on every chain.
contract TestUSD is ERC20 {
    address public immutable minter;

    error NotMinter(address caller);

    constructor(address minter_) ERC20("Test USD", "tUSD") {
        minter = minter_;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function mint(address to, uint256 amount) external {
        if (msg.sender != minter) revert NotMinter(msg.sender);
        _mint(to, amount);
    }
}
