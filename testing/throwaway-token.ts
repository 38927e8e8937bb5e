/**
 * TEST ONLY: ABI and bytecode of ./ThrowawayToken.sol (solc 0.8.37, optimizer 200, evmVersion
 * cancun), compiled once by hand. Used by the indexer tests and bench until shared/contracts
 * (TestUSD via ensureDeployed) is merged. Never used by product code.
 */
import type { Abi, Address, Hex, PublicClient, WalletClient } from "viem";

export const throwawayTokenAbi = [
  {
    "inputs": [
      {
        "internalType": "uint8",
        "name": "decimals_",
        "type": "uint8"
      }
    ],
    "stateMutability": "nonpayable",
    "type": "constructor"
  },
  {
    "anonymous": false,
    "inputs": [
      {
        "indexed": true,
        "internalType": "address",
        "name": "from",
        "type": "address"
      },
      {
        "indexed": true,
        "internalType": "address",
        "name": "to",
        "type": "address"
      },
      {
        "indexed": false,
        "internalType": "uint256",
        "name": "value",
        "type": "uint256"
      }
    ],
    "name": "Transfer",
    "type": "event"
  },
  {
    "inputs": [
      {
        "internalType": "address",
        "name": "",
        "type": "address"
      }
    ],
    "name": "balanceOf",
    "outputs": [
      {
        "internalType": "uint256",
        "name": "",
        "type": "uint256"
      }
    ],
    "stateMutability": "view",
    "type": "function"
  },
  {
    "inputs": [
      {
        "internalType": "address[]",
        "name": "tos",
        "type": "address[]"
      },
      {
        "internalType": "uint256",
        "name": "amount",
        "type": "uint256"
      }
    ],
    "name": "batchTransfer",
    "outputs": [],
    "stateMutability": "nonpayable",
    "type": "function"
  },
  {
    "inputs": [],
    "name": "decimals",
    "outputs": [
      {
        "internalType": "uint8",
        "name": "",
        "type": "uint8"
      }
    ],
    "stateMutability": "view",
    "type": "function"
  },
  {
    "inputs": [
      {
        "internalType": "address",
        "name": "to",
        "type": "address"
      },
      {
        "internalType": "uint256",
        "name": "amount",
        "type": "uint256"
      }
    ],
    "name": "mint",
    "outputs": [],
    "stateMutability": "nonpayable",
    "type": "function"
  },
  {
    "inputs": [],
    "name": "totalSupply",
    "outputs": [
      {
        "internalType": "uint256",
        "name": "",
        "type": "uint256"
      }
    ],
    "stateMutability": "view",
    "type": "function"
  },
  {
    "inputs": [
      {
        "internalType": "address",
        "name": "to",
        "type": "address"
      },
      {
        "internalType": "uint256",
        "name": "amount",
        "type": "uint256"
      }
    ],
    "name": "transfer",
    "outputs": [
      {
        "internalType": "bool",
        "name": "",
        "type": "bool"
      }
    ],
    "stateMutability": "nonpayable",
    "type": "function"
  }
] as const satisfies Abi;

export const throwawayTokenBytecode: Hex =
  "0x60a0604052348015600e575f5ffd5b50604051610481380380610481833981016040819052602b916035565b60ff16608052605a565b5f602082840312156044575f5ffd5b815160ff811681146053575f5ffd5b9392505050565b6080516104106100715f395f608501526104105ff3fe608060405234801561000f575f5ffd5b5060043610610060575f3560e01c806318160ddd14610064578063313ce5671461008057806340c10f19146100b957806370a08231146100ce57806383f12fec146100ed578063a9059cbb14610100575b5f5ffd5b61006d60015481565b6040519081526020015b60405180910390f35b6100a77f000000000000000000000000000000000000000000000000000000000000000081565b60405160ff9091168152602001610077565b6100cc6100c73660046102cf565b610123565b005b61006d6100dc3660046102f7565b5f6020819052908152604090205481565b6100cc6100fb366004610317565b6101a9565b61011361010e3660046102cf565b6101f2565b6040519015158152602001610077565b8060015f82825461013491906103a0565b90915550506001600160a01b0382165f90815260208190526040812080548392906101609084906103a0565b90915550506040518181526001600160a01b038316905f907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a35050565b5f5b828110156101ec576101e4338585848181106101c9576101c96103b3565b90506020020160208101906101de91906102f7565b84610208565b6001016101ab565b50505050565b5f6101fe338484610208565b5060015b92915050565b6001600160a01b0383165f908152602081905260408120805483929061022f9084906103c7565b90915550506001600160a01b0382165f908152602081905260408120805483929061025b9084906103a0565b92505081905550816001600160a01b0316836001600160a01b03167fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef836040516102a791815260200190565b60405180910390a3505050565b80356001600160a01b03811681146102ca575f5ffd5b919050565b5f5f604083850312156102e0575f5ffd5b6102e9836102b4565b946020939093013593505050565b5f60208284031215610307575f5ffd5b610310826102b4565b9392505050565b5f5f5f60408486031215610329575f5ffd5b833567ffffffffffffffff81111561033f575f5ffd5b8401601f8101861361034f575f5ffd5b803567ffffffffffffffff811115610365575f5ffd5b8660208260051b8401011115610379575f5ffd5b6020918201979096509401359392505050565b634e487b7160e01b5f52601160045260245ffd5b808201808211156102025761020261038c565b634e487b7160e01b5f52603260045260245ffd5b818103818111156102025761020261038c56fea2646970667358221220998358321c89ed553e3ec1c9779ada45b4bb4cbaa84f8d68b72e1cf4cfd2fd9264736f6c63430008250033";

/** Deploys a token with the given decimals; resolves to its address once mined. */
export async function deployThrowawayToken(
  publicClient: PublicClient,
  walletClient: WalletClient,
  decimals = 6,
): Promise<Address> {
  const hash = await walletClient.deployContract({
    abi: throwawayTokenAbi,
    bytecode: throwawayTokenBytecode,
    args: [decimals],
    account: walletClient.account!,
    chain: walletClient.chain ?? null,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
  if (!receipt.contractAddress) throw new Error("token deploy: no contract address");
  return receipt.contractAddress;
}
