// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title RefundVault — one merchant's refund balance in one environment.
/// @notice Holds whatever stablecoins are sent to it and pays out only when the RefundVaults that
/// created it says so. Its address is known before it exists (CREATE2 by RefundVaults, a salt per
/// merchant and environment, this constant init code), so a merchant can fund it first: only
/// RefundVaults can ever put code there, and the code it puts there obeys only RefundVaults.
contract RefundVault {
    address private immutable vaults;

    error NotVaults();
    error TransferFailed();

    constructor() {
        vaults = msg.sender;
    }

    /// Pays `amount` of `token` to `to`. Tokens that return nothing (USDT) and tokens that return
    /// true both count; false, or a revert, reverts.
    function pay(address token, address to, uint256 amount) external {
        if (msg.sender != vaults) revert NotVaults();
        (bool ok, bytes memory data) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || (data.length != 0 && !abi.decode(data, (bool))) || token.code.length == 0) revert TransferFailed();
    }
}

/// @title RefundVaults — the refund balances of every merchant, spent by the service's operator.
/// @notice `payBatch` pays a list of refunds in one transaction, each from its own vault (named by
/// its salt: a merchant and environment), creating a vault the first time it pays. Only the
/// operator (the service's relayer) may call it: a batch that mixes merchants still takes each
/// payment from its own merchant's vault, and nothing here can move one vault's money to
/// another's. The batch is all or nothing: one payment that cannot be made reverts it whole, so a
/// refund of two tokens never goes out half.
contract RefundVaults {
    struct Payment {
        bytes32 vault;
        address token;
        address to;
        uint256 amount;
    }

    address public immutable operator;

    event RefundPaid(bytes32 indexed vault, address indexed token, address indexed to, uint256 amount);

    error NotOperator();
    error ZeroOperator();

    constructor(address operator_) {
        if (operator_ == address(0)) revert ZeroOperator();
        operator = operator_;
    }

    /// Where the vault of `salt` is (or will be).
    function vaultOf(bytes32 salt) public view returns (address) {
        return address(uint160(uint256(keccak256(abi.encodePacked(bytes1(0xff), address(this), salt, keccak256(type(RefundVault).creationCode))))));
    }

    function payBatch(Payment[] calldata payments) external {
        if (msg.sender != operator) revert NotOperator();
        for (uint256 i; i < payments.length; ++i) {
            Payment calldata p = payments[i];
            address v = vaultOf(p.vault);
            if (v.code.length == 0) new RefundVault{salt: p.vault}();
            RefundVault(v).pay(p.token, p.to, p.amount);
            emit RefundPaid(p.vault, p.token, p.to, p.amount);
        }
    }
}
